import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Where the built products and the tools of the daemon tests are, and whether they can run.
enum DaemonE2E {
  /// Whether every component is present: `locationd` built and the named tools installed. Under
  /// CI a test runs anyway (and fails on what is missing).
  static func available(tools: [String] = []) -> Bool {
    if RealComponents.isCI { return true }
    return BuiltPrograms.locationd != nil && tools.allSatisfy(RealComponents.exists)
  }

  /// Why a test that needs `locationd` and `tools` is skipped: what is missing.
  static func missing(tools: [String] = []) -> Comment {
    var reasons: [String] = []
    if BuiltPrograms.locationd == nil { reasons.append(BuiltPrograms.missingMessage("locationd")) }
    for tool in tools where !RealComponents.exists(tool) {
      reasons.append("\(tool) is missing (Debian packages socat, sqlite3, util-linux)")
    }
    return Comment(rawValue: reasons.joined(separator: "; "))
  }

  /// Throws a clear message naming what is missing.
  static func requireComponents(tools: [String] = []) throws {
    if BuiltPrograms.locationd == nil {
      throw TestFailure(BuiltPrograms.missingMessage("locationd"))
    }
    for tool in tools where !FileManager.default.isExecutableFile(atPath: tool) {
      throw TestFailure("\(tool) is missing (Debian packages socat, sqlite3, util-linux)")
    }
  }

  /// Writes a GPX track along the parallel 52° N from 5° E eastwards: `count` points `step`
  /// metres apart, one second apart, from 2026-01-01T00:00:00Z.
  static func writeTrack(_ path: String, count: Int, step: Double) throws {
    var text = """
      <?xml version="1.0" encoding="UTF-8"?>
      <gpx version="1.1" creator="DaemonE2E" xmlns="http://www.topografix.com/GPX/1/1">
      <trk><trkseg>

      """
    for index in 0..<count {
      let longitude = 5.0 + Double(index) * step * degreesPerMetreEast
      let second = index % 60
      let minute = (index / 60) % 60
      let hour = index / 3600
      let time = String(format: "2026-01-01T%02d:%02d:%02dZ", hour, minute, second)
      text += "<trkpt lat=\"52.0\" lon=\"\(longitude)\"><time>\(time)</time></trkpt>\n"
    }
    text += "</trkseg></trk></gpx>\n"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
  }

  /// Degrees of longitude per metre east on the parallel 52° N (WGS-84 radius of the parallel:
  /// a·cos φ / sqrt(1 − e² sin² φ)).
  static let degreesPerMetreEast: Double = {
    let a = 6_378_137.0
    let f = 1 / 298.257223563
    let e2 = f * (2 - f)
    let phi = 52.0 * Double.pi / 180
    let radius = a * cos(phi) / (1 - e2 * sin(phi) * sin(phi)).squareRoot()
    return 180 / (Double.pi * radius)
  }()

  /// One query through the `sqlite3` program (with a busy timeout: the daemon may be writing).
  static func query(_ store: String, _ sql: String) throws -> String {
    let result = try runProgram(RealComponents.sqlite3, ["-cmd", ".timeout 5000", store, sql])
    guard result.status == 0 else {
      throw TestFailure("sqlite3 \(sql): \(result.stderr)")
    }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// The rows of a query through `sqlite3 -json`, as objects.
  static func rows(_ store: String, _ sql: String) throws -> [[String: Any]] {
    let result = try runProgram(
      RealComponents.sqlite3, ["-json", "-cmd", ".timeout 5000", store, sql])
    guard result.status == 0 else {
      throw TestFailure("sqlite3 \(sql): \(result.stderr)")
    }
    let text = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    if text.isEmpty { return [] }
    return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] ?? []
  }

  /// JSON text for a string.
  static func quoted(_ text: String) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: [text], options: [])) ?? Data()
    let array = String(decoding: data, as: UTF8.self)
    return String(array.dropFirst().dropLast())
  }
}

/// One protocol conversation: lines written to one descriptor, lines read from another (the same
/// socket, or a child's standard input and output).
class LineChannel {
  let readFD: Int32
  let writeFD: Int32
  private let reader: DeadlineLineReader
  private var nextPing = 1_000_000
  /// Every message read so far, in order.
  private(set) var received: [[String: Any]] = []

  init(readFD: Int32, writeFD: Int32) {
    // A write to a child that has exited must fail with EPIPE, not kill the test runner.
    signal(SIGPIPE, SIG_IGN)
    self.readFD = readFD
    self.writeFD = writeFD
    reader = DeadlineLineReader(fd: readFD)
  }

  /// Writes bytes as they are (a broken peer is ignored: the reader sees it).
  func sendRaw(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes { raw -> Int in
        if readFD == writeFD {
          return Glibc.send(writeFD, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
        }
        return Glibc.write(writeFD, raw.baseAddress, raw.count)
      }
      if written < 0, errno == EINTR { continue }
      if written <= 0 { return }
      offset += written
    }
  }

  /// Writes a line (the newline is added).
  func send(_ line: String) { sendRaw(Array((line + "\n").utf8)) }

  /// The next line, or nil at end of stream; throws when nothing comes before the deadline.
  func readLine(timeout: Double = 60) throws -> String? {
    do {
      return try reader.next(timeout: timeout).map { String(decoding: $0, as: UTF8.self) }
    } catch {
      throw TestFailure("\(error)")
    }
  }

