import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// What a program run to its end produced.
package struct ProgramResult: Sendable {
  /// The exit status (the signal number when a signal ended it).
  package var status: Int32
  /// Standard output.
  package var stdout: String
  /// Standard error.
  package var stderr: String
  /// True when the guard had to kill the program.
  package var killed: Bool

  /// Standard output split into lines (without the last, empty one).
  package var lines: [String] {
    var lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.last == "" { lines.removeLast() }
    return lines
  }
}

/// Collects the bytes of one pipe on a thread of its own (so that a child never blocks on a full
/// pipe while the test reads the other).
private final class PipeCollector: Sendable {
  private let data = Mutex(Data())
  private let done = DispatchSemaphore(value: 0)

  init(_ handle: FileHandle) {
    Thread { [self] in
      let bytes = handle.readDataToEndOfFile()
      data.withLock { $0 = bytes }
      done.signal()
    }.start()
  }

  /// The bytes, once the pipe is closed.
  func wait() -> Data {
    done.wait()
    return data.withLock { $0 }
  }
}

/// Runs a program to its end (the package's built programs, or short tools such as `sqlite3`,
/// `socat`, `systemd-analyze`) with an empty signal mask, and returns its status and outputs.
/// - Parameters:
///   - environment: the child's environment; nil: the test's own.
///   - currentDirectory: where it runs; nil: here.
///   - input: written to its standard input, which is then closed (a program that exits before
///     reading it breaks the pipe: that is an answer, not an error of the test).
///   - limit: seconds after which a program still running is killed (a guard against a hang,
///     never a wait: every run ends on its own well before).
package func runProgram(
  _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
  currentDirectory: String? = nil, input: String? = nil, limit: Double = 60
) throws -> ProgramResult {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  if let environment { process.environment = environment }
  if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
  let output = Pipe()
  let errors = Pipe()
  let stdin = Pipe()
  process.standardOutput = output
  process.standardError = errors
  process.standardInput = input == nil ? FileHandle.nullDevice : stdin
  try runWithEmptySignalMask(process)
  let stdout = PipeCollector(output.fileHandleForReading)
  let stderr = PipeCollector(errors.fileHandleForReading)
  if let input {
    // A write to a child that has exited must fail with EPIPE, not kill the test runner.
    signal(SIGPIPE, SIG_IGN)
    try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
    try? stdin.fileHandleForWriting.close()
  }

  let pid = process.processIdentifier
  let killed = Atomic(false)
  let finished = Atomic(false)
  let guardTimer = DispatchWorkItem {
    guard !finished.load(ordering: .sequentiallyConsistent) else { return }
    killed.store(true, ordering: .sequentiallyConsistent)
    kill(pid, SIGKILL)
  }
  DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: guardTimer)
  let outData = stdout.wait()
  let errData = stderr.wait()
  process.waitUntilExit()
  finished.store(true, ordering: .sequentiallyConsistent)
  guardTimer.cancel()
  return ProgramResult(
    status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
    stderr: String(decoding: errData, as: UTF8.self),
    killed: killed.load(ordering: .sequentiallyConsistent))
}

/// `body` on a thread of its own, the calling task suspended meanwhile: a blocking wait that
/// lasts seconds (a program's run) then holds none of the two threads that Swift's shared pool
/// has on a 2-core machine, which every other test in the suite needs (see "Tests" in
/// docs/architecture.md).
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
  }
}
