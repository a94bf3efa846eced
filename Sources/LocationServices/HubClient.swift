import Geodesy
import LocationEngine
import LocationModel

/// What a hub tells one of its clients. Delivered on the hub's executor; clients hop to their own
/// thread (a `CLLocationManager` to its run loop) themselves.
package enum HubDelivery: Sendable, Equatable {
  /// New locations, oldest first.
  case locations([Fix])
  /// An error, with a message for people when the hub has one (what to configure, which file).
  case error(EngineError, message: String?)
  /// The app's authorization changed (or is being told for the first time).
  case authorization(AuthorizationSnapshot)
  /// Regions of a group changed state (sent to every client; each keeps its own groups' events).
  /// The new states are already committed to the store.
  case regionEvents(group: String, [RegionEvent])
  /// A region this client asked for is now monitored.
  case regionStarted(group: String, RegionSpec)
  /// A region this client asked for cannot be monitored.
  case regionFailed(group: String, identifier: String, RegionFailure)
  /// The answer to this client's `requestRegionState`.
  case regionState(group: String, RegionEvent)
  /// A heading for this client.
  case heading(DeliveredHeading)
  /// The magnetometer reads a field far from the Earth's: `CLError.headingFailure`, and the
  /// calibration question.
  case headingInterference(HeadingInterference)
  /// This client's deferred updates finished, after the held batch was delivered: nil when the
  /// distance or timeout was reached, else the `CLError.Code` raw value (11 to 15).
  case deferredFinished(Int?)
  /// This client's updates paused automatically (`locationManagerDidPauseLocationUpdates`).
  case paused
  /// This client's paused updates resumed on movement
  /// (`locationManagerDidResumeLocationUpdates`); the locations follow.
  case resumed
  /// The beacons of one of this client's ranged constraints now, closest first (`didRange`).
  case beacons(BeaconConstraint, [RangedBeacon])
  /// This client's ranging of a constraint failed and ended (`didFailRangingFor`).
  case rangingFailed(BeaconConstraint, EngineError)
  /// A visit began or ended (sent to every client; each manager's delegate hears `didVisit`).
  /// It is already committed wherever visits are kept for an absent app.
  case visit(Visit)
}

/// A consumer of a hub's deliveries.
///
/// Implement one of the two `hub(_:deliver:)` methods: the `LocationService` one to receive
/// deliveries from any service (an in-process `LocationHub` or a `DaemonClient`), or the
/// `LocationHub` one for a client that only ever runs inside a hub (the other is forwarded to it by
/// default).
package protocol HubClient: AnyObject, Sendable {
  /// Receives one delivery from a hub. Called on the hub's executor, in order; must not block.
  func hub(_ hub: LocationHub, deliver delivery: HubDelivery)
  /// Receives one delivery from a service. Called on the service's executor, in order; must not
  /// block.
  func hub(_ service: any LocationService, deliver delivery: HubDelivery)
  /// The region groups whose events this client reports (`manager`, `monitor:NAME`). A daemon
  /// client holds region events that were stored for the app while it was away until a client of
  /// their group is registered, so that they reach a delegate exactly once.
  var regionGroups: Set<String> { get }
  /// Goes through the work of a `locations` delivery of `fixes` and drops it, telling nobody:
  /// the wake-up before an epoch (`EpochLead`) rehearses the last epoch's delivery so that its
  /// code and data are fresh in the processor's caches when the next one comes. Must change
  /// nothing a delivery or a caller can see. Does nothing by default.
  func rehearse(_ fixes: [Fix])
}
