import Foundation
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Seconds on `CLOCK_MONOTONIC`, for deadlines.
func e2eNow() -> Double { monotonicSeconds() }

/// Where the built products and the tools of the daemon tests are, and whether they can run.
enum DaemonE2E {
  /// Whether every component is present: `locationd` built and the named tools installed. Under
  /// CI a test runs anyway (and fails on what is missing).
  static func available(tools: [String] = []) -> Bool {
    if RealComponents.isCI { return true }
    return BuiltPrograms.locationd != nil && tools.allSatisfy(RealComponents.exists)
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

  /// A private directory under the temporary directory (short: a socket path must fit 108 bytes).
  static func makeDirectory() throws -> String {
    let directory = NSTemporaryDirectory() + "lde-" + String(UUID().uuidString.prefix(8))
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o755])
    _ = FileManager.default.createFile(atPath: directory + "/conf", contents: Data())
    return directory
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

  /// The daemon's arguments for a private directory.
  static func arguments(
    _ directory: String, sources: [String], policy: String = "grant", system: Bool = false
  ) -> [String] {
    var arguments = [
      "--foreground", "--socket", directory + "/run/locationd/socket", "--store",
      directory + "/store.sqlite", "--config", directory + "/conf", "--policy", policy,
    ]
    for source in sources { arguments += ["--source", source] }
    if system { arguments.append("--system") }
    return arguments
  }

  /// The socket of a private directory.
  static func socket(_ directory: String) -> String { directory + "/run/locationd/socket" }