  /// The next message, or nil at end of stream.
  func nextOrEnd(timeout: Double = 60) throws -> [String: Any]? {
    guard let line = try readLine(timeout: timeout) else { return nil }
    guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else { throw TestFailure("not a JSON object: \(line.prefix(200))") }
    received.append(object)
    return object
  }

  /// The next message; throws at end of stream.
  func next(timeout: Double = 60) throws -> [String: Any] {
    guard let message = try nextOrEnd(timeout: timeout) else {
      throw TestFailure("the connection was closed")
    }
    return message
  }

  /// Reads messages until one satisfies `condition`; returns it and those before it.
  @discardableResult
  func waitFor(
    timeout: Double = 60, _ what: String, _ condition: ([String: Any]) -> Bool
  ) throws -> (match: [String: Any], before: [[String: Any]]) {
    let deadline = monotonicSeconds() + timeout
    var before: [[String: Any]] = []
    while true {
      let remaining = deadline - monotonicSeconds()
      guard remaining > 0 else { throw TestFailure("\(what): not received in time") }
      guard let message = try nextOrEnd(timeout: remaining) else {
        throw TestFailure("\(what): the connection closed first")
      }
      if condition(message) { return (message, before) }
      before.append(message)
    }
  }

  /// Sends `hello` in a role and returns the welcome (throws on anything else).
  func hello(_ role: String) throws -> [String: Any] {
    send(#"{"type":"hello","version":1,"role":"\#(role)"}"#)
    let welcome = try next()
    guard welcome.type == "welcome" else { throw TestFailure("no welcome: \(welcome)") }
    return welcome
  }

  /// Sends a ping and returns every message that arrived before its reply.
  @discardableResult
  func sync(timeout: Double = 60) throws -> [[String: Any]] {
    nextPing += 1
    let id = nextPing
    send(#"{"type":"ping","id":\#(id)}"#)
    return try waitFor(timeout: timeout, "the reply to ping \(id)") {
      $0.type == "reply" && $0.int("id") == id
    }.before
  }

  /// Reads until end of stream; returns the messages read on the way.
  func readUntilClosed(timeout: Double = 60) throws -> [[String: Any]] {
    var messages: [[String: Any]] = []
    let deadline = monotonicSeconds() + timeout
    while let message = try nextOrEnd(timeout: max(0.01, deadline - monotonicSeconds())) {
      messages.append(message)
    }
    return messages
  }

  /// Every message already readable, without waiting.
  func drain() throws -> [[String: Any]] {
    var messages: [[String: Any]] = []
    while true {
      if reader.hasLine {
        if let message = try nextOrEnd(timeout: 1) { messages.append(message) }
        continue
      }
      var descriptor = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 0) > 0 else { return messages }
      guard let message = try nextOrEnd(timeout: 1) else { return messages }
      messages.append(message)
    }
  }
}

/// A Unix-socket connection from this test process (its executable is the test runner, which is
/// then the app identity).
final class SocketChannel: LineChannel {
  /// Connects; throws with `strerror` when the connection is refused.
  init(path: String) throws {
    let fd = try UnixSocket.connected(path: path)
    super.init(readFD: fd, writeFD: fd)
  }

  deinit { Glibc.close(readFD) }

  /// Closes the writing half (the daemon sees end of stream).
  func shutdownWrite() { Glibc.shutdown(readFD, Int32(SHUT_WR)) }
}

/// `socat - UNIX-CONNECT:SOCKET` run from a given executable path: the daemon identifies it by
/// that path (`SO_PEERCRED` and `/proc/PID/exe`); lines go to its standard input, replies come
/// from its standard output.
final class SocatChannel: LineChannel {
  let process: Process
  private let input: Pipe
  private let output: Pipe

  /// Starts the copy of socat at `executable` connected to `socket` (through `prefix`, such as
  /// `setpriv ...`, when given).
  init(executable: String, socket: String, prefix: [String] = []) throws {
    let input = Pipe()
    let output = Pipe()
    let process = Process()
    if prefix.isEmpty {
      process.executableURL = URL(fileURLWithPath: executable)
      process.arguments = ["-", "UNIX-CONNECT:" + socket]
    } else {
      process.executableURL = URL(fileURLWithPath: prefix[0])
      process.arguments = Array(prefix.dropFirst()) + [executable, "-", "UNIX-CONNECT:" + socket]
    }
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try runWithEmptySignalMask(process)
    self.input = input
    self.output = output
    self.process = process
    super.init(
      readFD: output.fileHandleForReading.fileDescriptor,
      writeFD: input.fileHandleForWriting.fileDescriptor)
  }

  /// Closes socat's standard input (it ends the conversation) and waits for it to exit.
  func finish() {
    try? input.fileHandleForWriting.close()
    if process.isRunning { _ = try? readUntilClosed(timeout: 30) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
  }

  deinit {
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }
}

extension Dictionary where Key == String, Value == Any {
  /// The message's `type`.
  var type: String { self["type"] as? String ?? "" }
  /// An integer member.
  func int(_ key: String) -> Int? { (self[key] as? NSNumber)?.intValue }
  /// A string member.
  func string(_ key: String) -> String? { self[key] as? String }
  /// An object member.
  func object(_ key: String) -> [String: Any]? { self[key] as? [String: Any] }
  /// An array of objects.
  func objects(_ key: String) -> [[String: Any]] { self[key] as? [[String: Any]] ?? [] }
  /// The error code, when this is an error.
  var errorCode: String? { type == "error" ? string("code") : nil }
}
