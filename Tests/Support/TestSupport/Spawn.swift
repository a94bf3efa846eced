import Foundation

/// Starts a child with an empty signal mask.
///
/// A child inherits the signal mask of the thread that spawns it, and the test runner's threads
/// (dispatch and concurrency workers) block signals: without an empty mask SIGTERM would stay
/// pending in the child forever, and stopping it by pid would hang.
///
/// It first waits (at most 60 s) while this process has more than `spawnDescriptorLimit`
/// descriptors open: Foundation's `Process.run()` reads `/proc/self/fd` (to close every
/// descriptor in the child) copying each entry's whole 256-byte name field, which reads past the
/// end of a full 32 KiB `getdents` buffer (more than about 1,350 entries); that crashed the test
/// process when several tests' connections added up while another started a program.
package func runWithEmptySignalMask(_ process: Process) throws {
  let deadline = monotonicSeconds() + 60
  while openDescriptors().count > spawnDescriptorLimit, monotonicSeconds() < deadline {
    usleep(10_000)
  }
  var empty = sigset_t()
  var saved = sigset_t()
  sigemptyset(&empty)
  pthread_sigmask(SIG_SETMASK, &empty, &saved)
  defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
  try process.run()
}

/// Stops a child by pid: sends `signal` if it still runs, then SIGKILL if it has not ended
/// `grace` seconds later (a guard timer, not a wait), and reaps it.
/// - Returns: its status (the signal number when a signal ended it).
@discardableResult
package func stopChild(_ process: Process, signal: Int32 = SIGTERM, grace: Double = 3) -> Int32 {
  if process.isRunning {
    let pid = process.processIdentifier
    kill(pid, signal)
    let guardTimer = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + grace, execute: guardTimer)
    process.waitUntilExit()
    guardTimer.cancel()
  }
  process.waitUntilExit()
  return process.terminationStatus
}

/// The most descriptors this process may have open when a test starts a program (see
/// `runWithEmptySignalMask`): under the 1,350 or so entries one `getdents` buffer holds.
package let spawnDescriptorLimit = 1_200

/// glibc's `getdents64` (2.30 and later; not in Swift's view of the C library, which hides it
/// behind `_GNU_SOURCE`), looked up once.
private let getdents: @convention(c) (Int32, UnsafeMutableRawPointer?, Int) -> Int = {
  guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "getdents64") else {
    return { _, _, _ in -1 }
  }
  return unsafeBitCast(
    symbol, to: (@convention(c) (Int32, UnsafeMutableRawPointer?, Int) -> Int).self)
}()

/// The descriptors open in this process, by number: `/proc/self/fd` read with `getdents64` into
/// a buffer of its own, each entry read only within its record (not through `readdir`, whose
/// entries Foundation copies past their end).
package func openDescriptors() -> [Int32] {
  let directory = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
  guard directory >= 0 else { return [] }
  defer { close(directory) }
  var numbers: [Int32] = []
  let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
  defer { buffer.deallocate() }
  while true {
    let count = getdents(directory, buffer.baseAddress, buffer.count)
    guard count > 0 else { break }
    var offset = 0
    // struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name.
    while offset + 19 < count {
      let length = Int(buffer.load(fromByteOffset: offset + 16, as: UInt16.self))
      guard length > 19, offset + length <= count else { break }
      var value: Int32 = 0
      var digits = 0
      for index in (offset + 19)..<(offset + length) {
        let byte = buffer[index]
        guard byte >= 0x30, byte <= 0x39 else { break }
        value = value &* 10 &+ Int32(byte - 0x30)
        digits += 1
      }
      if digits > 0 { numbers.append(value) }
      offset += length
    }
  }
  return numbers
}
