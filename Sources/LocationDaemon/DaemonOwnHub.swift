import LocationEngine
import LocationModel
import LocationServices
import LocationSources

extension LocationHub {
  /// A hub for one of the daemon's own requests (`DevicePublisher`, `TrackRecorder`): the daemon
  /// asks its sources as an app of its own would, under `app`, authorized always by the
  /// configuration (kept in memory), over the source pool's relays.
  /// - Parameters:
  ///   - app: The daemon's own app identifier (`locationd:…`).
  ///   - sources: The pool's relays.
  ///   - clock: The daemon's clock; nil: real time.
  ///   - reduced: The reduction the hub applies (reduced accuracy); nil: full accuracy.
  static func daemonOwn(
    app: String, sources: Sources, clock: (any HubClock)?, reduced: ReducedAccuracy?
  ) -> LocationHub {
    let persistence = MemoryPersistence()
    var authorization = AuthorizationSnapshot(status: .authorizedAlways)
    if reduced != nil { authorization.accuracy = .reducedAccuracy }
    persistence.setAuthorization(authorization, app: app)
    return LocationHub(
      app: app, sources: sources, persistence: persistence, policy: nil, clock: clock,
      reducer: reduced)
  }
}
