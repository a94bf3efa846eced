import CSQLite
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// SQLite I/O errors on demand, where a file system cannot produce them at a chosen instant: a
/// fault-injecting VFS of its own (`Sources/CSQLite/shim.h`) over the default one. Open a store
/// with `vfs: faults.vfs`; every other connection is untouched. Arm and read it from the thread
/// that uses the store (the manual clock's thread).
package final class StoreFaults: @unchecked Sendable {
  // @unchecked Sendable: the plan is plain memory that SQLite's calls read on the thread that uses
  // the store; tests arm and read it on that same thread.

  /// An operation that can fail.
  package enum Operation: Sendable, CaseIterable, CustomStringConvertible {
    case write, sync, truncate, read

    var mask: Int32 {
      switch self {
      case .write: Int32(CSQLITE_FAULT_WRITE)
      case .sync: Int32(CSQLITE_FAULT_SYNC)
      case .truncate: Int32(CSQLITE_FAULT_TRUNCATE)
      case .read: Int32(CSQLITE_FAULT_READ)
      }
    }

    package var description: String {
      switch self {
      case .write: "write"
      case .sync: "sync"
      case .truncate: "truncate"
      case .read: "read"
      }
    }
  }

  /// What a failing operation says.
  package enum Failure: Sendable, CustomStringConvertible {
    /// An I/O error (`SQLITE_IOERR_WRITE`, `_FSYNC`, `_TRUNCATE` or `_READ` by operation; `EIO`).
    case ioError
    /// A full disk (`SQLITE_FULL`, `ENOSPC`).
    case full

    package var description: String {
      switch self {
      case .ioError: "I/O error"
      case .full: "disk full"
      }
    }
  }

  /// The VFS name to open stores with.
  package let vfs: String
  private let plan: UnsafeMutablePointer<csqlite_faults>

  /// Registers a new fault-injecting VFS (nothing fails until `arm`).
  package init() throws {
    vfs = "corelocation-faults-" + UUID().uuidString
    guard let plan = csqlite_faults_register(vfs) else {
      throw TestFailure("the fault-injecting VFS \(vfs) could not be registered")
    }
    self.plan = plan
  }

  /// Makes `operations` fail after `after` of them have passed: once (`persistent: false`, an
  /// I/O error that goes away) or from then on until `disarm()` (a full disk).
  package func arm(
    _ operations: Set<Operation>, after: Int = 0, persistent: Bool, failure: Failure
  ) {
    let first = operations.first ?? .write
    plan.pointee.operations = operations.reduce(0) { $0 | $1.mask }
    plan.pointee.files = 0
    plan.pointee.countdown = Int32(after)
    plan.pointee.persistent = persistent ? 1 : 0
    switch failure {
    case .full:
      plan.pointee.code = SQLITE_FULL
      plan.pointee.error = ENOSPC
    case .ioError:
      switch first {
      case .write: plan.pointee.code = SQLITE_IOERR | (3 << 8)  // SQLITE_IOERR_WRITE
      case .sync: plan.pointee.code = SQLITE_IOERR | (4 << 8)  // SQLITE_IOERR_FSYNC
      case .truncate: plan.pointee.code = SQLITE_IOERR | (6 << 8)  // SQLITE_IOERR_TRUNCATE
      case .read: plan.pointee.code = SQLITE_IOERR | (1 << 8)  // SQLITE_IOERR_READ
      }
      plan.pointee.error = EIO
    }
    plan.pointee.failures = 0
    plan.pointee.seen = 0
  }

  /// Counts `operations` without failing any (to learn how many a transaction does).
  package func count(_ operations: Set<Operation>) {
    arm(operations, after: Int(Int32.max), persistent: false, failure: .ioError)
  }

  /// Nothing fails any more (the disk was freed).
  package func disarm() {
    plan.pointee.operations = 0
  }

  /// Failures injected since `arm`.
  package var failures: Int { Int(plan.pointee.failures) }

  /// Matching operations seen since `arm` (failed or not).
  package var seen: Int { Int(plan.pointee.seen) }
}
