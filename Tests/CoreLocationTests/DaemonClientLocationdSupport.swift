import Foundation
import Synchronization
import TestSupport

/// The built `locationd`, run as a child process on a private socket and store.
final class LocationdProcess: Sendable {
  let directory: String
  let socketPath: String
  let storePath: String
  private let arguments: [String]
  private let process: Mutex<Process?> = Mutex(nil)

  /// Starts `locationd --foreground --socket DIR/socket --store DIR/store.sqlite` with the given
  /// extra arguments.
  init(arguments: [String]) throws {
    guard let binary = BuiltPrograms.locationd else {
      throw TestFailure(BuiltPrograms.missingMessage("locationd"))
    }
    var template = Array("/tmp/cl-locationd-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
    directory = String(cString: made)
    socketPath = directory + "/run/socket"
    storePath = directory + "/store.sqlite"
    self.arguments =
      ["--foreground", "--socket", socketPath, "--store", storePath] + arguments
    try start(binary)
  }

  private func start(_ binary: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CONFIG_HOME"] = directory + "/config"
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    try runWithEmptySignalMask(process)
    self.process.withLock { $0 = process }
  }

  /// Sends a signal to the daemon by pid and waits for it to exit.
  func kill(_ signal: Int32) {
    guard let process = process.withLock({ $0 }), process.isRunning else { return }
    Glibc.kill(process.processIdentifier, signal)
    process.waitUntilExit()
  }

  /// Starts the daemon again on the same socket and store.
  func restart() throws {
    guard let binary = BuiltPrograms.locationd else {
      throw TestFailure(BuiltPrograms.missingMessage("locationd"))
    }
    try start(binary)
  }

  /// Stops the daemon by pid (SIGTERM: it closes its connections and removes its socket) and
  /// removes its files.
  func stop() {
    kill(SIGTERM)
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Asks the daemon for its apps over a control connection (same uid as the daemon).
  func apps() -> [[String: Any]] {
    guard let reply = control(#"{"type":"apps","id":1}"#) else { return [] }
    return reply["apps"] as? [[String: Any]] ?? []
  }

  /// Sends one control request and returns its reply, or nil.
  func control(_ request: String) -> [String: Any]? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(socketPath.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
      raw[bytes.count] = 0
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else { return nil }
    // A bound on a daemon that does not answer (never reached when it works).
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let lines = Array(
      (#"{"type":"hello","version":1,"role":"control"}"# + "\n" + request + "\n").utf8)
    guard
      lines.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) })
        == lines.count
    else { return nil }
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Data(pending[..<newline])
        pending.removeSubrange(...newline)
        if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
          object["type"] as? String == "reply" || object["id"] != nil
        {
          return object
        }
      }
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count <= 0 { return nil }
      pending.append(contentsOf: buffer[0..<count])
    }
  }
}

/// A simulated NMEA receiver on a TCP port (`nmea+tcp://127.0.0.1:PORT`): it sends an RMC and a
/// GGA sentence at the position set, stamped with the current time, each time it is fed.
final class NMEAFeed: Sendable {
  private let listener: Int32
  /// The port it listens on.
  let port: Int
  private let connection = Mutex<Int32?>(nil)
  private let lastSent = Mutex<Date>(.distantPast)

  init() throws {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    self.listener = listener
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
      }
    }
    guard ok, listen(listener, 4) == 0 else { throw TestFailure("NMEA listener failed") }
    port = Int(UInt16(bigEndian: address.sin_port))
    Thread.detachNewThread { [self] in
      while true {
        let fd = accept(listener, nil, nil)
        if fd < 0 {
          if errno == EINTR { continue }
          return
        }
        connection.withLock { $0 = fd }
      }
    }
  }

  /// Whether the daemon's source is connected.
  var isConnected: Bool { connection.withLock { $0 != nil } }

  /// Sends one epoch at this position (at most 20 per second; extra calls do nothing).
  func feed(latitude: Double, longitude: Double) {
    let now = Date()
    guard let fd = connection.withLock({ $0 }),
      lastSent.withLock({ last in
        defer { if now.timeIntervalSince(last) >= 0.05 { last = now } }
        return now.timeIntervalSince(last) >= 0.05
      })
    else { return }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
    let parts = calendar.dateComponents(
      [.year, .month, .day, .hour, .minute, .second, .nanosecond], from: now)
    let time = String(
      format: "%02d%02d%02d.%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0,
      (parts.nanosecond ?? 0) / 10_000_000)
    let date = String(
      format: "%02d%02d%02d", parts.day ?? 1, parts.month ?? 1, (parts.year ?? 2026) % 100)
    let lat = Self.angle(latitude, degreeDigits: 2)
    let lon = Self.angle(longitude, degreeDigits: 3)
    let ns = latitude >= 0 ? "N" : "S"
    let ew = longitude >= 0 ? "E" : "W"
    let rmc = "GPRMC,\(time),A,\(lat),\(ns),\(lon),\(ew),0.0,0.0,\(date),,,A"
    let gga = "GPGGA,\(time),\(lat),\(ns),\(lon),\(ew),1,08,0.9,10.0,M,46.9,M,,"
    let text = Self.sentence(rmc) + Self.sentence(gga)
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  /// `ddmm.mmmm` (or `dddmm.mmmm`) of an absolute angle.
  static func angle(_ value: Double, degreeDigits: Int) -> String {
    let absolute = abs(value)
    let degrees = Int(absolute)
    let minutes = (absolute - Double(degrees)) * 60
    return String(format: "%0\(degreeDigits)d%07.4f", degrees, minutes)
  }

  /// `$BODY*CS\r\n` with the NMEA 0183 checksum (XOR of the body's bytes).
  static func sentence(_ body: String) -> String {
    let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
    return "$\(body)*\(String(format: "%02X", checksum))\r\n"
  }

  func stop() {
    if let fd = connection.withLock({ $0 }) { shutdown(fd, Int32(SHUT_RDWR)) }
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
  }
}
