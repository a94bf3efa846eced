import Foundation
import LocationDaemon
import LocationEngine
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
  static let available = BuiltPrograms.locationd != nil || RealComponents.isCI

  /// One daemon process.
  final class Daemon {
    let process = Process()
    private let errors = Pipe()
    private lazy var reader = DeadlineLineReader(fd: errors.fileHandleForReading.fileDescriptor)

    init(_ arguments: [String]) throws {
      guard let binary = BuiltPrograms.locationd else {
        throw TestFailure(BuiltPrograms.missingMessage("locationd"))
      }
      process.executableURL = URL(fileURLWithPath: binary)
      process.arguments = arguments
      process.standardError = errors
      process.standardOutput = FileHandle.nullDevice
      process.standardInput = FileHandle.nullDevice
      try runWithEmptySignalMask(process)
    }

    deinit {
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Reads standard error until a line containing `text`, or end of stream; with a deadline.
    func waitForLog(_ text: String, timeout: Double = 20) throws -> String {
      let deadline = monotonicSeconds() + timeout
      while true {
        let bytes: [UInt8]?
        do {
          bytes = try reader.next(until: deadline)
        } catch {
          throw TestFailure("no \"\(text)\" in the log in time")
        }
        guard let bytes else { throw TestFailure("the log ended before \"\(text)\"") }
        let line = String(decoding: bytes, as: UTF8.self)
        if line.contains(text) { return line }
      }
    }

    /// Sends a signal and waits for the exit status.
    func stop(_ signal: Int32) -> Int32 {
      kill(process.processIdentifier, signal)
      process.waitUntilExit()
      return process.terminationStatus
    }
  }

  /// A private directory with a static position for the daemon's source.
  static func makeDirectory() throws -> String {
    let directory = NSTemporaryDirectory() + "ldp-" + String(UUID().uuidString.prefix(8))
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try "52.0\n5.0\n10\n20\n".write(
      toFile: directory + "/geolocation", atomically: true, encoding: .utf8)
    return directory
  }

  static func arguments(_ directory: String) -> [String] {
    [
      "--socket", directory + "/run/locationd/socket", "--store", directory + "/store.sqlite",
      "--config", "/dev/null", "--source", "static://" + directory + "/geolocation",
      "--policy", "grant",
    ]
  }

  @Test(.enabled(if: available)) func servesStopsOnSIGTERMAndRemovesItsSocket() throws {
    let directory = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try Daemon(Self.arguments(directory))
    _ = try daemon.waitForLog("listening on")
    let socket = directory + "/run/locationd/socket"

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

    let second = Process()
    second.executableURL = daemon.process.executableURL
    second.arguments = Self.arguments(directory)
    second.standardError = FileHandle.nullDevice
    try second.run()
    second.waitUntilExit()
    #expect(second.terminationStatus == 3, "another daemon listens on the socket")

    #expect(daemon.stop(SIGTERM) == 0)
    #expect(!FileManager.default.fileExists(atPath: socket))
    #expect(try peer.readUntilClosed().allSatisfy { $0.errorCode == nil })
  }

  @Test(.enabled(if: available)) func badArgumentsExitWithTwo() throws {
    let daemon = try Daemon(["--policy", "sometimes"])
    daemon.process.waitUntilExit()
    #expect(daemon.process.terminationStatus == 2)
  }

  /// A pending event survives `kill -9` until it is acknowledged: delivered again with the same
  /// sequence after a crash before the ack (the client drops it by sequence), never after.
  @Test(.enabled(if: available)) func pendingEventsSurviveKillNineUntilAcknowledged() throws {
    let directory = try Self.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let app = HubConfiguration.executablePath()
    let payload = String(
      decoding: DaemonProtocol.encode(
        .regionEvents(
          group: "manager",
          events: [
            DaemonRegionEvent(
              RegionEvent(
                identifier: "far", kind: .exited, notifyOnEntry: true, notifyOnExit: true),
              date: 1_767_225_600)
          ], sequence: nil)
      ).dropLast(), as: UTF8.self)
    do {
      let store = try LocationStore(path: directory + "/store.sqlite")
      _ = try store.appendEvent(
        PendingEvent(app: app, kind: "regionEvents", payload: payload, time: 1_767_225_600))
    }

    func connect() throws -> (TestPeer, [DaemonMessage]) {
      let peer = try TestPeer(path: directory + "/run/locationd/socket")
      peer.send(.hello(version: 1, role: .app))
      guard case .welcome = try peer.next() else { throw TestFailure("no welcome") }
      return (peer, try peer.sync())
    }

    var daemon = try Daemon(Self.arguments(directory))
    _ = try daemon.waitForLog("listening on")
    let (_, first) = try connect()
    guard case .regionEvents(_, _, let sequence?) = first.first else {
      Issue.record("the pending event was not delivered: \(first)")
      return
    }
    #expect(daemon.stop(SIGKILL) == SIGKILL)

    daemon = try Daemon(Self.arguments(directory))
    _ = try daemon.waitForLog("listening on")
    let (peer, again) = try connect()
    #expect(again.count == 1)
    guard case .regionEvents(_, _, sequence?) = again.first else {
      Issue.record("not delivered again with the same sequence: \(again)")
      return
    }
    peer.send(.ack(sequence: sequence))
    _ = try peer.sync()
    #expect(daemon.stop(SIGKILL) == SIGKILL)

    daemon = try Daemon(Self.arguments(directory))
    _ = try daemon.waitForLog("listening on")
    let (_, none) = try connect()
    #expect(none.isEmpty)
    #expect(daemon.stop(SIGTERM) == 0)
  }
}
