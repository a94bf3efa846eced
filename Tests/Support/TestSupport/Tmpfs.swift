import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A size-limited tmpfs of the test's own, mounted on a temporary directory: a real file system
/// that fills up (`ENOSPC`) and that can be remounted read-only (`EROFS`), which root's
/// permissions cannot get around. Needs root (CI runs as root); elsewhere `make` throws the
/// reason, which the test passes to `RealComponents.unavailable`.
package final class Tmpfs {
  /// The mount point.
  package let path: String
  private var mounted = true

  /// MS_RDONLY and MS_REMOUNT (`<sys/mount.h>`).
  private static let readOnlyFlag: UInt = 1
  private static let remountFlag: UInt = 32

  private init(path: String) { self.path = path }

  /// A mounted tmpfs of `kibibytes`, or nil when none can be mounted here: the test is then
  /// skipped with the reason, or fails under `CI=true` (`RealComponents.unavailable`).
  package static func mountedOrUnavailable(kibibytes: Int) throws -> Tmpfs? {
    switch make(kibibytes: kibibytes) {
    case .success(let mounted): return mounted
    case .failure(let reason):
      try RealComponents.unavailable(reason.description)
      return nil
    }
  }

  /// Mounts a tmpfs of `kibibytes` KiB on a new temporary directory.
  /// - Returns: The mounted file system, or the reason it cannot be mounted here.
  package static func make(kibibytes: Int) -> Result<Tmpfs, TestFailure> {
    guard geteuid() == 0 else {
      return .failure(TestFailure("mounting a tmpfs needs root (CI runs as root)"))
    }
    let path = NSTemporaryDirectory() + "CoreLocationTmpfs-" + UUID().uuidString
    guard mkdir(path, 0o700) == 0 else {
      return .failure(TestFailure("mkdir \(path): \(String(cString: strerror(errno)))"))
    }
    guard mount("tmpfs", path, "tmpfs", 0, "size=\(kibibytes)k,mode=0700") == 0 else {
      let reason = String(cString: strerror(errno))
      rmdir(path)
      return .failure(TestFailure("mount -t tmpfs on \(path): \(reason) (no CAP_SYS_ADMIN?)"))
    }
    return .success(Tmpfs(path: path))
  }

  deinit { unmount() }

  /// Remounts it read-only or read-write.
  package func remount(readOnly: Bool) throws {
    let flags = Self.remountFlag | (readOnly ? Self.readOnlyFlag : 0)
    guard mount("tmpfs", path, "tmpfs", flags, nil) == 0 else {
      throw TestFailure("remount \(path): \(String(cString: strerror(errno)))")
    }
  }

  /// Fills it: writes a file of zeros until the file system says it is full.
  /// - Returns: The file's path (remove it to free the space).
  @discardableResult
  package func fill() throws -> String {
    let file = path + "/filler"
    // Close-on-exec: a child another test starts meanwhile must not hold the filler open, or
    // `free()` would not give its pages back until that child ends.
    let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw TestFailure("open \(file): \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    let chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == ENOSPC { return file }
        if errno == EINTR { continue }
        throw TestFailure("write \(file): \(String(cString: strerror(errno)))")
      }
      if written < chunk.count {
        // A short write: the last free page; the next one fails.
        continue
      }
    }
  }

  /// Frees what `fill()` took.
  package func free() {
    unlink(path + "/filler")
  }

  /// Unmounts it (lazily: a file still open in it goes on working until closed) and removes the
  /// directory.
  package func unmount() {
    guard mounted else { return }
    mounted = false
    umount2(path, Int32(MNT_DETACH))
    rmdir(path)
  }
}
