/// Whether the store takes writes: the condition `locationctl status` shows, and the rule that the
/// user is told once per episode, not once per transaction (issue 22).
///
/// An episode begins with the first transaction that fails for a reason of the store's own (a full
/// disk, an I/O error, a lock held too long, damage) after one that committed, and ends with the
/// next one that commits. A value the store refused before writing (`invalidValue`, `notFound`,
/// `constraint`) says nothing about the store and changes nothing here.
package struct StoreHealth: Sendable, Equatable {
  /// The store's condition.
  package enum Condition: Sendable, Equatable {
    /// Transactions commit.
    case healthy
    /// Transactions fail, since `since` (seconds since 1970), the last one with `error`.
    case failing(StoreError, since: Double)
    /// The file cannot be written (a read-only file system or file): state is kept in a copy in
    /// memory since `since`, and the file is tried again from time to time.
    case inMemory(StoreError, since: Double)
  }

  /// The condition now.
  package private(set) var condition = Condition.healthy
  /// Transactions that failed in the current episode.
  package private(set) var failures = 0

  /// A store that has not failed.
  package init() {}

  /// Whether `error` is a failure of the store itself (and so part of an episode).
  package static func isStoreFailure(_ error: StoreError) -> Bool {
    switch error.code {
    case .cannotOpen, .readOnly, .notADatabase, .corrupt, .busy, .full, .ioError, .other:
      return true
    case .foreignDatabase, .newerVersion, .constraint, .invalidValue, .notFound, .closed:
      return false
    }
  }

  /// A transaction committed.
  /// - Returns: `recovered` when this ends an episode of failures.
  package mutating func committed(at now: Double) -> StoreNotice.Kind? {
    switch condition {
    case .healthy, .inMemory:
      return nil
    case .failing(_, let since):
      let failed = failures
      condition = .healthy
      failures = 0
      return .recovered(afterSeconds: max(0, now - since), failures: failed)
    }
  }

  /// A transaction failed.
  /// - Returns: `failing` when this begins an episode (nothing for a later failure of the same
  ///   episode, nor for an error that is not the store's).
  package mutating func failed(_ error: StoreError, at now: Double) -> StoreNotice.Kind? {
    guard Self.isStoreFailure(error) else { return nil }
    failures += 1
    switch condition {
    case .healthy:
      condition = .failing(error, since: now)
      return .failing(error)
    case .failing(_, let since):
      condition = .failing(error, since: since)
      return nil
    case .inMemory:
      return nil
    }
  }

  /// The store now keeps its state in memory, because of `error`.
  /// - Returns: `inMemory`, unless it already did.
  package mutating func movedToMemory(_ error: StoreError, at now: Double) -> StoreNotice.Kind? {
    switch condition {
    case .inMemory:
      return nil
    case .healthy, .failing:
      condition = .inMemory(error, since: now)
      failures = 0
      return .inMemory(error)
    }
  }

  /// The file takes writes again and the store is back on it.
  /// - Returns: `backOnFile`, when the store was in memory.
  package mutating func movedToFile(at now: Double, keptChanges: Bool) -> StoreNotice.Kind? {
    switch condition {
    case .healthy, .failing:
      return nil
    case .inMemory(_, let since):
      condition = .healthy
      return .backOnFile(afterSeconds: max(0, now - since), keptChanges: keptChanges)
    }
  }
}

/// Something the owner of a store tells the user about (once per episode): the store began or
/// stopped failing, moved to memory or back to its file, or a damaged file was moved aside.
package struct StoreNotice: Sendable, Equatable, CustomStringConvertible {
  /// What happened.
  package enum Kind: Sendable, Equatable {
    /// Transactions began to fail: what depends on them is held and retried.
    case failing(StoreError)
    /// Transactions commit again after `failures` failed ones over `afterSeconds`.
    case recovered(afterSeconds: Double, failures: Int)
    /// The file cannot be written: state is kept in memory, and the file is tried again later.
    case inMemory(StoreError)
    /// The file can be written again: the store is back on it, with what changed in memory
    /// meanwhile (`keptChanges`), or without it when the file had changed under it.
    case backOnFile(afterSeconds: Double, keptChanges: Bool)
    /// The file was damaged (`cause`) and was moved to `movedTo`; a new store was created.
    case movedAside(movedTo: String, cause: StoreError)
  }

  /// The store's file.
  package var path: String
  /// What happened.
  package var kind: Kind

  /// Creates a notice.
  package init(path: String, kind: Kind) {
    self.path = path
    self.kind = kind
  }

  /// One line for a log, naming the file and the cause (no stored value ever appears in it).
  package var description: String {
    switch kind {
    case .failing(let error):
      return "store \(path): cannot commit (\(error.message)); region events wait and are "
        + "retried until it can"
    case .recovered(let seconds, let failures):
      return "store \(path): commits again after \(Self.seconds(seconds)) (\(failures) failed "
        + "attempts); held events follow"
    case .inMemory(let error):
      return "store \(path): cannot be written (\(error.message)); keeping state in memory and "
        + "trying the file again every minute"
    case .backOnFile(let seconds, let keptChanges):
      return "store \(path): writable again after \(Self.seconds(seconds)); "
        + (keptChanges
          ? "what changed meanwhile is written to it"
          : "it changed meanwhile, so it is used as it is and what changed in memory is dropped")
    case .movedAside(let movedTo, let cause):
      return "store \(path): damaged (\(cause.message)); moved to \(movedTo) (kept for you to "
        + "inspect or recover with `sqlite3 FILE .recover`) and a new store was created"
    }
  }

  private static func seconds(_ value: Double) -> String {
    value < 10 ? "\((value * 10).rounded() / 10) s" : "\(Int(value.rounded())) s"
  }
}
