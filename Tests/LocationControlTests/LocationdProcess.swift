import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Text shared between threads.
final class TextBox: Sendable {
  let text = Mutex("")
}

/// The built `locationd` and `locationctl` run as real processes in a private temporary directory.
///
/// Readiness is an event, not a poll: locationd writes `listening on PATH` to standard error once
/// its socket accepts connections, and the helper reads its standard error until that line comes.
/// Every wait has a generous deadline after which the child is killed, as a guard against a hang.
final class LocationdProcess: @unchecked Sendable {
  // @unchecked Sendable: `process` is only touched by the test thread that owns this object;
  // the stderr collector is a Mutex.

  let directory: String
  let socket: String
  let store: String
  private let process: Process
  private let errors = TextBox()
  private let listening = DispatchSemaphore(value: 0)
  private let ended = DispatchSemaphore(value: 0)
  private var stopped = false

  /// Everything locationd wrote to standard error so far.
  var log: String { errors.text.withLock { $0 } }

  /// Starts `locationd --foreground --socket DIR/socket --store DIR/store.sqlite` with a static
  /// source, and returns once it listens.
  init(extraArguments: [String] = []) throws {
    guard let binary = BuiltPrograms.locationd else {
      throw TestFailure("locationd is not built (swift build --product locationd)")
    }
    directory = "/tmp/lctl-e2e-" + UUID().uuidString.prefix(8)
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: false,
      attributes: [.posixPermissions: 0o700])
    socket = directory + "/locationd/socket"
    store = directory + "/store.sqlite"
    // GeoClue's four-line format: latitude, longitude, altitude, accuracy.
    try "52.3702\n4.8952\n2\n50\n".write(
      toFile: directory + "/geolocation", atomically: true, encoding: .utf8)

    process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments =
      [
        "--foreground", "--socket", socket, "--store", store, "--source",
        "static://" + directory + "/geolocation",
      ] + extraArguments
    process.environment = [
      "HOME": directory, "XDG_CONFIG_HOME": directory + "/config",
      "XDG_STATE_HOME": directory + "/state", "XDG_RUNTIME_DIR": directory,
      "PATH": "/usr/bin:/bin",
    ]
    let stderr = Pipe()
    process.standardError = stderr
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try runWithEmptySignalMask(process)

    let handle = stderr.fileHandleForReading
    let thread = Thread { [errors, listening, ended] in
      var signalled = false
      while true {
        let data = handle.availableData
        if data.isEmpty { break }
        let text = errors.text.withLock {
          $0 += String(decoding: data, as: UTF8.self)
          return $0
        }
        if !signalled, text.contains("listening on") {
          signalled = true
          listening.signal()
        }
      }
      if !signalled { listening.signal() }
      ended.signal()
    }
    thread.start()
    if listening.wait(timeout: .now() + 30) == .timedOut || !process.isRunning {
      stop()
      throw TestFailure("locationd did not start listening; its log:\n\(log)")
    }
    guard log.contains("listening on") else {
      stop()
      throw TestFailure("locationd ended before listening; its log:\n\(log)")
    }
  }

  /// Stops locationd by pid (SIGTERM; SIGKILL if it has not ended 10 s later) and removes the
  /// directory. Returns its exit status.
  /// Safe to call more than once.
  @discardableResult
  func stop() -> Int32 {
    if !stopped {
      stopped = true
      let pid = process.processIdentifier
      if process.isRunning { kill(pid, SIGTERM) }
      if ended.wait(timeout: .now() + 10) == .timedOut { kill(pid, SIGKILL) }
      process.waitUntilExit()
      try? FileManager.default.removeItem(atPath: directory)
    }
    return process.terminationStatus
  }

  /// What one `locationctl` run produced.
  struct Run {
    var status: Int32
    var output: String
    var error: String
  }

  /// Runs the built `locationctl` with `arguments` against this daemon's socket; `input` is
  /// written to its standard input, which is then closed.
  func locationctl(_ arguments: [String], input: String = "") throws -> Run {
    try Self.runLocationctl(arguments + ["--socket", socket], input: input)
  }

  static func runLocationctl(_ arguments: [String], input: String = "") throws -> Run {
    guard let binary = BuiltPrograms.locationctl else {
      throw TestFailure("locationctl is not built (swift build --product locationctl)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"]
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try runWithEmptySignalMask(process)
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    let collected = Mutex(Data())
    let done = DispatchSemaphore(value: 0)
    let errorHandle = stderr.fileHandleForReading
    Thread {
      let data = errorHandle.readDataToEndOfFile()
      collected.withLock { $0 = data }
      done.signal()
    }.start()
    // A guard against a hang, never a wait: locationctl answers at once.
    let pid = process.processIdentifier
    let guardTimer = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: guardTimer)
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    done.wait()
    process.waitUntilExit()
    guardTimer.cancel()
    return Run(
      status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
      error: String(decoding: collected.withLock { $0 }, as: UTF8.self))
  }
}
