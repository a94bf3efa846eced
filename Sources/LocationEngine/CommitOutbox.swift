/// Writes that must be committed before what depends on them is announced, and the rule for a
/// commit that fails: "not yet" (README, "When the store fails").
///
/// The owner (the hub) submits an item (an evaluation's region states and events, a region's
/// removal, a decision), commits it when told to (`Action.commit`), reports how that went
/// (``succeeded(at:)``, ``failed(at:)``), and announces an item only when it is released
/// (`Action.release`). Rules:
///
/// - **Order.** Items are committed one at a time, in the order they were submitted, and released
///   in that order. While one is held, every later one waits behind it, even one whose own commit
///   would succeed: announcements keep their order.
/// - **Not yet.** A failed commit keeps the item. It is committed again after a backoff:
///   ``initialDelay`` after the first failure, doubled after each further one, at most
///   ``maximumDelay``. Time is the owner's monotonic clock, passed in.
/// - **Exactly once.** An item is released once, after its commit succeeded; never before, never
///   twice, and never without one.
/// - **Episodes.** The first failure while nothing was failing begins an episode
///   (`Action.began`); the release that empties the outbox after failures ends it
///   (`Action.ended`). The owner tells the user once per episode, not once per attempt.
package struct CommitOutbox<Item: Sendable>: Sendable {
  /// What the owner does, in order.
  package enum Action: Sendable {
    /// Commit this item (the first held) now, then report with `succeeded` or `failed`.
    case commit(Item)
    /// The item is committed: announce what depends on it.
    case release(Item)
    /// Arm the retry timer for this monotonic instant (replacing any); when it fires, call
    /// ``retryDue(at:)``.
    case armRetry(at: Double)
    /// A commit failed while nothing was failing: tell the user, once.
    case began
    /// Everything held since the episode began is released (`released` items, after `seconds`).
    case ended(seconds: Double, released: Int)
  }

  /// Where the outbox is.
  package enum Phase: Sendable, Equatable {
    /// Nothing held.
    case idle
    /// The first item is being committed; `failures` earlier attempts at it failed.
    case committing(failures: Int)
    /// The first item failed `failures` times; it is committed again at `retryAt`.
    case waiting(failures: Int, retryAt: Double)
  }

  /// Seconds before the first retry.
  package let initialDelay: Double
  /// The longest wait between two attempts, seconds.
  package let maximumDelay: Double
  /// Where the outbox is.
  package private(set) var phase = Phase.idle
  /// The items not yet released, oldest first.
  package private(set) var held: [Item] = []
  /// When the current episode began (monotonic), and how many items it has released.
  private var episode: (since: Double, released: Int)?

  /// An empty outbox.
  /// - Parameters:
  ///   - initialDelay: Seconds before the first retry (default 1).
  ///   - maximumDelay: The longest wait between attempts (default 60).
  package init(initialDelay: Double = 1, maximumDelay: Double = 60) {
    self.initialDelay = initialDelay
    self.maximumDelay = maximumDelay
  }

  /// Whether a commit has failed and not yet been followed by the release of everything held.
  package var isFailing: Bool { episode != nil }

  /// The wait after the `failures`-th failure in a row.
  package func delay(afterFailures failures: Int) -> Double {
    var delay = initialDelay
    var count = 1
    while count < failures, delay < maximumDelay {
      delay *= 2
      count += 1
    }
    return min(delay, maximumDelay)
  }

  /// Adds an item behind those held.
  /// - Returns: `commit` when nothing was held (commit it now); otherwise nothing: it waits.
  package mutating func submit(_ item: Item, at now: Double) -> [Action] {
    held.append(item)
    switch phase {
    case .idle:
      phase = .committing(failures: 0)
      return [.commit(item)]
    case .committing, .waiting:
      return []
    }
  }

  /// The commit asked for succeeded.
  /// - Returns: `release` of the item; then `commit` of the next one, or, when none is left and
  ///   an episode was running, `ended`.
  package mutating func succeeded(at now: Double) -> [Action] {
    switch phase {
    case .idle, .waiting:
      // No commit was asked for: nothing to release.
      return []
    case .committing:
      let item = held.removeFirst()
      var actions: [Action] = [.release(item)]
      if let running = episode { episode = (running.since, running.released + 1) }
      if let next = held.first {
        phase = .committing(failures: 0)
        actions.append(.commit(next))
      } else {
        phase = .idle
        if let finished = episode {
          actions.append(.ended(seconds: max(0, now - finished.since), released: finished.released))
          episode = nil
        }
      }
      return actions
    }
  }

  /// The commit asked for failed: the item stays held.
  /// - Returns: `began` when this begins an episode, then `armRetry`.
  package mutating func failed(at now: Double) -> [Action] {
    switch phase {
    case .idle, .waiting:
      return []
    case .committing(let failures):
      let count = failures + 1
      let retryAt = now + delay(afterFailures: count)
      phase = .waiting(failures: count, retryAt: retryAt)
      var actions: [Action] = []
      if episode == nil {
        episode = (now, 0)
        actions.append(.began)
      }
      actions.append(.armRetry(at: retryAt))
      return actions
    }
  }

  /// The retry timer fired.
  /// - Returns: `commit` of the first held item when its retry is due; nothing otherwise (a late
  ///   timer of an earlier wait).
  package mutating func retryDue(at now: Double) -> [Action] {
    switch phase {
    case .idle, .committing:
      return []
    case .waiting(let failures, let retryAt):
      guard now >= retryAt, let first = held.first else { return [] }
      phase = .committing(failures: failures)
      return [.commit(first)]
    }
  }
}
