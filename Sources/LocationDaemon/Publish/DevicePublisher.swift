import Foundation
import LocationEngine
import LocationFormats
import LocationModel
import LocationProtocol
import LocationServices
import LocationSources
import LocationStore
import Synchronization

/// The device's own positions, published over MQTT in OwnTracks' format when the machine's owner
/// configured `[publish]` in `locationd.conf` (issue 18).
///
/// The daemon asks its sources for locations as an app of its own would (`locationd:publish`,
/// authorized always by the configuration, a hub over the source pool's relays): updates with
/// the section's `minimum-distance` as the distance filter; a location is published when
/// `minimum-interval` has also passed since the last one. With `approximate = yes` the hub
/// applies the daemon's reduction (the snapped location an approximate app gets), so only that
/// leaves the machine. Each location becomes an OwnTracks `location` message (retained, as
/// OwnTracks' apps publish it) committed to the outbox first (`OutboxPublisher`); the connection
/// carries a last will (`lwt`) with the time it was made.
///
/// The hub's delivery only notes which locations are due and hands them to a queue of the
/// publisher's own (``positions``), which encodes and commits them in order: the publisher's hub
/// runs on the pool's fan-out, usually before the apps' (it subscribes when the daemon starts),
/// and a commit waits for the disk (`synchronous=FULL`, an `fsync`), which must not stand between
/// the receiver's fix and every app (issue 19). ``stop()`` commits what is queued first.
final class DevicePublisher: HubClient, @unchecked Sendable {
  // Safe: `state` is behind a lock; the rest is set once.
  /// The app identifier the daemon's own requests are made under.
  static let app = "locationd:publish"

  let settings: PublishSettings
  let outbox: OutboxPublisher
  /// The apps whose regions and region events are published (`publish-regions = yes`).
  let regionApps: Set<String>
  let store: LocationStore
  let reducer: ReducedAccuracy
  /// Where the `waypoints` list is made, after removals (`scheduleWaypointList`).
  private let listQueue = DispatchQueue(label: "locationd.publish.waypoints")
  private let listPending = Mutex(false)
  /// Where due locations are encoded and committed to the outbox, in order, off the hub's
  /// delivery.
  let positions = DispatchQueue(label: "locationd.publish.positions")
  private let hub: LocationHub
  private let state = Mutex<(client: ClientID?, lastTime: Double?)>((nil, nil))

  var regionGroups: Set<String> { [] }

  /// Creates the publisher (nothing runs before `start`).
  /// - Throws: `DaemonConfigurationError` for unreadable credentials or refused TLS settings.
  init(
    settings: PublishSettings, store: LocationStore, sources: LocationHub.Sources,
    clock: (any HubClock)?, reducer: ReducedAccuracy, daemonUID: uid_t,
    regionApps: Set<String> = []
  ) throws(DaemonConfigurationError) {
    self.settings = settings
    self.regionApps = regionApps
    self.store = store
    self.reducer = reducer
    let credentials = try settings.credentials(daemonUID: daemonUID)
    var mqtt = MQTTClient.Configuration(
      host: settings.host, port: Int32(settings.port),
      clientID: "locationd-\(ProcessInfo.processInfo.hostName)-\(settings.effectiveTrackerID)",
      username: credentials?.0, password: credentials?.1)
    if settings.tls {
      mqtt.tls = .init(
        caFile: settings.caFile ?? OwnTracksSubscription.systemAuthorities,
        certificateFile: settings.certificateFile, keyFile: settings.keyFile)
    }
    let will = OwnTracksMessage.lastWill(
      OwnTracksLastWill(timestamp: Int(Date().timeIntervalSince1970)))
    if let payload = try? will.encoded() {
      mqtt.will = .init(topic: settings.topic, payload: Array(payload.utf8), qos: settings.qos)
    }
    mqtt.cleanSession = false
    do {
      outbox = try OutboxPublisher(
        store: store, mqtt: mqtt, outboxLimit: settings.outboxLimit, qos: settings.qos)
    } catch {
      throw DaemonConfigurationError(message: "[publish]: \(error.message)")
    }
    hub = .daemonOwn(
      app: Self.app, sources: sources, clock: clock,
      reduced: settings.approximate ? reducer : nil)
  }

  /// What `locationctl status` shows.
  var daemonStatus: DaemonPublishStatus {
    let status = outbox.status
    return DaemonPublishStatus(
      broker: status.broker, topic: settings.topic, connected: status.connected,
      depth: status.depth, acknowledged: status.acknowledged, thinned: status.thinned,
      lastError: status.lastError)
  }

  /// Connects to the broker and asks the sources for locations.
  func start() {
    outbox.start()
    submitWaypointList()
    let id = hub.register(self)
    state.withLock { $0.client = id }
    hub.startUpdates(
      id,
      UpdateRequest(
        desiredAccuracy: settings.approximate ? 3000 : -1,
        distanceFilter: settings.minimumDistance > 0 ? settings.minimumDistance : -1))
    DaemonLog.write(
      "publish: positions to \(settings.tls ? "mqtts" : "mqtt")://\(settings.host):"
        + "\(settings.port) on \(settings.topic)\(settings.approximate ? " (approximate)" : "")"
        + (regionApps.isEmpty
          ? "" : "; regions of \(regionApps.sorted().joined(separator: ", "))"))
  }

  /// Stops asking for locations and disconnects; what is not acknowledged stays in the outbox.
  func stop() {
    if let id = state.withLock({ $0.client }) { hub.unregister(id) }
    positions.sync {}
    listQueue.sync {}
    outbox.stop()
  }

  /// Publishes the `waypoints` list again soon, on the list's queue: one list for a run of
  /// removals, not one each.
  func scheduleWaypointList() {
    let scheduled = listPending.withLock { pending -> Bool in
      defer { pending = true }
      return pending
    }
    guard !scheduled else { return }
    listQueue.async { [self] in
      listPending.withLock { $0 = false }
      submitWaypointList(always: true)
    }
  }

  func hub(_ service: any LocationService, deliver delivery: HubDelivery) {
    guard case .locations(let fixes) = delivery else { return }
    let due = fixes.filter { fix in
      state.withLock { state -> Bool in
        if let last = state.lastTime, fix.time - last < settings.minimumInterval { return false }
        state.lastTime = fix.time
        return true
      }
    }
    guard !due.isEmpty else { return }
    positions.async { [self] in submit(due) }
  }

  /// Encodes locations as OwnTracks messages and commits them to the outbox.
  private func submit(_ fixes: [Fix]) {
    var messages: [OutboxMessage] = []
    for fix in fixes {
      do {
        // The hub hands over locations as the sources gave them (an app's host reduces them
        // for the app, `AppHost.visible`); with `approximate`, only the snapped one leaves.
        let location = try OwnTracksLocation(
          fix: settings.approximate ? reducer.apply(fix) : fix,
          trackerID: settings.effectiveTrackerID)
        let payload = try OwnTracksMessage.location(location).encoded()
        messages.append(
          OutboxMessage(
            topic: settings.topic, payload: payload, kind: .position, retain: true,
            time: fix.time))
      } catch {
        DaemonLog.write("publish: a location was not published: \(error.description)")
      }
    }
    do {
      try outbox.submit(messages)
    } catch {
      DaemonLog.write("publish: positions not kept for publishing: \(error.message)")
    }
  }
}
