import Geodesy
import LocationModel

/// Identifies one client of the engine: a `CLLocationManager`, a live-updates stream or a daemon
/// connection.
package struct ClientID: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The number behind the identifier; unique within one engine.
  package let rawValue: Int

  /// Creates an identifier.
  package init(_ rawValue: Int) { self.rawValue = rawValue }

  package static func < (lhs: ClientID, rhs: ClientID) -> Bool { lhs.rawValue < rhs.rawValue }

  package var description: String { "client \(rawValue)" }
}

/// What one running source tells the engine about itself.
package struct SourceInfo: Sendable, Equatable {
  /// The source's URL.
  package var name: String
  /// The best horizontal accuracy (68 %, metres) this source can produce; `.infinity` for a source
  /// whose every fix is as good as it will get (a replayed recording).
  package var nominalAccuracy: Double
  /// Its power cost while running: 0 none (a file, a recording), 1 low (GeoClue, a compass),
  /// 2 high (a GNSS receiver). Only high-power sources are switched off to save power.
  package var power: Int
  /// Whether it gives locations (a compass gives headings only).
  package var producesLocation: Bool

  /// Creates a description.
  package init(name: String, nominalAccuracy: Double, power: Int = 0, producesLocation: Bool = true)
  {
    self.name = name
    self.nominalAccuracy = nominalAccuracy
    self.power = power
    self.producesLocation = producesLocation
  }

  /// The power cost from which a source is switched off between uses (a GNSS receiver).
  package static let highPower = 2
}

/// Errors the engine reports to clients; the public layer maps them to `CLError`.
package enum EngineError: Sendable, Equatable {
  /// No location could be obtained right now (`CLError.locationUnknown`); the engine keeps trying.
  case locationUnknown
  /// The app is not authorized or location services are off (`CLError.denied`); updates stop.
  case denied
  /// Every source has ended for good (a replayed track without looping reached its end).
  case sourcesEnded
  /// No source hears beacons (`CLError.rangingUnavailable`): ranging ended.
  case rangingUnavailable
}

/// Timers the engine arms; the runtime fires them back as `EngineEvent.timerFired`.
package enum EngineTimer: Hashable, Sendable {
  /// The deadline of a client's `requestLocation`.
  case requestTimeout(ClientID)
  /// The timeout of a client's deferred updates.
  case deferralDeadline(ClientID)
  /// The low-rate movement check of a client whose updates paused (`AutoPause`).
  case pauseCheck(ClientID)
  /// The next wake of the duty-cycled source for a client's significant-change monitoring.
  case dutyWake(ClientID)
  /// The time allowed for one duty-cycle burst to give a fix.
  case dutyGiveUp(ClientID)
  /// The next wake of the duty-cycled source for the app's visit monitoring.
  case visitWake
  /// The time allowed for one visit-monitoring burst to give a usable fix.
  case visitGiveUp
  /// The once-a-second tick of beacon ranging and beacon regions.
  case beaconTick
}

/// Something that happened, handed to `LocationEngine.handle(_:at:)`.
package enum EngineEvent: Sendable {
  /// A client appeared.
  case addClient(ClientID)
  /// A client went away; everything it asked for ends.
  case removeClient(ClientID)
  /// `startUpdatingLocation`.
  case startUpdates(ClientID, UpdateRequest)
  /// A change of `desiredAccuracy` or `distanceFilter` while running.
  case changeRequest(ClientID, UpdateRequest)
  /// `stopUpdatingLocation` (also cancels a pending `requestLocation`).
  case stopUpdates(ClientID)
  /// `requestLocation`.
  case requestLocation(ClientID, UpdateRequest)
  /// A fix from a source.
  case fix(Fix)
  /// The running sources changed (started, stopped, or their nominal accuracy changed).
  case sourcesChanged([SourceInfo])
  /// A source failed; the runtime retries it.
  case sourceFailed(source: String, reason: String)
  /// Every source has ended for good.
  case sourcesEnded
  /// The only sources left refused this app (GeoClue said access denied): updates stop with
  /// `denied`, as when authorization is withdrawn, but the app's stored authorization is unchanged.
  case sourcesDenied
  /// A timer armed by an earlier effect fired.
  case timerFired(EngineTimer)
  /// The app's authorization (and the global services switch) allows location, or not; headings,
  /// or not (`AuthorizationSnapshot.allowsHeadings`); and, for an app with reduced accuracy, the
  /// reduction its locations get: its regions are then not evaluated and its true heading is
  /// derived at the reduced location (issue 14, F3).
  /// `fullAccuracy` is false for an app with reduced accuracy in every mode (an embedded hub has
  /// no reduction to apply, but beacons are still refused, as on Apple platforms).
  case authorization(
    allowed: Bool, headings: Bool = true, reduction: ReducedAccuracy? = nil,
    fullAccuracy: Bool = true)
  /// `startMonitoring(for:)` or `CLMonitor.add`: monitor a region in a group ("manager" for the
  /// app's `CLLocationManager` regions, "monitor:NAME" for a `CLMonitor`), replacing any region of
  /// that identifier, starting in `initialState` (`CLMonitor`'s `assuming:`; `.unknown` for
  /// `startMonitoring`). `requester` is told that monitoring started or failed.
  case addRegion(group: String, RegionSpec, initialState: RegionState, requester: ClientID?)
  /// Regions restored from the store at launch, with their persisted states.
  case restoreRegions(group: String, [RegionSpec], [RegionState])
  /// `stopMonitoring(for:)` or `CLMonitor.remove`.
  case removeRegion(group: String, identifier: String)
  /// `requestState(for:)`: the requester is told the region's current state.
  case requestRegionState(ClientID, group: String, identifier: String)
  /// A heading sample from a source.
  case heading(HeadingSample)
  /// `startUpdatingHeading`, with the client's `headingFilter` and `headingOrientation`.
  case startHeading(ClientID, filter: Double, orientation: HeadingOrientation)
  /// A change of `headingFilter` or `headingOrientation`.
  case changeHeading(ClientID, filter: Double, orientation: HeadingOrientation)
  /// `stopUpdatingHeading`.
  case stopHeading(ClientID)
  /// `allowDeferredLocationUpdates(untilTraveled:timeout:)`.
  case allowDeferred(ClientID, distance: Double, timeout: Double)
  /// `disallowDeferredLocationUpdates()`.
  case disallowDeferred(ClientID)
  /// `startMonitoringSignificantLocationChanges()`.
  case startSignificantChanges(ClientID)
  /// `stopMonitoringSignificantLocationChanges()`.
  case stopSignificantChanges(ClientID)
  /// `startMonitoringVisits()`: visits are monitored for the app (every manager hears them);
  /// `requester` is told `denied` when the app may not have locations now.
  case startVisits(requester: ClientID?)
  /// `stopMonitoringVisits()`: for the app.
  case stopVisits
  /// An iBeacon advertisement from a source.
  case advertisement(BeaconAdvertisement)
  /// `startRangingBeacons(satisfying:)`: the client hears the beacons of the constraint once a
  /// second, or `rangingFailed` when the app may not range.
  case startRanging(ClientID, BeaconConstraint)
  /// `stopRangingBeacons(satisfying:)`.
  case stopRanging(ClientID, BeaconConstraint)
}

