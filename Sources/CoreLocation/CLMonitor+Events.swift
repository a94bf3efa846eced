import Foundation
import Synchronization

extension CLMonitor {
  /// A type that represents an asynchronous sequence of events.
  ///
  /// Buffering (our rule; Apple publishes none): events are queued from the moment the monitor is
  /// created, whether or not anyone iterates, and every event is kept until it is read, up to 4,096
  /// waiting events; beyond that the oldest waiting event is dropped (`record(for:)` still has the
  /// latest event of every condition). The sequence is one queue: with several iterators, each
  /// event goes to one of them, in order.
  ///
  /// An iterator keeps its monitor alive. `next()` returns `nil` when no event is queued and either
  /// the task that iterates is cancelled or the monitor is gone; so a cancelled reader still gets
  /// the events already queued, then `nil`.
  public struct Events: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = CLMonitor.Event

    let mailbox: MonitorMailbox

    /// Creates the iterator.
    public func makeAsyncIterator() -> Iterator {
      Iterator(mailbox: mailbox, owner: mailbox.owner)
    }

    /// The type that allows iteration over the elements of the sequence.
    public struct Iterator: AsyncIteratorProtocol {
      /// The element type.
      public typealias Element = CLMonitor.Event

      let mailbox: MonitorMailbox
      /// Keeps the monitor (and so its conditions' events) alive while someone iterates.
      let owner: CLMonitor?

      /// The next event, waiting for one if none is queued.
      /// - Returns: The event, or `nil` when none is queued and the task is cancelled or the
      ///   monitor is gone.
      /// - Throws: Nothing today; declared `throws` as Apple's is.
      public mutating func next() async throws -> CLMonitor.Event? {
        await mailbox.next()
      }

      /// The next event, waiting for one if none is queued (the form `for await` uses).
      /// - Parameter actor: The caller's isolation.
      /// - Returns: The event, or `nil` when none is queued and the task is cancelled or the
      ///   monitor is gone.
      /// - Throws: Nothing today; declared `throws` as Apple's is.
      public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error)
        -> CLMonitor.Event?
      {
        await mailbox.next()
      }
    }
  }

  /// The most events the `events` sequence holds for a reader; beyond it the oldest are dropped.
  static let eventBufferLimit = 4_096
}

/// The queue behind `CLMonitor.events`: events are appended as the hub delivers them (on the hub's
/// executor) and handed to waiting readers in order.
final class MonitorMailbox: Sendable {
  private struct Waiter {
    var id: Int
    var continuation: CheckedContinuation<CLMonitor.Event?, Never>
  }

  private struct State {
    var buffer: [CLMonitor.Event] = []
    var head = 0
    var waiters: [Waiter] = []
    var nextWaiter = 0
    var closed = false
    var dropped = 0
  }

  private let state = Mutex(State())
  private let limit: Int
  private let link = Mutex<WeakMonitor>(WeakMonitor())

  init(limit: Int) { self.limit = limit }

  /// The monitor, while it exists.
  var owner: CLMonitor? { link.withLock { $0.monitor } }

  /// Sets the monitor that owns the queue (weakly).
  func setOwner(_ monitor: CLMonitor) { link.withLock { $0.monitor = monitor } }

  /// How many events were dropped because nobody read them.
  var droppedCount: Int { state.withLock { $0.dropped } }

  /// Queues events (or hands them to waiting readers).
  func yield(_ events: [CLMonitor.Event]) {
    guard !events.isEmpty else { return }
    var resumes: [(CheckedContinuation<CLMonitor.Event?, Never>, CLMonitor.Event)] = []
    state.withLock { state in
      guard !state.closed else { return }
      for event in events {
        if !state.waiters.isEmpty {
          resumes.append((state.waiters.removeFirst().continuation, event))
          continue
        }
        state.buffer.append(event)
        if state.buffer.count - state.head > limit {
          state.head += 1
          state.dropped += 1
        }
        if state.head > 1_024, state.head * 2 > state.buffer.count {
          state.buffer.removeFirst(state.head)
          state.head = 0
        }
      }
    }
    for (continuation, event) in resumes { continuation.resume(returning: event) }
  }

  /// The next event: a queued one, or the next one yielded; `nil` when the task is cancelled or the
  /// queue is closed and empty.
  func next() async -> CLMonitor.Event? {
    let id = state.withLock { state -> Int in
      defer { state.nextWaiter += 1 }
      return state.nextWaiter
    }
    return await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<CLMonitor.Event?, Never>) in
        let immediate = state.withLock { state -> CLMonitor.Event?? in
          if state.head < state.buffer.count {
            let event = state.buffer[state.head]
            state.head += 1
            if state.head == state.buffer.count {
              state.buffer.removeAll(keepingCapacity: true)
              state.head = 0
            }
            return .some(event)
          }
          if state.closed || Task.isCancelled { return .some(nil) }
          state.waiters.append(Waiter(id: id, continuation: continuation))
          return nil
        }
        if let immediate { continuation.resume(returning: immediate) }
      }
    } onCancel: {
      let waiter = state.withLock { state -> Waiter? in
        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return state.waiters.remove(at: index)
      }
      waiter?.continuation.resume(returning: nil)
    }
  }

  /// Ends the queue: waiting readers get `nil`; queued events can still be read.
  func close() {
    let waiters = state.withLock { state -> [Waiter] in
      state.closed = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.continuation.resume(returning: nil) }
  }
}

/// A weak reference to a monitor (the queue must not keep its monitor alive).
struct WeakMonitor {
  weak var monitor: CLMonitor?
}
