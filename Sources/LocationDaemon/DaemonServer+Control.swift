import Foundation
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore

// The control role (`locationctl`): queries against the hosts and the store, and settings.
extension DaemonServer {
  func control(_ message: DaemonMessage, _ session: Session) throws(DaemonProtocolError) {
    let connection = session.connection
    switch message {
    case .status(let id):
      let clients = loop.sessions.values.sorted { $0.connection.id < $1.connection.id }
        .compactMap { session -> DaemonClientInfo? in
          guard let role = session.role else { return nil }
          return DaemonClientInfo(
            app: session.host?.app ?? "", pid: Int(session.connection.peer.pid),
            uid: Int(session.connection.peer.uid), managers: session.managers.count, role: role)
        }
      let apps = shared.withLock { $0.hosts.keys.sorted() }
      connection.send(
        .reply(
          id: id,
          .status(
            DaemonStatus(
              sources: sourceStatus, clients: clients, apps: apps,
              servicesEnabled: persistence.servicesEnabled(), store: storeStatus(),
              publish: publisher.withLock { $0 }?.daemonStatus, history: historyStatus))))
    case .apps(let id):
      connection.send(.reply(id: id, .apps(try appInfos(id))))
    case .authorize(let id, let app, let setting, let accuracy):
      try authorize(app, setting, accuracy.authorization, id: id)
      DaemonLog.write(
        "app \(app): authorization set to \(setting.rawValue) by pid \(connection.peer.pid)")
      connection.send(.reply(id: id, .done))
    case .regions(let id, let app):
      connection.send(.reply(id: id, .regions(try regionEntries(app, id: id))))
    case .sources(let id):
      connection.send(.reply(id: id, .sources(sourceStatus)))
    case .wifi(let id, let forget):
      connection.send(.reply(id: id, .wifi(try wifiStatus(forget: forget, id: id))))
    case .wifiImport(let id, let accessPoints):
      connection.send(.reply(id: id, .wifi(try importAccessPoints(accessPoints, id: id))))
    case .history(let id, let query):
      connection.send(.reply(id: id, .history(try historyPage(query, id: id))))
    case .services(let id, let enabled):
      do {
        try persistence.setServicesEnabled(enabled)
      } catch {
        throw DaemonProtocolError(
          code: .unsupported,
          message: "the store cannot commit (\(error.message)); nothing changed",
          id: id)
      }
      for app in loop.broker.machines.keys.sorted() {
        apply(transition(app) { $0.servicesSwitched(enabled) }, app: app)
      }
      // Live apps whose machine was never needed hear it too.
      let hosts = shared.withLock { $0.hosts.sorted { $0.key < $1.key }.map(\.value) }
      for host in hosts where loop.broker.machines[host.app] == nil {
        var snapshot = host.hub.authorization
        snapshot.servicesEnabled = enabled
        host.hub.setAuthorization(snapshot)
      }
      DaemonLog.write(
        "location services turned \(enabled ? "on" : "off") by pid \(connection.peer.pid)")
      connection.send(.reply(id: id, .done))
    case .hello, .welcome, .error, .ping, .register, .unregister, .startUpdates, .changeRequest,
      .stopUpdates, .requestLocation, .startSignificantChanges, .stopSignificantChanges,
      .requestAuthorization, .addRegion, .removeRegion, .requestRegionState, .startHeading,
      .changeHeading, .stopHeading, .allowDeferred, .disallowDeferred, .ack, .refreshRegions,
      .purpose,
      .locations, .authorization, .regionEvents, .regionStarted, .regionsChanged, .regionList,
      .regionFailed, .regionState, .heading, .headingInterference, .deferredFinished, .paused,
      .resumed, .startVisits, .stopVisits, .visit, .reply, .authorizationRequest,
      .authorizationDecision, .requestTemporaryFullAccuracy, .temporaryFullAccuracyResult,
      .temporaryFullAccuracyRequest, .startRanging, .stopRanging, .beacons, .rangingFailed:
      // Not control requests: `handle` routes these elsewhere.
      break
    }
  }

  /// `locationctl authorize`: the decision is stored before the reply (a `kill -9` after
  /// `locationctl` reported success keeps it), and a live app's managers are told at once.
  private func authorize(
    _ app: String, _ setting: DaemonAuthorizationSetting, _ accuracy: AccuracyAuthorization,
    id: Int
  ) throws(DaemonProtocolError) {
    let wanted: AuthorizationMachine.Setting
    switch setting {
    case .always: wanted = .always
    case .whenInUse: wanted = .whenInUse
    case .denied: wanted = .denied
    case .reset: wanted = .reset
    }
    let before = loop.broker.machines[app]
    switch transition(app, { $0.set(wanted, accuracy: accuracy) }) {
    case .apply(let snapshot):
      do {
        try persistence.setAuthorization(snapshot, app: app)
      } catch {
        loop.broker.machines[app] = before
        throw DaemonProtocolError(
          code: .unsupported,
          message: "the store cannot commit (\(error.message)); nothing changed",
          id: id)
      }
      liveHost(app)?.hub.setAuthorization(snapshot)
    case .forget(let snapshot):
      do {
        try store.removeAuthorization(app: app)
      } catch {
        loop.broker.machines[app] = before
        throw DaemonProtocolError(code: .unsupported, message: "store: \(error)", id: id)
      }
      liveHost(app)?.hub.setAuthorization(snapshot)
    case .unchanged, .hold, .ask:
      break
    }
  }