/// What the runtime must do after an event. Effects are applied in order, outside any lock.
///
/// The cases with large payloads are `indirect`, so that an effect is a few words: a fix makes one
/// `deliverLocations` per client (hundreds in a daemon), each copied into and out of the array.
package enum EngineEffect: Sendable, Equatable {
  /// Deliver these locations, oldest first, to a client.
  case deliverLocations(ClientID, [Fix])
  /// Report an error to a client.
  case deliverError(ClientID, EngineError)
  /// Run the sources needed for this accuracy (metres; negative: best), or stop them all (`nil`).
  case demandSources(accuracy: Double?)
  /// Arm (or re-arm) a timer at a monotonic deadline.
  case armTimer(EngineTimer, deadline: Double)
  /// Cancel a timer.
  case cancelTimer(EngineTimer)
  /// Persist this fix as the last known location.
  indirect case saveLastKnownLocation(Fix)
  /// A region is now monitored: persist it (with its state), then tell the requester.
  indirect case regionAdded(group: String, RegionSpec, state: RegionState, requester: ClientID?)
  /// A region could not be monitored; tell the requester.
  indirect case regionRejected(
    group: String, identifier: String, RegionFailure, requester: ClientID?)
  /// A region is no longer monitored: delete it from the store.
  case regionRemoved(group: String, identifier: String)
  /// Regions changed state: persist the new states, then tell every client of the group.
  case regionEvents(group: String, [RegionEvent])
  /// The answer to `requestRegionState`, for the requester only.
  indirect case regionStateReply(ClientID, group: String, RegionEvent)
  /// Deliver a heading to a client.
  indirect case deliverHeading(ClientID, DeliveredHeading)
  /// An interference episode began for a client: `CLError.headingFailure` and the calibration
  /// question.
  indirect case headingInterference(ClientID, HeadingInterference)
  /// Run (or stop) the sources that produce headings.
  case demandHeading(Bool)
  /// A client's deferred updates finished (nil: the distance or the timeout was reached), after
  /// any held batch was delivered.
  case deferredFinished(ClientID, DeferredUpdates.Failure?)
  /// A client's updates paused automatically (`locationManagerDidPauseLocationUpdates`).
  case pauseUpdates(ClientID)
  /// A paused client's updates resumed on movement (`locationManagerDidResumeLocationUpdates`);
  /// the fix that showed the movement follows.
  case resumeUpdates(ClientID)
  /// A visit began or ended (`VisitDetector`): persist it where events are kept for an absent
  /// app, then tell every client (each manager's delegate hears `didVisit`).
  indirect case visit(Visit)
  /// Visit monitoring was turned on or off for the app: persist it (a daemon keeps detecting while
  /// the app is away, and a restart resumes it).
  case visitMonitoring(Bool)
  /// The beacons of a client's ranged constraint now, closest first (`didRange`).
  indirect case deliverBeacons(ClientID, BeaconConstraint, [RangedBeacon])
  /// A client's ranging of a constraint failed and ended (`didFailRangingFor`).
  indirect case rangingFailed(ClientID, BeaconConstraint, EngineError)
  /// Run (or stop) the sources that produce beacon advertisements.
  case demandBeacons(Bool)
}
