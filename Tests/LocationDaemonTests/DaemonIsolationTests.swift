import Foundation
import LocationDaemon
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Two apps as two real executables (this test process, and Debian's `/usr/bin/python3` speaking
/// the protocol by hand): neither sees, changes or receives the other's regions or events.
@Suite struct DaemonIsolationTests {
  static let python = RealComponents.python3
  static let available = RealComponents.runnable(python)

  /// The other app: connects, monitors "theirs", then prints every line the daemon sends.
  static let script = """
    import json, socket, sys
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    f = s.makefile('rwb')
    def send(o):
        f.write((json.dumps(o) + "\\n").encode())
        f.flush()
    send({"type": "hello", "version": 1, "role": "app"})
    send({"type": "register", "client": 1})
    send({"type": "addRegion", "client": 1, "group": "manager", "region": {"identifier": "theirs",
          "latitude": 52, "longitude": 5, "radius": 100}, "initialState": "unknown"})
    send({"type": "ping", "id": 1})
    for line in f:
        sys.stdout.write(line.decode())
        sys.stdout.flush()
    """

  /// Reads the other app's standard output line by line, with a deadline.
  final class Lines {
    private let reader: DeadlineLineReader
    init(_ fd: Int32) { reader = DeadlineLineReader(fd: fd) }

    func next() throws -> DaemonMessage {
      let line: [UInt8]?
      do {
        line = try reader.next(timeout: 60)
      } catch {
        throw TestFailure("the other app said nothing in time")
      }
      guard let line else { throw TestFailure("the other app ended") }
      return try DaemonProtocol.decode(line: line)
    }
  }

  @Test(.enabled(if: available)) func twoAppsNeverSeeEachOthersRegionsOrEvents() throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    // A script file: an interpreter's identity is its script (`python3 -c` names no app).
    let scriptPath = daemon.directory + "/other-app.py"
    try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
    let other = Process()
    other.executableURL = URL(fileURLWithPath: Self.python)
    other.arguments = [scriptPath, daemon.socketPath]
    let output = Pipe()
    other.standardOutput = output
    other.standardInput = FileHandle.nullDevice
    try runWithEmptySignalMask(other)
    defer {
      other.terminate()
      other.waitUntilExit()
    }
    let lines = Lines(output.fileHandleForReading.fileDescriptor)
    guard case .welcome(let theirWelcome) = try lines.next() else {
      Issue.record("the other app got no welcome")
      return
    }
    let otherApp = theirWelcome.app
    #expect(otherApp != daemon.app)
    #expect(otherApp == scriptPath, "an interpreter is identified by its script")
    while try lines.next() != .reply(id: 1, .done) {}

    // This app sees none of the other's regions and cannot remove them.
    let (mine, welcome) = try daemon.peer(.app)
    #expect(welcome.regions.isEmpty)
    mine.send(.register(client: 1))
    mine.send(.removeRegion(group: "manager", identifier: "theirs"))
    mine.send(.requestRegionState(client: 1, group: "manager", identifier: "theirs"))
    mine.send(.startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    _ = try mine.sync()

    daemon.source.emit(fix(52, 5, time: 1_767_225_601))
    var theirs: [DaemonRegionEvent] = []
    while theirs.isEmpty {
      if case .regionEvents("manager", let events, _) = try lines.next() { theirs = events }
    }
    #expect(theirs.map(\.event.identifier) == ["theirs"])
    let received = try mine.sync()
    #expect(!received.contains { if case .regionEvents = $0 { true } else { false } })
    #expect(!received.contains { if case .regionState = $0 { true } else { false } })
    #expect(received.contains { $0.fixes != nil }, "this app still gets its own locations")

    let (control, _) = try daemon.peer(.control)
    control.send(.regions(id: 1, app: otherApp))
    guard case .reply(1, .regions(let regions)) = try control.next() else {
      Issue.record("no regions reply")
      return
    }
    #expect(regions.map(\.region.identifier) == ["theirs"])
    #expect(regions.map(\.state) == [.inside])
    control.send(.regions(id: 2, app: daemon.app))
    #expect(try control.next() == .reply(id: 2, .regions([])))
  }
}
