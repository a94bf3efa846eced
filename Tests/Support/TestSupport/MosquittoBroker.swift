// A real Mosquitto broker for the MQTT tests (issue 18): started on a free loopback port with a
// configuration of the test's own (plain, or TLS with a certificate authority made at test time
// by openssl), polled until it accepts connections, stopped by pid (CONTRIBUTING.md, "Real
// components").
import Foundation

/// A running `mosquitto`.
package final class MosquittoBroker {
  /// The broker (Debian's mosquitto).
  package static let program = "/usr/sbin/mosquitto"
  /// What makes the test certificates (Debian's openssl).
  package static let openssl = "/usr/bin/openssl"
  /// What to install when one is missing.
  package static let missingMessage =
    "needs /usr/sbin/mosquitto and /usr/bin/openssl (Debian's mosquitto and openssl; scripts/setup-debian.sh)"

  /// Certificates made for one broker: a certificate authority and the broker's certificate for
  /// 127.0.0.1 and localhost, signed by it.
  package struct Certificates {
    /// The authority's certificate (PEM): what clients check the broker against.
    package var caFile: String
    /// The broker's certificate and key.
    package var certificateFile: String
    package var keyFile: String
  }

  /// Whether the broker's tests can run here: true when mosquitto and openssl are installed;
  /// otherwise the test is skipped (outside CI) or the missing programs recorded (under CI).
  package static func ready() throws -> Bool {
    guard RealComponents.runnable(program, openssl) else {
      try RealComponents.unavailable(missingMessage)
      return false
    }
    return RealComponents.require(program, openssl)
  }

  /// The TCP port on 127.0.0.1.
  package let port: Int
  /// The directory holding the configuration, the certificates, the password file and the
  /// persistence file.
  package let directory: String
  /// The certificates, when the broker speaks TLS.
  package let certificates: Certificates?
  private var process: Process?
  private let configuration: String

  /// Starts a broker; waits (up to 60 s) until it accepts connections.
  /// - Parameters:
  ///   - tls: whether it speaks MQTT over TLS (certificates made now).
  ///   - users: user names and passwords it accepts; empty: anonymous clients are allowed.
  ///   - persistent: whether it keeps its sessions and queued messages across restarts.
  ///   - port: the port (a restart keeps the old one); nil: a free one.
  package init(
    tls: Bool = false, users: [String: String] = [:], persistent: Bool = false, port: Int? = nil,
    directory: String? = nil
  ) throws {
    let directory = directory ?? NSTemporaryDirectory() + "mosquitto-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    self.directory = directory
    self.port = try port ?? Loopback.freePort()
    certificates = tls ? try Self.makeCertificates(in: directory) : nil
    var lines = [
      "listener \(self.port) 127.0.0.1",
      "log_dest file \(directory)/mosquitto.log",
      "max_queued_messages 0",
      "max_inflight_messages 0",
      // Run as root (CI), mosquitto would switch to its own user, who cannot read this
      // directory: it stays the user that started it.
      "user \(String(cString: getpwuid(geteuid()).pointee.pw_name))",
    ]
    if persistent {
      lines += [
        "persistence true", "persistence_location \(directory)/", "autosave_interval 1",
      ]
    }
    if users.isEmpty {
      lines.append("allow_anonymous true")
    } else {
      let passwords = directory + "/passwords"
      try Self.writePasswords(users, to: passwords)
      lines += ["allow_anonymous false", "password_file \(passwords)"]
    }
    if let certificates {
      lines += [
        "cafile \(certificates.caFile)", "certfile \(certificates.certificateFile)",
        "keyfile \(certificates.keyFile)",
      ]
    }
    configuration = directory + "/mosquitto.conf"
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: configuration, atomically: true, encoding: .utf8)
    try start()
  }

  /// Starts the broker process and waits until it accepts connections.
  package func start() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.program)
    process.arguments = ["-c", configuration]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try runWithEmptySignalMask(process)
    self.process = process
    let deadline = Date().addingTimeInterval(60)
    while !Loopback.accepts(port: port) {
      guard process.isRunning, Date() < deadline else {
        throw TestFailure("mosquitto did not start on port \(port): \(log())")
      }
      usleep(20_000)
    }
  }

  /// Stops the broker by pid (SIGTERM: it saves its persistence file; `signal` SIGKILL: it
  /// dies at once).
  package func stop(signal: Int32 = SIGTERM) {
    if let process { stopChild(process, signal: signal, grace: 10) }
    process = nil
  }

  /// Stops it and removes its directory.
  package func remove() {
    stop()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// The broker's log.
  package func log() -> String {
    (try? String(contentsOfFile: directory + "/mosquitto.log", encoding: .utf8)) ?? ""
  }

  /// A password file in mosquitto's format, made with `mosquitto_passwd` when it is installed
  /// (Debian ships it with the broker).
  private static func writePasswords(_ users: [String: String], to path: String) throws {
    _ = FileManager.default.createFile(atPath: path, contents: Data())
    for (user, password) in users.sorted(by: { $0.key < $1.key }) {
      try run("/usr/bin/mosquitto_passwd", ["-b", path, user, password])
    }
  }

  /// A certificate authority and a broker certificate for 127.0.0.1, made by openssl.
  private static func makeCertificates(in directory: String) throws -> Certificates {
    let ca = directory + "/ca"
    let server = directory + "/server"
    try run(
      openssl,
      [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
        "/CN=CoreLocation test CA", "-keyout", ca + ".key", "-out", ca + ".pem",
      ])
    try run(
      openssl,
      [
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
        server + ".key", "-out", server + ".csr",
      ])
    let extensions = directory + "/server.ext"
    try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
      toFile: extensions, atomically: true, encoding: .utf8)
    try run(
      openssl,
      [
        "x509", "-req", "-in", server + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
        "-CAcreateserial", "-days", "1", "-extfile", extensions, "-out", server + ".pem",
      ])
    return Certificates(
      caFile: ca + ".pem", certificateFile: server + ".pem", keyFile: server + ".key")
  }

  private static func run(_ program: String, _ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try runWithEmptySignalMask(process)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw TestFailure("\(program) \(arguments.joined(separator: " ")) failed")
    }
  }
}
