import Foundation
internal import Geodesy
internal import LocationEngine
internal import LocationModel
import LocationServices
import Synchronization

/// A structure that contains the location information the framework delivers with each update.
public struct CLLocationUpdate: Sendable {
  /// The user's location, if available.
  public let location: CLLocation?
  /// A Boolean value that indicates whether the user is stationary.
  public let isStationary: Bool
  /// A Boolean value that indicates whether the device is stationary.
  public var stationary: Bool { isStationary }
  /// Whether the app's authorization was denied.
  public let authorizationDenied: Bool
  /// Whether location services are off for the whole device.
  public let authorizationDeniedGlobally: Bool
  /// Whether an authorization request is in progress: a person is being asked about the app
  /// (through `locationd`'s agent); an update with this flag carries no location.
  public let authorizationRequestInProgress: Bool
  /// Whether authorization is restricted.
  public let authorizationRestricted: Bool
  /// Whether the app's use of location is insufficiently "in use". Linux has no such notion: `false`.
  public let insufficientlyInUse: Bool
  /// Whether the location is unavailable right now.
  public let locationUnavailable: Bool
  /// Whether the app has only reduced accuracy.
  public let accuracyLimited: Bool
  /// Whether a service session is required. Linux has none: `false`.
  public let serviceSessionRequired: Bool

  init(
    location: CLLocation? = nil, isStationary: Bool = false, authorizationDenied: Bool = false,
    authorizationDeniedGlobally: Bool = false, authorizationRequestInProgress: Bool = false,
    authorizationRestricted: Bool = false, locationUnavailable: Bool = false,
    accuracyLimited: Bool = false
  ) {
    self.location = location
    self.isStationary = isStationary
    self.authorizationDenied = authorizationDenied
    self.authorizationDeniedGlobally = authorizationDeniedGlobally
    self.authorizationRequestInProgress = authorizationRequestInProgress
    self.authorizationRestricted = authorizationRestricted
    self.insufficientlyInUse = false
    self.locationUnavailable = locationUnavailable
    self.accuracyLimited = accuracyLimited
    self.serviceSessionRequired = false
  }

  /// Values for indicating the kind of updates the framework delivers.
  public enum LiveConfiguration: Sendable, Hashable {
    /// Positioning for activities that one of the other activity types doesn't cover.
    case `default`
    /// Positioning for activities in the air.
    case airborne
    /// Positioning for an automobile following a road network.
    case automotiveNavigation
    /// Positioning for dedicated fitness sessions.
    case fitness
    /// Positioning for transportation that doesn't, or may not, adhere to roads.
    case otherNavigation
  }

  /// Tells Core Location to start delivering the location updates it produces for the configuration
  /// you specify.
  ///
  /// Updates start when iteration starts and stop when the iterator is released or its task is
  /// cancelled. Buffering: the sequence keeps the newest update only; a consumer slower than the
  /// source sees the latest location, never a backlog. When every source has ended for good (a
  /// replayed track without `loop`), the sequence finishes.
  public static func liveUpdates(_ configuration: LiveConfiguration = .default) -> Updates {
    Updates(configuration: configuration, environment: HubEnvironment.current)
  }

  /// A structure that represents an asynchronous sequence of location updates.
  public struct Updates: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = CLLocationUpdate

    let configuration: LiveConfiguration
    let environment: HubEnvironment

    /// Creates the iterator, which starts the updates.
    public func makeAsyncIterator() -> Iterator {
      let (stream, continuation) = AsyncStream.makeStream(
        of: CLLocationUpdate.self, bufferingPolicy: .bufferingNewest(1))
      let client = LiveUpdatesClient(
        continuation: continuation,
        stationarity: LiveUpdateStationarity(activity: configuration.activity))
      let hub = environment.hub
      let id = hub.register(client)
      continuation.onTermination = { _ in
        hub.send(.stopUpdates(id))
        hub.unregister(id)
      }
      hub.startUpdates(
        id, UpdateRequest(desiredAccuracy: kCLLocationAccuracyBest, distanceFilter: -1))
      return Iterator(base: stream.makeAsyncIterator())
    }

    /// The type of the update's iterator.
    public struct Iterator: AsyncIteratorProtocol {
      var base: AsyncStream<CLLocationUpdate>.Iterator

      /// The next update, or `nil` when the sequence has finished.
      public mutating func next() async -> CLLocationUpdate? {
        await base.next()
      }
    }
  }
}

extension CLLocationUpdate.LiveConfiguration {
  /// The stationary detector's activity for this configuration.
  var activity: ActivityType {
    switch self {
    case .default: return .other
    case .airborne: return .airborne
    case .automotiveNavigation: return .automotiveNavigation
    case .fitness: return .fitness
    case .otherNavigation: return .otherNavigation
    }
  }
}

extension CLActivityType {
  /// The stationary detector's activity for this type (the same table as `LiveConfiguration`).
  var activity: ActivityType {
    switch self {
    case .other: return .other
    case .airborne: return .airborne
    case .automotiveNavigation: return .automotiveNavigation
    case .fitness: return .fitness
    case .otherNavigation: return .otherNavigation
    }
  }
}

/// The hub client behind a live-updates sequence; the engine's `LiveUpdateStationarity` says
/// which updates are stationary and which are held back.
private final class LiveUpdatesClient: HubClient {
  private let continuation: AsyncStream<CLLocationUpdate>.Continuation
  private let stationarity: Mutex<LiveUpdateStationarity>

  init(
    continuation: AsyncStream<CLLocationUpdate>.Continuation,
    stationarity: LiveUpdateStationarity
  ) {
    self.continuation = continuation
    self.stationarity = Mutex(stationarity)
  }

  func hub(_ hub: any LocationService, deliver delivery: HubDelivery) {
    let limited = hub.authorization.isReduced
    switch delivery {
    case .locations(let fixes):
      for fix in fixes {
        switch stationarity.withLock({ $0.receive(fix) }) {
        case .deliver(let isStationary):
          LatencyTrace.mark(.app, fixTime: fix.time)
          continuation.yield(
            CLLocationUpdate(
              location: CLLocation(fix: fix), isStationary: isStationary,
              accuracyLimited: limited))
        case .holdBack:
          continue
        }
      }
    case .error(.sourcesEnded, _):
      continuation.finish()
    case .error(.denied, _):
      let snapshot = hub.authorization
      continuation.yield(
        CLLocationUpdate(
          authorizationDenied: snapshot.servicesEnabled,
          authorizationDeniedGlobally: !snapshot.servicesEnabled))
    case .error(.locationUnknown, _):
      continuation.yield(CLLocationUpdate(locationUnavailable: true, accuracyLimited: limited))
    case .authorization(let snapshot):
      if snapshot.requestInProgress {
        continuation.yield(CLLocationUpdate(authorizationRequestInProgress: true))
      }
    case .regionEvents, .regionStarted, .regionFailed, .regionState, .heading,
      .headingInterference, .deferredFinished, .paused, .resumed, .visit, .beacons, .rangingFailed,
      .error(.rangingUnavailable, _):
      break
    }
  }
}
