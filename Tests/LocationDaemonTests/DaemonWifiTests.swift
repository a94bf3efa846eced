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
