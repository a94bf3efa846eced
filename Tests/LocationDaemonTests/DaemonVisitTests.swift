import Foundation
import LocationDaemon
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore
import TestSupport
import Testing

/// Visits through the daemon in-process (hubs on a `ManualClock`, a cheap scripted source the test
/// drives): detected while the app has no connection, kept as pending events, delivered on the
/// next connection with their sequence until acknowledged, and monitoring restored at start.
@Suite struct DaemonVisitTests {
  /// A day the app is away for: 15 minutes where monitoring began (no arrival seen), 15 minutes
  /// 2.2 km north, then 3 minutes 5.5 km north: the first place's departure, the second's arrival
  /// and departure.
  static func away(_ daemon: DaemonFixture) {
    var time = 1_767_225_600.0
    for (latitude, minutes) in [(52.0, 16), (52.02, 16), (52.05, 3)] {
      for _ in 0..<minutes {
        daemon.source.emit(fix(latitude, 5, time: time, accuracy: 10))
        time += 60
      }
    }
  }

  /// The `visit` messages among deliveries, with their sequences.
  static func visits(_ messages: [DaemonMessage]) -> [(Visit, Int64?)] {
    messages.compactMap { message in
      if case .visit(let visit, let sequence) = message { return (visit, sequence) }
      return nil
    }
  }

  @Test func visitsOfAnAbsentAppAreKeptAndDeliveredOnceOnTheNextConnection() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    do {
      let peer = try daemon.connectApp()
      peer.send(.startVisits(client: 1))
      _ = try peer.sync()
      peer.shutdownWrite()
      _ = try peer.readUntilClosed()
    }
    _ = try daemon.waitForApps { $0.first?.connected == false }
    #expect(daemon.source.isRunning, "visits are watched while the app is away")
    #expect(try daemon.store.visitMonitoringApps() == [daemon.app])

    Self.away(daemon)
    _ = try daemon.waitForApps { $0.first?.pendingEvents == 3 }

    let (first, _) = try daemon.peer(.app)
    let delivered = Self.visits(try first.sync())
    #expect(delivered.count == 3)
    guard delivered.count == 3, let last = delivered[2].1 else { return }
    #expect(delivered.map(\.0.isDeparture) == [true, false, true])
    #expect(delivered[0].0.arrival == nil)
    #expect(delivered[1].0.arrival == Double(1_767_225_600 + 16 * 60))
    #expect(delivered[2].0.departure == Double(1_767_225_600 + 31 * 60))
    let sequences = delivered.compactMap(\.1)
    #expect(sequences == sequences.sorted() && sequences.count == 3)
    first.send(.ack(sequence: last))
    _ = try first.sync()
    first.shutdownWrite()
    _ = try first.readUntilClosed()
    _ = try daemon.waitForApps { $0.first?.pendingEvents == 0 }

    // Acknowledged: not again. Stopping ends monitoring for the app.
    let (second, _) = try daemon.peer(.app)
    #expect(Self.visits(try second.sync()).isEmpty)
    second.send(.stopVisits)
    _ = try second.sync()
    #expect(try daemon.store.visitMonitoringApps().isEmpty)
  }

  /// An app whose visits were monitored when the daemon stopped gets its hub back at start, and
  /// its visits are detected before it connects.
  @Test func monitoringIsRestoredAtStart() throws {
    let store = try LocationStore.inMemory()
    let app = HubConfiguration.executablePath()
    try store.setVisitMonitoring(true, app: app, since: 1_767_225_000)
    try store.setAuthorization(
      StoredAuthorization(status: .authorizedAlways, accuracy: .fullAccuracy, updated: 0), app: app)
    let daemon = try DaemonFixture(store: store)
    defer { daemon.stop() }
    #expect(daemon.source.isRunning)
    Self.away(daemon)
    _ = try daemon.waitForApps { $0.first?.pendingEvents == 3 }
  }

  /// A live visit goes to every open connection of the app with its sequence.
  @Test func liveVisitsGoToEveryConnection() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let one = try daemon.connectApp()
    let two = try daemon.connectApp()
    one.send(.startVisits(client: 1))
    _ = try one.sync()
    Self.away(daemon)
    let first = Self.visits(try one.sync())
    let second = Self.visits(try two.sync())
    #expect(first.count == 3)
    #expect(first.map(\.1) == second.map(\.1))
    #expect(first.allSatisfy { $0.1 != nil })
  }
}
