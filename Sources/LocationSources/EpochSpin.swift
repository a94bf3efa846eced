import CEpoll

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The opt-in spin before a receiver's next epoch (`CORELOCATION_EPOCH_SPIN`, in microseconds):
/// a thread that reads a receiver (or the daemon's socket) stops waiting a little before the next
/// epoch is due and polls for it instead, so that the epoch finds it running, not halted.
///
/// Why: on an idle processor, a thread blocked in `epoll_wait` has bytes tens of microseconds
/// after they were written (the processor's wake-up, then Core Foundation's run loop's own work
/// before it calls a source), and each epoch pays that once per process it crosses. A thread that
/// is already running sees them at once. The price is processor time: up to twice the lead per
/// epoch (0.1 % of a processor for a 0.5 ms lead at 1 Hz, 1 % at 10 Hz), on the reading thread,
/// which for an app's main run loop is the main thread. Off unless set; 0 turns it off.
///
/// When: only while the epochs come at a steady rate, learned from their arrivals
/// (`EpochCadence`). The spin begins `lead` before the epoch is due and gives up `lead` after it,
/// then waits as before; it never delays the epoch, and a receiver that stops or changes its rate
/// costs at most one window.
package enum EpochSpin {
  /// The longest lead accepted, in seconds: 5 ms.
  package static let maximumLead = 0.005

  /// The lead, in seconds, from `CORELOCATION_EPOCH_SPIN` (microseconds); nil when it is unset,
  /// 0, or not a number. Larger values are capped at `maximumLead`.
  package static let lead: Double? = parse(
    getenv("CORELOCATION_EPOCH_SPIN").map { String(cString: $0) })

  /// The lead that `text` (microseconds) asks for, in seconds.
  package static func parse(_ text: String?) -> Double? {
    guard let text, let micros = Double(text), micros.isFinite, micros > 0 else { return nil }
    return min(micros / 1_000_000, maximumLead)
  }

  /// Waits on an epoll instance for its events (`cepoll_wait_events`); with a spin window, only
  /// until the window opens (`epoll_pwait2`), then polls until it closes, then waits as before.
  /// - Returns: the events, as `cepoll_wait_events` gives them (-1 on an error).
  package static func wait(_ instance: Int32, window: (start: Double, end: Double)?) -> Int32 {
    guard let window else { return cepoll_wait_events(instance, -1) }
    let untilStart = window.start - LiveClock.monotonicSeconds()
    if untilStart > 0 {
      let events = cepoll_wait_events_for(instance, Int64(untilStart * 1e9))
      if events != 0 { return events }
    }
    var events: Int32 = 0
    _ = spin(until: window.end) {
      events = cepoll_wait_events(instance, 0)
      return events != 0
    }
    return events != 0 ? events : cepoll_wait_events(instance, -1)
  }

  /// Polls `ready` until it says yes or `deadline` (on `clock`) has passed, yielding the
  /// processor between polls (so that the kernel's own work for the bytes, a terminal's flush
  /// for one, is not kept off a shared processor). Returns whether `ready` said yes.
  package static func spin(
    until deadline: Double, clock: () -> Double = LiveClock.monotonicSeconds, ready: () -> Bool
  ) -> Bool {
    while true {
      if ready() { return true }
      if clock() >= deadline { return false }
      sched_yield()
    }
  }
}

/// When a receiver's next epoch is due, from when its last ones arrived (monotonic seconds).
///
/// Our rule: the period is the median of the last eight intervals between arrivals, and it is
/// trusted only when every one of them is within a tenth of it (a steady receiver; a receiver
/// that pauses, changes its rate or sends bursts gets no window until eight steady intervals have
/// passed again). The next epoch is due one period after the last arrival. No window is given for
/// periods shorter than 20 leads, where spinning would take more than a tenth of the processor.
package struct EpochCadence: Sendable {
  /// How many intervals are kept.
  package static let intervals = 8

  private var arrivals: [Double] = []
  /// The period, when the last intervals are steady; worked out at each arrival, not at each
  /// wait.
  package private(set) var period: Double?

  package init() {}

  /// Notes that an epoch arrived at `time`. Times that go backwards start the learning again.
  package mutating func note(_ time: Double) {
    if let last = arrivals.last, time <= last { arrivals.removeAll(keepingCapacity: true) }
    if arrivals.count > Self.intervals { arrivals.removeFirst() }
    arrivals.append(time)
    period = Self.steadyPeriod(arrivals)
  }

  /// The median interval between `arrivals` when there are `intervals` of them and each is
  /// within a tenth of it.
  private static func steadyPeriod(_ arrivals: [Double]) -> Double? {
    guard arrivals.count > intervals else { return nil }
    var steps: [Double] = []
    steps.reserveCapacity(intervals)
    for index in 1..<arrivals.count { steps.append(arrivals[index] - arrivals[index - 1]) }
    steps.sort()
    let median = (steps[steps.count / 2 - 1] + steps[steps.count / 2]) / 2
    guard let low = steps.first, let high = steps.last, median > 0,
      median - low <= median / 10, high - median <= median / 10
    else { return nil }
    return median
  }

  /// When to begin and end spinning for the next epoch, nil when no steady period is known or
  /// when it is shorter than 20 leads.
  package func window(lead: Double) -> (start: Double, end: Double)? {
    guard let period, let last = arrivals.last, period >= 20 * lead else { return nil }
    let due = last + period
    return (due - lead, due + lead)
  }
}
