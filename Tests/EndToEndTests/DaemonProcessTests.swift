import Foundation
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The built `locationd` as a real process on a private socket: readiness, clean shutdown by
/// signal, exit statuses, and pending events across `kill -9`.
@Suite struct DaemonProcessTests {
  /// A private directory with a static position for the daemon's source, and its arguments.
  static func makeDirectory() throws -> (directory: String, arguments: [String]) {
    let directory = try LocationdProcess.makeDirectory()
    let source = try LocationdProcess.staticSource(in: directory, "52.0\n5.0\n10\n20\n")
    return (
      directory, LocationdProcess.arguments(directory, sources: [source], config: "/dev/null")
    )
  }

  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func servesStopsOnSIGTERMAndRemovesItsSocket() throws {
    let (directory, arguments) = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try LocationdProcess(arguments, waitForListening: false)
    _ = try daemon.waitForLog("listening on")
    let socket = LocationdProcess.socket(directory)

    let peer = try TestPeer(path: socket)
    peer.send(.hello(version: 1, role: .app))
    guard case .welcome(let welcome) = try peer.next() else {
      Issue.record("no welcome")
      return
    }
    #expect(welcome.app == HubConfiguration.executablePath())
    peer.send(.register(client: 1))
    peer.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    var location: Double?
    while location == nil {
      if case .locations(1, let fixes) = try peer.next() { location = fixes.first?.latitude }
    }
    #expect(location == 52)

    let binary = try #require(BuiltPrograms.locationd)
    let second = try runProgram(binary, arguments)
    #expect(second.status == 3, "another daemon listens on the socket")

    #expect(daemon.kill(SIGTERM) == 0)
    #expect(!FileManager.default.fileExists(atPath: socket))
    #expect(try peer.readUntilClosed().allSatisfy { $0.errorCode == nil })
  }

  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing())) func badArgumentsExitWithTwo()
    throws
  {
    let daemon = try LocationdProcess(["--policy", "sometimes"], waitForListening: false)
    #expect(daemon.waitForExit() == 2)
  }

  /// A pending event survives `kill -9` until it is acknowledged: delivered again with the same
  /// sequence after a crash before the ack (the client drops it by sequence), never after.
  @Test(.enabled(if: DaemonE2E.available(), DaemonE2E.missing()))
  func pendingEventsSurviveKillNineUntilAcknowledged()
    throws
  {
    let (directory, arguments) = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let app = HubConfiguration.executablePath()
    // Recent: kept events older than pending-event-days (30) are dropped at start.
    let time = Date().timeIntervalSince1970 - 3_600
    let payload = String(
      decoding: DaemonProtocol.encode(
        .regionEvents(
          group: "manager",
          events: [
            DaemonRegionEvent(
              RegionEvent(
                identifier: "far", kind: .exited, notifyOnEntry: true, notifyOnExit: true),
              date: time)
          ], sequence: nil)
      ).dropLast(), as: UTF8.self)
    do {
      let store = try LocationStore(path: LocationdProcess.store(directory))
      // An app that may have locations: others get no kept event (docs/security.md, F10).
      try store.setAuthorization(
        StoredAuthorization(status: .authorizedAlways, accuracy: .fullAccuracy, updated: time),
        app: app)
      _ = try store.appendEvent(
        PendingEvent(app: app, kind: "regionEvents", payload: payload, time: time))
    }

    func connect() throws -> (TestPeer, [DaemonMessage]) {
      let peer = try TestPeer(path: LocationdProcess.socket(directory))
      peer.send(.hello(version: 1, role: .app))
      guard case .welcome = try peer.next() else { throw TestFailure("no welcome") }
      return (peer, try peer.sync())
    }

    var daemon = try LocationdProcess(arguments, waitForListening: false)
    _ = try daemon.waitForLog("listening on")
    let (_, first) = try connect()
    guard case .regionEvents(_, _, let sequence?) = first.first else {
      Issue.record("the pending event was not delivered: \(first)")
      return
    }
    #expect(daemon.kill(SIGKILL) == SIGKILL)

    daemon = try LocationdProcess(arguments, waitForListening: false)
    _ = try daemon.waitForLog("listening on")
    let (peer, again) = try connect()
    #expect(again.count == 1)
    guard case .regionEvents(_, _, sequence?) = again.first else {
      Issue.record("not delivered again with the same sequence: \(again)")
      return
    }
    peer.send(.ack(sequence: sequence))
    _ = try peer.sync()
    #expect(daemon.kill(SIGKILL) == SIGKILL)

    daemon = try LocationdProcess(arguments, waitForListening: false)
    _ = try daemon.waitForLog("listening on")
    let (_, none) = try connect()
    #expect(none.isEmpty)
    #expect(daemon.kill(SIGTERM) == 0)
  }
}
