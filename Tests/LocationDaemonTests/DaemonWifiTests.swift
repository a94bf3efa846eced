import Foundation
import LocationDaemon
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore
import TestSupport
import Testing

/// `locationctl wifi` against the daemon in-process: what the store holds is shown, `forget`
/// clears it in memory and in the store; `wifi-learning = off` is reported; only the control role
/// may ask.
@Suite struct DaemonWifiTests {
  static func record(_ bssid: UInt64, mobile: Bool = false, lastSeen: Double) -> AccessPointRecord {
    AccessPointRecord(
      bssid: bssid, weight: 2, x: 1.2, y: 0.2, z: 1.58, observations: 2, firstSeen: 100,
      lastSeen: lastSeen, mobile: mobile)
  }

  @Test func controlShowsAndForgetsWhatWasLearned() throws {
    let store = try LocationStore.inMemory()
    try store.upsertAccessPoints([
      Self.record(1, lastSeen: 1_767_225_600),
      Self.record(2, mobile: true, lastSeen: 1_767_225_000),
    ])
    let daemon = try DaemonFixture(store: store)
    defer { daemon.stop() }
    let (control, _) = try daemon.peer(.control)
    control.send(.wifi(id: 1, forget: false))
    #expect(
      try control.next()
        == .reply(
          id: 1,
          .wifi(DaemonWifiStatus(learning: true, known: 2, mobile: 1, lastLearned: 1_767_225_600))))
    control.send(.wifi(id: 2, forget: true))
    #expect(
      try control.next()
        == .reply(id: 2, .wifi(DaemonWifiStatus(learning: true, known: 0, mobile: 0, forgotten: 2)))
    )
    #expect(try store.accessPointCounts().known == 0)
  }

  @Test func importAddsOnlyWhatIsNotKnown() throws {
    let store = try LocationStore.inMemory()
    try store.upsertAccessPoints([Self.record(0x0123_4567_89AB, lastSeen: 1_767_225_600)])
    let daemon = try DaemonFixture(store: store)
    defer { daemon.stop() }
    let (control, _) = try daemon.peer(.control)
    control.send(
      .wifiImport(
        id: 1,
        accessPoints: [
          DaemonImportedAccessPoint(bssid: "01:23:45:67:89:AB", latitude: 10, longitude: 10),
          DaemonImportedAccessPoint(
            bssid: "01:23:45:67:89:AC", latitude: 52.1, longitude: 5.1, radius: 80, samples: 12),
        ]))
    guard case .reply(1, .wifi(let status)) = try control.next() else {
      Issue.record("no wifi reply")
      return
    }
    #expect(status.imported == 1)
    #expect(status.known == 2)
    let stored = try store.accessPoints()
    #expect(
      stored.first { $0.bssid == 0x0123_4567_89AB }
        == Self.record(0x0123_4567_89AB, lastSeen: 1_767_225_600))
    control.send(
      .wifiImport(
        id: 2,
        accessPoints: [DaemonImportedAccessPoint(bssid: "nonsense", latitude: 0, longitude: 0)]))
    guard case .error(let error) = try control.next() else {
      Issue.record("a bad access point was not refused")
      return
    }
    #expect(error.code == .malformed)
    #expect(try store.accessPointCounts().known == 2)
  }

  @Test func learningOffIsReportedAndAppsMayNotAsk() throws {
    let daemon = try DaemonFixture { $0.wifiLearning = false }
    defer { daemon.stop() }
    let (control, _) = try daemon.peer(.control)
    control.send(.wifi(id: 1, forget: false))
    #expect(
      try control.next()
        == .reply(id: 1, .wifi(DaemonWifiStatus(learning: false, known: 0, mobile: 0))))
    let app = try daemon.connectApp()
    app.send(.wifi(id: 9, forget: true))
    guard case .error(let error) = try app.next() else {
      Issue.record("an app's wifi request was not refused")
      return
    }
    #expect(error.code == .forbidden)
  }
}
