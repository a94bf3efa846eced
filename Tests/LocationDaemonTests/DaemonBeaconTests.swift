import Foundation
import LocationDaemon
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore
import TestSupport
import Testing

/// Beacons through the daemon in-process (hubs on a `ManualClock`): ranging over the protocol, the
/// refusals (approximate apps, `max-ranged-constraints`), and beacon regions watched while the app
/// is away, kept as pending events and delivered once.
@Suite struct DaemonBeaconTests {
  static let uuid = BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)

  static func ad(_ minor: UInt16, rssi: Int, time: Double = 1_767_225_600) -> BeaconAdvertisement {
    BeaconAdvertisement(
      uuid: uuid, major: 1, minor: minor, measuredPower: -59, rssi: rssi, address: "AA:BB",
      time: time)
  }

  static func radio() -> ScriptedSource {
    ScriptedSource(url: "scripted://radio", nominalAccuracy: .infinity, producesBeacons: true)
  }

  /// The ranging deliveries among messages.
  static func beacons(_ messages: [DaemonMessage]) -> [[RangedBeacon]] {
    messages.compactMap {
      if case .beacons(_, _, let beacons) = $0 { return beacons }
      return nil
    }
  }

  @Test func anAppRangesThroughTheDaemon() throws {
    let radio = Self.radio()
    let daemon = try DaemonFixture(extraSources: [radio])
    defer { daemon.stop() }
    let (peer, welcome) = try daemon.peer(.app)
    #expect(welcome.beaconsAvailable)
    peer.send(.register(client: 1))
    let constraint = BeaconConstraint(uuid: Self.uuid, major: 1)
    peer.send(.startRanging(client: 1, constraint: constraint))
    _ = try peer.sync()
    #expect(radio.isRunning, "the radio scans while a client ranges")
    #expect(!daemon.source.isRunning, "ranging needs no receiver")
    radio.emit(Self.ad(2, rssi: -70))
    radio.emit(Self.ad(1, rssi: -60))
    daemon.clock.advance(by: 1)
    let delivered = Self.beacons(try peer.sync())
    #expect(delivered.count == 1)
    #expect(delivered.first?.map(\.minor) == [1, 2])
    peer.send(.stopRanging(client: 1, constraint: constraint))
    _ = try peer.sync()
    #expect(!radio.isRunning)
    daemon.clock.advance(by: 2)
    #expect(Self.beacons(try peer.sync()).isEmpty)
  }

  @Test func theCapCountsEveryManagerOfTheUID() throws {
    let radio = Self.radio()
    let daemon = try DaemonFixture(extraSources: [radio]) { $0.maximumRangedConstraints = 2 }
    defer { daemon.stop() }
    let first = try daemon.connectApp()
    first.send(.startRanging(client: 1, constraint: BeaconConstraint(uuid: Self.uuid, major: 1)))
    // The same constraint again is not a new one.
    first.send(.startRanging(client: 1, constraint: BeaconConstraint(uuid: Self.uuid, major: 1)))
    _ = try first.sync()
    let second = try daemon.connectApp()
    second.send(.startRanging(client: 1, constraint: BeaconConstraint(uuid: Self.uuid, major: 2)))
    second.send(.startRanging(client: 1, constraint: BeaconConstraint(uuid: Self.uuid, major: 3)))
    let refused = try second.sync().filter {
      if case .rangingFailed = $0 { return true }
      return false
    }
    #expect(refused.count == 1)
    // A closed connection gives its constraints back.
    first.shutdownWrite()
    _ = try first.readUntilClosed()
    second.send(.startRanging(client: 1, constraint: BeaconConstraint(uuid: Self.uuid, major: 3)))
    #expect(
      try second.sync().allSatisfy {
        if case .rangingFailed = $0 { return false }
        return true
      })
  }

  @Test func approximateAppsAndTooManyConstraintsAreRefused() throws {
    let radio = Self.radio()
    let daemon = try DaemonFixture(extraSources: [radio]) { $0.maximumRangedConstraints = 2 }
    defer { daemon.stop() }
    let peer = try daemon.connectApp()
    for major in UInt16(1)...3 {
      peer.send(
        .startRanging(client: 1, constraint: BeaconConstraint(uuid: Self.uuid, major: major)))
    }
    // The policy grants the first request (an `authorization` delivery), then the third constraint
    // is one too many.
    let refused = try peer.sync().filter {
      if case .rangingFailed = $0 { return true }
      return false
    }
    #expect(
      refused == [
        .rangingFailed(
          client: 1, constraint: BeaconConstraint(uuid: Self.uuid, major: 3), reason: .unavailable)
      ])

    let (control, _) = try daemon.peer(.control)
    control.send(.authorize(id: 1, app: daemon.app, status: .whenInUse, accuracy: .reduced))
    _ = try control.next()
    let ended = try peer.sync().filter {
      if case .rangingFailed = $0 { return true }
      return false
    }
    #expect(ended.count == 2, "both running constraints end with denied")
    peer.send(.startRanging(client: 1, constraint: BeaconConstraint(uuid: Self.uuid)))
    #expect(
      try peer.sync() == [
        .rangingFailed(client: 1, constraint: BeaconConstraint(uuid: Self.uuid), reason: .denied)
      ])
    _ = try daemon.waitForApps { _ in true }
    #expect(!radio.isRunning)
  }

  @Test func aBeaconRegionIsWatchedWhileTheAppIsAwayAndDeliveredOnce() throws {
    let radio = Self.radio()
    let daemon = try DaemonFixture(extraSources: [radio])
    defer { daemon.stop() }
    let region = RegionSpec.beacon(identifier: "desk", BeaconConstraint(uuid: Self.uuid))
    do {
      let peer = try daemon.connectApp()
      peer.send(.addRegion(client: 1, group: "manager", region: region, initialState: .unknown))
      let started = try peer.sync()
      #expect(started.contains(.regionStarted(client: 1, group: "manager", region: region)))
      peer.shutdownWrite()
      _ = try peer.readUntilClosed()
    }
    _ = try daemon.waitForApps { $0.first?.connected == false }
    #expect(radio.isRunning, "beacon regions are watched while the app is away")
    let stored = try daemon.store.regions(app: daemon.app)
    #expect(stored.first?.extra?.contains(Self.uuid.description) == true)

    radio.emit(Self.ad(5, rssi: -65))
    _ = try daemon.waitForApps { $0.first?.pendingEvents == 1 }

    let (peer, welcome) = try daemon.peer(.app)
    #expect(welcome.regions.first?.region == region)
    let events = try peer.sync()
    guard case .regionEvents("manager", let list, let sequence?) = events.first else {
      Issue.record("no pending region event: \(events)")
      return
    }
    #expect(list.map(\.event.kind) == [.determined(.inside)])
    peer.send(.ack(sequence: sequence))
    _ = try peer.sync()
    _ = try daemon.waitForApps { $0.first?.pendingEvents == 0 }
    let (again, _) = try daemon.peer(.app)
    #expect(
      try again.sync().allSatisfy {
        if case .regionEvents = $0 { return false }
        return true
      })
  }
}
