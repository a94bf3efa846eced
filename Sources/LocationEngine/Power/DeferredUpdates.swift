import Geodesy
import LocationModel

/// `allowDeferredLocationUpdates(untilTraveled:timeout:)` for one client, as a value-type state
/// machine with time passed in.
///
/// Preconditions, checked in this order when deferral is asked for (Apple's documentation; the
/// error goes to `locationManager(_:didFinishDeferredUpdatesWithError:)` at once):
/// 1. location updates are running and not paused, else ``Failure/deferredNotUpdatingLocation``;
/// 2. a GNSS source is available, else ``Failure/deferredFailed``;
/// 3. `desiredAccuracy` is `kCLLocationAccuracyBest` or `kCLLocationAccuracyBestForNavigation`
///    (negative), else ``Failure/deferredAccuracyTooLow``;
/// 4. `distanceFilter` is `kCLDistanceFilterNone` (any value ≤ 0, the engine's "no filter"), else
///    ``Failure/deferredDistanceFiltered``;
/// 5. the distance and timeout are not negative or NaN, else ``Failure/deferredFailed`` (our rule).
///
/// A rejected request leaves a deferral already in progress untouched (our rule), so each call
/// still gets exactly one finish.
///
/// While deferring, fixes are held. Delivery resumes when either criterion is met:
/// - distance: the straight-line geodesic distance from the *current location when deferral
///   began* (the last fix seen before the call; the first held fix if there was none) reaches
///   `distance`. Apple says "the distance from the current location"; a straight line rather than
///   the sum of steps keeps receiver noise of a still device from adding up to a false distance;
/// - timeout: `timeout` seconds have passed since the call (a fix at or after the deadline, or the
///   caller's timer via ``tick(at:)``).
///
/// `CLLocationDistanceMax` and `CLTimeIntervalMax` (`Double.greatestFiniteMagnitude`), and
/// infinity, mean "no limit". When a criterion is met, the held fixes are delivered as one batch
/// (`didUpdateLocations`), then the deferral finishes with no error.
///
/// Ending early (our rule for the batch, Apple's code for the error): ``disallow()``, a new
/// ``allow(untilTraveled:timeout:conditions:at:)`` over a running deferral, and stopping updates
/// (``stopUpdating()``) each deliver the held batch first (nothing held is lost) and then finish
/// with ``Failure/deferredCanceled`` ("your app or the location manager canceled the request").
///
/// Apple defers only while the app is in the background; a Linux process has no foreground, so
/// deferral always holds fixes.
package struct DeferredUpdates: Sendable, Equatable {
  /// The reasons a deferral fails or ends, with `CLError.Code` raw values.
  package enum Failure: Int, Sendable, Equatable, CaseIterable {
    /// Deferral is unavailable (no GNSS source) or the request was malformed.
    case deferredFailed = 11
    /// Updates are not running or are paused.
    case deferredNotUpdatingLocation = 12
    /// `desiredAccuracy` is not Best or BestForNavigation.
    case deferredAccuracyTooLow = 13
    /// `distanceFilter` is not `kCLDistanceFilterNone`.
    case deferredDistanceFiltered = 14
    /// The app or the engine ended the deferral.
    case deferredCanceled = 15
  }

  /// The client's settings at the time of the request.
  package struct Conditions: Sendable, Equatable {
    /// Location updates are running (`startUpdatingLocation`).
    package var isUpdating: Bool
    /// Updates are paused (auto-pause).
    package var isPaused: Bool
    /// A GNSS source is available.
    package var hasGNSS: Bool
    /// `desiredAccuracy`, metres; negative for Best and BestForNavigation.
    package var desiredAccuracy: Double
    /// `distanceFilter`, metres; ≤ 0 for none.
    package var distanceFilter: Double

    /// Creates the conditions.
    package init(
      isUpdating: Bool, isPaused: Bool = false, hasGNSS: Bool, desiredAccuracy: Double,
      distanceFilter: Double
    ) {
      self.isUpdating = isUpdating
      self.isPaused = isPaused
      self.hasGNSS = hasGNSS
      self.desiredAccuracy = desiredAccuracy
      self.distanceFilter = distanceFilter
    }
  }

  /// Where a deferral's distance counts from: the client's current location when it started (the
  /// last one delivered to it), else the first valid fix it holds.
  package struct Origin: Sendable, Equatable {
    package var latitude: Double
    package var longitude: Double

    init(_ fix: Fix) {
      latitude = fix.latitude
      longitude = fix.longitude
    }
  }

  /// The states.
  package enum State: Sendable, Equatable {
    /// Fixes pass straight through.
    case idle
    /// Fixes are held until `distance` from `origin` or the `deadline`.
    case deferring(distance: Double, deadline: Double, origin: Origin?, held: [Fix])
  }

  /// What the caller does after an event.
  package enum Action: Sendable, Equatable {
    /// Nothing.
    case none
    /// Deliver this fix as usual (not deferring).
    case deliver(Fix)
    /// The fix is held.
    case hold
    /// Deferral started; arm a timer for the deadline if it is finite (else nil).
    case started(deadline: Double?)
    /// Deliver `batch` in one `didUpdateLocations` call if it is not empty, then call
    /// `didFinishDeferredUpdatesWithError` with `error` (nil: the criteria were met). When this
    /// answers a new request, the new deferral has started (re-arm the timer from ``deadline``).
    case finish(batch: [Fix], error: Failure?)
    /// The request was rejected: call `didFinishDeferredUpdatesWithError` with the error.
    case reject(Failure)
  }

  /// The current state.
  package private(set) var state: State = .idle
  private var lastSeen: Origin?

  /// Creates the machine, not deferring.
  package init() {}

  /// The client's current location, delivered without this machine (before any fix reached it):
  /// where a deferral started now counts its distance from.
  mutating func noteDelivered(_ origin: Origin) {
    lastSeen = origin
  }

  /// Whether fixes are being held.
  package var isDeferring: Bool {
    switch state {
    case .idle: return false
    case .deferring: return true
    }
  }

  /// The running deferral's deadline when finite.
  package var deadline: Double? {
    switch state {
    case .idle: return nil
    case .deferring(_, let deadline, _, _): return deadline.isFinite ? deadline : nil
    }
  }

  /// True for `CLLocationDistanceMax`, `CLTimeIntervalMax` and infinity: "no limit".
  package static func isUnlimited(_ value: Double) -> Bool {
    value >= .greatestFiniteMagnitude
  }

  /// `allowDeferredLocationUpdates(untilTraveled:timeout:)`.
  ///
  /// - Parameters:
  ///   - distance: Metres to travel; `CLLocationDistanceMax` for no limit.
  ///   - timeout: Seconds; `CLTimeIntervalMax` for no limit.
  ///   - conditions: The client's settings now.
  ///   - time: The current instant, seconds on the caller's monotonic clock.
  /// - Returns: ``Action/reject(_:)``, ``Action/started(deadline:)``, or, over a running
  ///   deferral, ``Action/finish(batch:error:)`` with ``Failure/deferredCanceled`` for the old one.
  package mutating func allow(
    untilTraveled distance: Double, timeout: Double, conditions: Conditions, at time: Double
  ) -> Action {
    if let failure = Self.precondition(distance, timeout, conditions) { return .reject(failure) }
    let limit = Self.isUnlimited(distance) ? Double.infinity : distance
    let deadline = Self.isUnlimited(timeout) ? Double.infinity : time + timeout
    let fresh = State.deferring(distance: limit, deadline: deadline, origin: lastSeen, held: [])
    switch state {
    case .idle:
      state = fresh
      return .started(deadline: deadline.isFinite ? deadline : nil)
    case .deferring(_, _, _, let held):
      state = fresh
      return .finish(batch: held, error: .deferredCanceled)
    }
  }

  /// `disallowDeferredLocationUpdates()`: the held batch is delivered, then the deferral finishes
  /// with ``Failure/deferredCanceled``.
  ///
  /// - Returns: ``Action/finish(batch:error:)``, or ``Action/none`` when not deferring.
  package mutating func disallow() -> Action {
    cancel()
  }

  /// Location updates stopped (`stopUpdatingLocation()`, or an automatic pause): as
  /// ``disallow()``.
  ///
  /// - Returns: ``Action/finish(batch:error:)``, or ``Action/none`` when not deferring.
  package mutating func stopUpdating() -> Action {
    lastSeen = nil
    return cancel()
  }

  /// A fix arrived for this client.
  ///
  /// - Parameters:
  ///   - fix: The fix.
  ///   - time: The current instant, seconds.
  /// - Returns: ``Action/deliver(_:)`` when not deferring, ``Action/hold``, or
  ///   ``Action/finish(batch:error:)`` when this fix meets a criterion (it is the batch's last).
  package mutating func fix(_ fix: Fix, at time: Double) -> Action {
    if fix.hasValidCoordinate { lastSeen = Origin(fix) }
    switch state {
    case .idle:
      return .deliver(fix)
    case .deferring(let distance, let deadline, let origin, var held):
      held.append(fix)
      let start = origin ?? held.first { $0.hasValidCoordinate }.map(Origin.init)
      var travelled = 0.0
      if let start, fix.hasValidCoordinate {
        travelled = Geodesic.wgs84.distance(
          latitude1: start.latitude, longitude1: start.longitude,
          latitude2: fix.latitude, longitude2: fix.longitude)
      }
      if travelled >= distance || time >= deadline {
        state = .idle
        return .finish(batch: held, error: nil)
      }
      state = .deferring(distance: distance, deadline: deadline, origin: start, held: held)
      return .hold
    }
  }

  /// The deadline timer fired.
  ///
  /// - Parameter time: The current instant, seconds.
  /// - Returns: ``Action/finish(batch:error:)`` with no error once the deadline has passed (the
  ///   batch may be empty); ``Action/none`` otherwise.
  package mutating func tick(at time: Double) -> Action {
    switch state {
    case .idle:
      return .none
    case .deferring(_, let deadline, _, let held):
      guard time >= deadline else { return .none }
      state = .idle
      return .finish(batch: held, error: nil)
    }
  }

  private mutating func cancel() -> Action {
    switch state {
    case .idle:
      return .none
    case .deferring(_, _, _, let held):
      state = .idle
      return .finish(batch: held, error: .deferredCanceled)
    }
  }

  private static func precondition(
    _ distance: Double, _ timeout: Double, _ conditions: Conditions
  ) -> Failure? {
    if !conditions.isUpdating || conditions.isPaused { return .deferredNotUpdatingLocation }
    if !conditions.hasGNSS { return .deferredFailed }
    if !(conditions.desiredAccuracy < 0) { return .deferredAccuracyTooLow }
    if conditions.distanceFilter > 0 { return .deferredDistanceFiltered }
    if !(distance >= 0) || !(timeout >= 0) { return .deferredFailed }
    return nil
  }
}
