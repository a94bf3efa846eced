import Dispatch
import Foundation
import LocationModel
import Synchronization

/// The clock a hub runs on: real time in programs, manual time in tests and virtual replays.
package protocol HubClock: Sendable {
  /// The current instant.
  var now: EngineInstant { get }
  /// Runs `action` at a monotonic deadline (immediately if it has passed). The action runs on the
  /// clock's own terms: a live clock on the given queue, a manual clock inside `advance`.
  func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
}

/// Real time: `CLOCK_MONOTONIC` for deadlines and the system clock for timestamps; timers run on a
/// dispatch queue.
package final class LiveClock: HubClock {
  private let queue: DispatchQueue

  /// Creates a clock whose timers fire on `queue`.
  package init(queue: DispatchQueue) { self.queue = queue }

  package var now: EngineInstant {
    EngineInstant(monotonic: Self.monotonicSeconds(), wall: Date().timeIntervalSince1970)
  }

  /// Seconds on `CLOCK_MONOTONIC`.
  package static func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
  }

  package func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void)
    -> any Cancellable
  {
    let delay = max(0, deadline - Self.monotonicSeconds())
    let item = DispatchWorkItem(block: action)
    queue.asyncAfter(deadline: .now() + delay, execute: item)
    return WorkItemCancellable(item: item)
  }
}

/// A `DispatchWorkItem` as a `Cancellable`.
private struct WorkItemCancellable: Cancellable {
  // DispatchWorkItem is thread-safe for cancel(); it is not marked Sendable in corelibs.
  nonisolated(unsafe) let item: DispatchWorkItem
  func cancel() { item.cancel() }
}

/// Manual time: nothing happens until `advance(by:)`, which runs every due action in deadline order,
/// synchronously, on the caller's thread. Hours of replay take milliseconds, and no test sleeps.
package final class ManualClock: HubClock {
  private struct Entry {
    var deadline: Double
    var sequence: Int
    var action: @Sendable () -> Void
  }

  private struct State {
    var monotonic: Double
    var wall: Double
    var entries: [Entry] = []
    var sequence = 0
    var cancelled: Set<Int> = []
  }

  private let state: Mutex<State>

  /// Creates a clock at a wall-clock start (seconds since 1970) with monotonic time 0.
  package init(wall: Double = 1_767_225_600) {  // 2026-01-01T00:00:00Z
    state = Mutex(State(monotonic: 0, wall: wall))
  }

  package var now: EngineInstant {
    state.withLock { EngineInstant(monotonic: $0.monotonic, wall: $0.wall) }
  }

  package func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void)
    -> any Cancellable
  {
    let sequence = state.withLock { state -> Int in
      state.sequence += 1
      state.entries.append(Entry(deadline: deadline, sequence: state.sequence, action: action))
      return state.sequence
    }
    return ManualCancellable(clock: self, sequence: sequence)
  }

  fileprivate func cancel(_ sequence: Int) {
    state.withLock { state in
      if let index = state.entries.firstIndex(where: { $0.sequence == sequence }) {
        state.entries.remove(at: index)
      }
    }
  }

  /// The number of actions waiting.
  package var pendingCount: Int { state.withLock { $0.entries.count } }

  /// Moves time forward by `seconds`, running every action that falls due, in order of deadline
  /// (then of scheduling); actions scheduled by actions run too if they fall within the span.
  package func advance(by seconds: Double) {
    let target = state.withLock { $0.monotonic + max(0, seconds) }
    while let entry = nextDue(until: target) {
      entry.action()
    }
    state.withLock { state in
      state.wall += target - state.monotonic
      state.monotonic = target
    }
  }

  /// Runs the actions due now (deadline at or before the current time) without moving time: at
  /// most `limit` of them, a guard against an action that keeps scheduling at the same instant.
  package func runDue(limit: Int = .max) {
    let target = state.withLock { $0.monotonic }
    var count = 0
    while count < limit, let entry = nextDue(until: target) {
      entry.action()
      count += 1
    }
  }

  private func nextDue(until target: Double) -> Entry? {
    state.withLock { state -> Entry? in
      guard
        let index = state.entries.indices.min(by: {
          (state.entries[$0].deadline, state.entries[$0].sequence)
            < (state.entries[$1].deadline, state.entries[$1].sequence)
        }), state.entries[index].deadline <= target
      else { return nil }
      let entry = state.entries.remove(at: index)
      if entry.deadline > state.monotonic {
        state.wall += entry.deadline - state.monotonic
        state.monotonic = entry.deadline
      }
      return entry
    }
  }
}

private struct ManualCancellable: Cancellable {
  let clock: ManualClock
  let sequence: Int
  func cancel() { clock.cancel(sequence) }
}