  /// Runs a program to its end and returns its status and outputs (for short tools: sqlite3,
  /// socat as another user).
  static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (
    status: Int32, stdout: String, stderr: String
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    let stdin = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = stdin
    try runWithEmptySignalMask(process)
    // A program that exits before reading its input (a refused connection) breaks the pipe:
    // that is an answer, not an error of the test.
    if let input { try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
    try? stdin.fileHandleForWriting.close()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (
      process.terminationStatus, String(decoding: out, as: UTF8.self),
      String(decoding: err, as: UTF8.self)
    )
  }

  /// One query through the `sqlite3` program (with a busy timeout: the daemon may be writing).
  static func query(_ store: String, _ sql: String) throws -> String {
    let result = try run(RealComponents.sqlite3, ["-cmd", ".timeout 5000", store, sql])
    guard result.status == 0 else {
      throw TestFailure("sqlite3 \(sql): \(result.stderr)")
    }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// The rows of a query through `sqlite3 -json`, as objects.
  static func rows(_ store: String, _ sql: String) throws -> [[String: Any]] {
    let result = try run(RealComponents.sqlite3, ["-json", "-cmd", ".timeout 5000", store, sql])
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

/// `locationd` as a real process, its standard error read for readiness.
final class DaemonProcess {
  let process = Process()
  private let errors = Pipe()
  private lazy var reader = DeadlineLineReader(fd: errors.fileHandleForReading.fileDescriptor)
  /// Every log line read so far.
  private(set) var log: [String] = []

  /// Starts `locationd` with the arguments and waits (with a deadline) for "listening on".
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
    _ = try waitForLog("listening on")
  }

  deinit {
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  var pid: Int32 { process.processIdentifier }

  /// Reads standard error until a line containing `text`; with a deadline.
  func waitForLog(_ text: String, timeout: Double = 30) throws -> String {
    if let line = log.first(where: { $0.contains(text) }) { return line }
    let deadline = e2eNow() + timeout
    while true {
      let bytes: [UInt8]?
      do {
        bytes = try reader.next(until: deadline)
      } catch {
        throw TestFailure("no \"\(text)\" in locationd's log in time; log: \(log)")
      }
      guard let bytes else {
        throw TestFailure("locationd's log ended before \"\(text)\"; log: \(log)")
      }
      let line = String(decoding: bytes, as: UTF8.self)
      log.append(line)
      if line.contains(text) { return line }
    }
  }

  /// Sends a signal and waits for the process to end; returns its status (the signal number
  /// when a signal ended it).
  @discardableResult
  func stop(_ signal: Int32 = SIGTERM) -> Int32 {
    kill(process.processIdentifier, signal)
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// Whether the process still runs.
  var isRunning: Bool { process.isRunning }
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
  func readLine(timeout: Double = 15) throws -> String? {
    do {
      return try reader.next(timeout: timeout).map { String(decoding: $0, as: UTF8.self) }
    } catch {
      throw TestFailure("\(error)")
    }
  }

  /// The next message, or nil at end of stream.
  func nextOrEnd(timeout: Double = 15) throws -> [String: Any]? {
    guard let line = try readLine(timeout: timeout) else { return nil }
    guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else { throw TestFailure("not a JSON object: \(line.prefix(200))") }
    received.append(object)
    return object
  }

  /// The next message; throws at end of stream.
  func next(timeout: Double = 15) throws -> [String: Any] {
    guard let message = try nextOrEnd(timeout: timeout) else {
      throw TestFailure("the connection was closed")
    }
    return message
  }

  /// Reads messages until one satisfies `condition`; returns it and those before it.
  @discardableResult
  func waitFor(
    timeout: Double = 15, _ what: String, _ condition: ([String: Any]) -> Bool
  ) throws -> (match: [String: Any], before: [[String: Any]]) {
    let deadline = e2eNow() + timeout
    var before: [[String: Any]] = []
    while true {
      let remaining = deadline - e2eNow()
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
  func sync(timeout: Double = 15) throws -> [[String: Any]] {
    nextPing += 1
    let id = nextPing
    send(#"{"type":"ping","id":\#(id)}"#)
    return try waitFor(timeout: timeout, "the reply to ping \(id)") {
      $0.type == "reply" && $0.int("id") == id
    }.before
  }

  /// Reads until end of stream; returns the messages read on the way.
  func readUntilClosed(timeout: Double = 15) throws -> [[String: Any]] {
    var messages: [[String: Any]] = []
    let deadline = e2eNow() + timeout
    while let message = try nextOrEnd(timeout: max(0.01, deadline - e2eNow())) {
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
    if process.isRunning { _ = try? readUntilClosed(timeout: 5) }
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

/// A TCP server on 127.0.0.1 that plays NMEA to whoever connects (the daemon's
/// `nmea+tcp://` source).
final class NMEAFeed {
  private(set) var listener: Int32 = -1
  private(set) var port = 0
  private(set) var connection: Int32 = -1
  private var second = 0

  /// Listens on a free port.
  init() throws { try listen(port: 0) }

  /// Listens on `port` (0: any free port), `SO_REUSEADDR`.
  private func listen(port wanted: Int) throws {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { throw TestFailure("socket: \(errno)") }
    var one: Int32 = 1
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    address.sin_port = UInt16(wanted).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
      }
    }
    guard bound, Glibc.listen(listener, 8) == 0 else {
      close(listener)
      throw TestFailure("bind/listen: \(String(cString: strerror(errno)))")
    }
    self.listener = listener
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit {
    if connection >= 0 { close(connection) }
    if listener >= 0 { close(listener) }
  }

  /// Accepts the daemon's connection, with a deadline.
  func accept(timeout: Double = 30) throws {
    let deadline = e2eNow() + timeout
    while true {
      let remaining = deadline - e2eNow()
      guard remaining > 0 else { throw TestFailure("the daemon did not connect to the feed") }
      var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
      let fd = Glibc.accept(listener, nil, nil)
      if fd >= 0 {
        connection = fd
        return
      }
    }
  }

  /// Closes the current connection (the source sees its server go away).
  func hangUp() {
    if connection >= 0 { close(connection) }
    connection = -1
  }

  /// Sends one epoch (RMC and GGA at 52° N 5° E, the next second); the previous epoch is
  /// complete when this one's first sentence arrives.
  func sendEpoch() {
    second += 1
    let time = String(
      format: "%02d%02d%02d.00", 10 + second / 3600, (second / 60) % 60, second % 60)
    let sentences = [
      "GPRMC,\(time),A,5200.000,N,00500.000,E,0.0,0.0,291126,,,A",
      "GPGGA,\(time),5200.000,N,00500.000,E,1,08,0.9,10.0,M,46.0,M,,",
    ]
    var text = ""
    for body in sentences {
      let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
      text += "$" + body + "*" + String(format: "%02X", checksum) + "\r\n"
    }
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes {
      Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
    }
  }
}
