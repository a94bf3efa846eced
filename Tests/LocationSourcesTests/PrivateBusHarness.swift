import Foundation
import TestSupport
import Testing

@testable import LocationSources

/// What the GeoClue and iio-sensor-proxy harnesses share (CONTRIBUTING.md, "Real components":
/// GeoClue2): a temporary directory, a permissive system-type `dbus-daemon` on a socket in it,
/// children started with an empty signal mask (`GeoClueChildProcess`) and stopped by pid, and a
/// bounded wait for a bus name.
class PrivateBusHarness {
  /// Why the harness cannot run here (a component is missing or not permitted): a skip, a
  /// failure under `CI=true`.
  struct Unavailable: Error, CustomStringConvertible {
    var description: String
  }

  /// Skips the current test (or fails it under `CI=true`) when `error` says a component is
  /// missing; rethrows any other error.
  static func skipOrFail(_ error: any Error) throws {
    guard let unavailable = error as? Unavailable else { throw error }
    try RealComponents.unavailable(unavailable.description)
  }

  /// A component that is there but misbehaved: a failure.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  static let dbusDaemon = "/usr/bin/dbus-daemon"

  /// The temporary directory.
  let directory: String
  /// The private bus's address.
  private(set) var busAddress = ""
  /// The bus daemon, once started (a test may stop it to take the bus away).
  private(set) var busDaemon: GeoClueChildProcess?
  private var processes: [GeoClueChildProcess] = []

  init(directory: String) {
    self.directory = directory
  }

  /// Starts `dbus-daemon` with the configuration `config` (written to `directory/bus.conf`) and
  /// waits (bounded) until it prints its address.
  func startBus(config text: String) throws {
    let config = directory + "/bus.conf"
    try text.write(toFile: config, atomically: true, encoding: .utf8)
    var pipeFDs: [Int32] = [-1, -1]
    guard pipe(&pipeFDs) == 0 else { throw Failure(description: "pipe failed") }
    defer { close(pipeFDs[0]) }
    let process: GeoClueChildProcess
    do {
      process = try launch(
        "dbus-daemon", Self.dbusDaemon,
        ["--config-file=\(config)", "--nofork", "--nopidfile", "--print-address"],
        stdoutFD: pipeFDs[1], stderrFile: directory + "/dbus.err")
    } catch {
      close(pipeFDs[1])
      throw error
    }
    close(pipeFDs[1])
    busDaemon = process
    guard let line = Self.readLine(pipeFDs[0], timeout: 30), line.hasPrefix("unix:") else {
      let errors = (try? String(contentsOfFile: directory + "/dbus.err", encoding: .utf8)) ?? ""
      throw Failure(
        description: "dbus-daemon did not print its address "
          + "(exit \(process.exitCode.map(String.init) ?? "-")): \(errors)")
    }
    busAddress = line
  }

  /// Starts a child with the private bus as its system bus; it is stopped by `stopAll()`.
  func launch(
    _ name: String, _ path: String, _ arguments: [String], stdoutFD: Int32? = nil,
    stderrFile: String? = nil
  ) throws -> GeoClueChildProcess {
    var environment = ProcessInfo.processInfo.environment
    if !busAddress.isEmpty { environment["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress }
    let process = try GeoClueChildProcess(
      name: name, path: path, arguments: arguments, environment: environment,
      stdoutFD: stdoutFD, stderrPath: stderrFile)
    processes.append(process)
    return process
  }

  /// Waits until `name` has an owner on the bus: `NameHasOwner`, then `sd_bus_wait` for the
  /// `NameOwnerChanged` signal (bounded by `timeout` seconds). `exitError` is thrown when
  /// `process` exits first.
  func waitForName(
    _ name: String, process: GeoClueChildProcess, timeout: Double, exitError: () -> any Error
  ) throws {
    let connection = try DBusConnection(address: busAddress)
    let bus = try connection.openBus("sd_bus_add_match")
    let slot = try SDBus.addMatch(
      bus,
      rule: "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'",
      handler: { _, _, _ in 0 }, userdata: nil)
    defer { SDBus.slotUnref(slot) }
    let deadline = Date().addingTimeInterval(timeout)
    while !(try connection.nameHasOwner(name)) {
      guard process.isRunning else { throw exitError() }
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else {
        throw Failure(description: "\(name) did not appear on the bus within \(timeout) s")
      }
      _ = try SDBus.wait(bus, timeout: UInt64(min(remaining, 0.2) * 1_000_000))
      while try SDBus.process(bus) {}
    }
  }

  /// Stops every child (SIGTERM, then SIGKILL after 2 s), last started first, and removes the
  /// directory.
  func stopAll() {
    for process in processes.reversed() { process.stop() }
    processes.removeAll()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Reads one line from `fd`, waiting at most `timeout` seconds in total.
  static func readLine(_ fd: Int32, timeout: Double) -> String? {
    let deadline = Date().addingTimeInterval(timeout)
    var bytes: [UInt8] = []
    while true {
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else { return nil }
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, Int32(remaining * 1_000)) > 0 else { continue }
      var byte: UInt8 = 0
      let count = read(fd, &byte, 1)
      if count < 0, errno == EAGAIN || errno == EINTR { continue }
      guard count == 1 else { return nil }
      if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
      bytes.append(byte)
    }
  }
}
