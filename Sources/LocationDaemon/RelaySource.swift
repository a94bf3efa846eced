import LocationServices
import LocationSources
import Synchronization

/// An app hub's stand-in for one source of a `SourcePool` (`SourcePool.relays()`).
///
/// It has the real source's descriptor, so a hub's arbiter treats it exactly like the real source.
/// `start(context:)` acquires the pool source (the pool starts the real source on the first
/// acquire) and from then on every fix, heading, failure and end of the real source reaches
/// `context`; `stop()` releases it (the pool stops the real source on the last release). See
/// `SourcePool` for the rules: what a relay is told when it starts late, outages, sources that
/// finished for good.
///
/// `start` and `stop` are meant to be called from one serial executor (the hub's), as for every
/// `LocationSource`; a second `start` without a `stop` releases the first hold before taking the
/// new one.
package final class RelaySource: LocationSource {
  /// The real source's descriptor.
  package let descriptor: SourceDescriptor
  private let pooled: PooledSource
  /// The current hold on the pool source, while started.
  private let subscription = Mutex<Int?>(nil)

  init(pooled: PooledSource) {
    self.pooled = pooled
    self.descriptor = pooled.source.descriptor
  }

  /// Whether the relay holds its pool source (started and not stopped).
  package var isStarted: Bool { subscription.withLock { $0 != nil } }

  /// Acquires the pool source; what the real source reports goes to `context` from now on.
  /// - Parameter context: the hub's context for this source.
  package func start(context: any SourceContext) {
    if let previous = subscription.withLock({ $0.take() }) { pooled.release(previous) }
    let id = pooled.acquire(context)
    if let raced = subscription.withLock({ $0.replace(with: id) }) { pooled.release(raced) }
  }

  /// Releases the pool source; nothing more reaches the context given to `start` (except a
  /// delivery already being performed at this moment, see `SourcePool`).
  package func stop() {
    if let id = subscription.withLock({ $0.take() }) { pooled.release(id) }
  }
}

extension Optional {
  /// Stores `value` and returns what was there before.
  fileprivate mutating func replace(with value: Wrapped) -> Wrapped? {
    defer { self = value }
    return self
  }
}