  private func regionEntries(_ app: String, id: Int) throws(DaemonProtocolError)
    -> [DaemonRegionEntry]
  {
    if let host = liveHost(app) { return host.regionEntries }
    let stored: [StoredRegion]
    do {
      stored = try store.regions(app: app)
    } catch {
      throw DaemonProtocolError(code: .unsupported, message: "store: \(error)", id: id)
    }
    if stored.isEmpty, persistence.authorization(app: app) == nil {
      throw DaemonProtocolError(code: .notFound, message: "no app \(app) is known", id: id)
    }
    return stored.map {
      DaemonRegionEntry(
        group: $0.group,
        region: RegionSpec(
          identifier: $0.identifier, latitude: $0.latitude, longitude: $0.longitude,
          radius: $0.radius, hysteresis: $0.hysteresis, notifyOnEntry: $0.notifyOnEntry,
          notifyOnExit: $0.notifyOnExit),
        state: RegionState(rawValue: $0.state) ?? .unknown)
    }
  }

  var sourceStatus: [DaemonSourceStatus] {
    (pool?.status ?? []).map {
      let power: String
      switch $0.power {
      case .none: power = "none"
      case .low: power = "low"
      case .high: power = "high"
      }
      return DaemonSourceStatus(
        url: $0.url, running: $0.running, power: power, onSeconds: $0.onSeconds,
        users: $0.subscribers, failure: $0.failing || $0.finished ? $0.lastFailure : nil)
    }
  }

  private func appInfos(_ id: Int) throws(DaemonProtocolError) -> [DaemonAppInfo] {
    let authorized: [String]
    let regions: [StoredRegion]
    do {
      authorized = try store.apps()
      regions = try store.allRegions()
    } catch {
      throw DaemonProtocolError(code: .unsupported, message: "store: \(error)", id: id)
    }
    let hosts = shared.withLock { $0.hosts }
    let names = Set(authorized).union(regions.map(\.app)).union(hosts.keys).sorted()
    let services = persistence.servicesEnabled()
    return names.map { app in
      let host = hosts[app]
      var authorization =
        host?.hub.authorization ?? persistence.authorization(app: app)
        ?? AuthorizationSnapshot(status: .notDetermined)
      authorization.servicesEnabled = services
      let pending = ((try? store.pendingEvents(app: app)) ?? []).count
      return DaemonAppInfo(
        app: app, authorization: authorization,
        regions: host?.regionCount ?? regions.filter { $0.app == app }.count,
        pendingEvents: pending, connected: (host?.connectionCount ?? 0) > 0,
        purpose: loop.purposes[app])
    }
  }
}

extension DaemonServer {
  /// The `wifi` reply; with `forget`, every learned access point is forgotten first (in memory
  /// and in the store).
  func wifiStatus(forget: Bool, id: Int) throws(DaemonProtocolError) -> DaemonWifiStatus {
    var forgotten: Int?
    if forget {
      do {
        forgotten = try wifi.forget()
      } catch {
        throw DaemonProtocolError(
          code: .unsupported,
          message: "the store cannot commit (\(error.message)); nothing was forgotten", id: id)
      }
      DaemonLog.write("wifi: \(forgotten ?? 0) learned access point(s) forgotten")
    }
    let status = wifi.status()
    return DaemonWifiStatus(
      learning: wifi.learning, known: status.known, mobile: status.mobile,
      lastLearned: status.lastLearned, forgotten: forgotten)
  }

  /// `wifiImport`: the access points the daemon does not know yet are added (what it learned
  /// itself is kept); a batch larger than `DaemonImportedAccessPoint.maximumPerMessage`, or an
  /// entry with a bad BSSID or coordinate, is refused whole (`malformed`), nothing added.
  func importAccessPoints(_ entries: [DaemonImportedAccessPoint], id: Int)
    throws(DaemonProtocolError) -> DaemonWifiStatus
  {
    guard entries.count <= DaemonImportedAccessPoint.maximumPerMessage else {
      throw DaemonProtocolError(
        code: .tooLarge,
        message:
          "at most \(DaemonImportedAccessPoint.maximumPerMessage) access points per wifiImport",
        id: id)
    }
    let now = self.clock?.now.wall ?? Date().timeIntervalSince1970
    var records: [AccessPointRecord] = []
    for entry in entries {
      guard let bssid = AccessPointReading.bssid(entry.bssid),
        entry.latitude.isFinite, entry.longitude.isFinite, abs(entry.latitude) <= 90,
        abs(entry.longitude) <= 180, (entry.radius ?? 0).isFinite, (entry.radius ?? 0) >= 0,
        (entry.samples ?? 0) >= 0, (entry.time ?? 0).isFinite
      else {
        throw DaemonProtocolError(
          code: .malformed, message: "wifiImport: a bad access point (\(entry.bssid))", id: id)
      }
      records.append(
        AccessPointRecord.imported(
          bssid: bssid, latitude: entry.latitude, longitude: entry.longitude,
          // Stamped now: an export's row times are often older than the expiry (a year), and
          // an access point imported today must not be forgotten at the next scan.
          radius: entry.radius, samples: entry.samples, time: now))
    }
    let imported: Int
    do {
      imported = try wifi.importRecords(records)
    } catch {
      throw DaemonProtocolError(
        code: .unsupported,
        message: "the store cannot commit (\(error.message)); nothing was imported", id: id)
    }
    let status = wifi.status()
    return DaemonWifiStatus(
      learning: wifi.learning, known: status.known, mobile: status.mobile,
      lastLearned: status.lastLearned, imported: imported)
  }
}
