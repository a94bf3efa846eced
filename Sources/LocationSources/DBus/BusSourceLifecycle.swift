import Dispatch
import Synchronization

/// The life cycle the D-Bus sources (GeoClue, iio-sensor-proxy, BlueZ, NetworkManager) share: generations, so that calls
/// from an older start are ignored; one serial queue that owns the bus connection (sd-bus objects
/// are not thread-safe); the current session; and retries with a doubling delay on the runtime's
/// clock.
final class BusSourceLifecycle<Session: AnyObject & Sendable>: Sendable {
  private struct State {
    var generation = 0
    var context: (any SourceContext)?
    var retry: (any Cancellable)?
    var retryDelay: Double
    var session: Session?
  }

  /// The queue that owns the connection; every bus call runs on it.
  let queue: DispatchQueue
  private let queueKey = DispatchSpecificKey<Bool>()
  private let state: Mutex<State>
  private let initialDelay: Double
  private let maximumDelay: Double

  /// Creates a life cycle whose retries start at `initialDelay` seconds and double up to
  /// `maximumDelay`.
  init(label: String, initialDelay: Double, maximumDelay: Double) {
    queue = DispatchQueue(label: label)
    state = Mutex(State(retryDelay: initialDelay))
    self.initialDelay = initialDelay
    self.maximumDelay = maximumDelay
    queue.setSpecific(key: queueKey, value: true)
  }

  /// The current session, if connected.
  var session: Session? { state.withLock { $0.session } }

  /// Starts a new generation: the previous session, if any, is closed on the queue, then
  /// `connect(generation)` runs there.
  func start(
    _ context: any SourceContext, close: @escaping @Sendable (Session) -> Void,
    connect: @escaping @Sendable (Int) -> Void
  ) {
    let (generation, retry, previous) = state.withLock { state in
      state.generation += 1
      state.context = context
      state.retryDelay = initialDelay
      defer {
        state.retry = nil
        state.session = nil
      }
      return (state.generation, state.retry, state.session)
    }
    retry?.cancel()
    queue.async {
      if let previous { close(previous) }
      connect(generation)
    }
  }

  /// Ends the current generation and closes its session; when it returns, nothing more reaches
  /// the context. Safe to call from the queue itself (from inside a context call).
  func stop(close: @escaping @Sendable (Session) -> Void) {
    let (retry, session) = state.withLock { state in
      state.generation += 1
      state.context = nil
      defer {
        state.retry = nil
        state.session = nil
      }
      return (state.retry, state.session)
    }
    retry?.cancel()
    guard let session else { return }
    if DispatchQueue.getSpecific(key: queueKey) == true {
      close(session)
    } else {
      queue.sync { close(session) }
    }
  }

  /// The context of `generation`, or nil when it is stale.
  func context(for generation: Int) -> (any SourceContext)? {
    state.withLock { $0.generation == generation ? $0.context : nil }
  }

  /// Makes a connected session current (and resets the retry delay); false when `generation` is
  /// stale, in which case the caller closes it.
  func adopt(_ session: Session, generation: Int) -> Bool {
    state.withLock { state in
      guard state.generation == generation else { return false }
      state.session = session
      state.retryDelay = initialDelay
      return true
    }
  }

  /// Forgets `session` if it is still the current one; returns whether it was.
  func drop(_ session: Session, generation: Int) -> Bool {
    state.withLock { state in
      guard state.generation == generation, state.session === session else { return false }
      state.session = nil
      return true
    }
  }

  /// Reports `error` and tries `connect(generation)` again after the current delay, which then
  /// doubles (up to the maximum). Nothing happens for a stale generation.
  func retry(
    _ generation: Int, _ context: any SourceContext, _ error: SourceError,
    connect: @escaping @Sendable (Int) -> Void
  ) {
    guard
      let delay = state.withLock({ state -> Double? in
        guard state.generation == generation else { return nil }
        let delay = state.retryDelay
        state.retryDelay = min(delay * 2, maximumDelay)
        return delay
      })
    else { return }
    // The retry is scheduled before the failure is reported, so that whoever hears the failure
    // finds the retry already planned.
    let queue = self.queue
    let token = context.schedule(after: delay) { queue.async { connect(generation) } }
    let stale = state.withLock { state -> Bool in
      guard state.generation == generation else { return true }
      state.retry = token
      return false
    }
    if stale {
      token.cancel()
      return
    }
    context.fail(error)
  }
}

/// A source on D-Bus whose runs a ``BusSourceLifecycle`` keeps (GeoClue, iio-sensor-proxy, Wi-Fi,
/// BlueZ): `start`, `stop`, the current context and retries come from here; the source says how
/// to connect and how to close a session.
protocol BusSource: LocationSource {
  /// What one connection holds.
  associatedtype Session: AnyObject & Sendable
  /// The life cycle of the source's runs.
  var lifecycle: BusSourceLifecycle<Session> { get }
  /// Connects the run `generation` (on the lifecycle's queue).
  func connect(generation: Int)
  /// Closes a session (on the lifecycle's queue).
  func close(_ session: Session)
}

extension BusSource {
  /// Starts a run (the source's `start(context:)`): the previous session is closed, then
  /// `connect(generation:)` runs on the queue.
  func startRun(_ context: any SourceContext) {
    lifecycle.start(
      context, close: { [self] in close($0) }, connect: { [self] in connect(generation: $0) })
  }

  /// Ends the run (the source's `stop()`); nothing reaches its context afterwards.
  func stopRun() {
    lifecycle.stop { [self] in close($0) }
  }

  /// The context of the current generation, or nil when it is stale. Called on the queue.
  func context(for generation: Int) -> (any SourceContext)? {
    lifecycle.context(for: generation)
  }

  /// Reports `error` and schedules the next attempt with backoff. Runs on the queue.
  func retry(_ generation: Int, _ context: any SourceContext, _ error: SourceError) {
    lifecycle.retry(generation, context, error) { [self] in connect(generation: $0) }
  }

  /// Pumps the connection and handles what the service announced, until a round brings nothing:
  /// handling an event can call the service, and sd-bus reads the messages that arrive meanwhile
  /// into its queue, where the descriptor's reader never sees them. A broken connection, or the
  /// service leaving the bus, is reported through `lose` (non-permanent); `handle` returns false
  /// when it lost the run itself.
  /// - Parameters:
  ///   - name: the source's name in messages (`bluez`, `wifi`).
  ///   - service: what left the bus (`bluetoothd`, `NetworkManager`).
  func drain<Event>(
    name: String, service: String,
    pump: () throws -> (events: [Event], vanished: Bool),
    lose: (SourceError) -> Void, handle: (Event) -> Bool
  ) {
    var events: [Event]
    repeat {
      let result: (events: [Event], vanished: Bool)
      do {
        result = try pump()
      } catch {
        lose(
          SourceError(
            .disconnected, "\(name): the bus connection broke (\(error)); reconnecting",
            isPermanent: false))
        return
      }
      if result.vanished {
        lose(
          SourceError(
            .disconnected, "\(name): \(service) left the bus; reconnecting", isPermanent: false))
        return
      }
      events = result.events
      for event in events where !handle(event) { return }
    } while !events.isEmpty
  }

  /// The failure of a run that cannot reach its bus: `name: cannot connect to BUS (ERROR); ...`.
  static func busUnreachable(_ name: String, bus: String?, _ error: any Error) -> SourceError {
    SourceError(
      .unavailable,
      "\(name): cannot connect to \(bus ?? "the system bus") (\(error)); start D-Bus or set "
        + "DBUS_SYSTEM_BUS_ADDRESS",
      isPermanent: false)
  }
}
