import CEpoll

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What a thread that reads a receiver (or the daemon's socket) does before a steady receiver's
/// next epoch is due (`EpochCadence`): wake up a little before it and try a read (the default), or
/// poll for it (opt-in).
///
/// Why: on an idle processor, a thread blocked in `epoll_wait` has bytes tens of microseconds
/// after they were written (the processor's wake-up, then Core Foundation's run loop's own work
/// before it calls a source), and each epoch pays that once per process it crosses.
/// - `wake` (`CORELOCATION_EPOCH_WAKE`, microseconds, 1,000 unless set; 0 turns it off): the
///   reader wakes `lead` before the epoch is due, tries a read (a read that finds nothing, its
///   system call and the code around it; an NMEA stream then decodes its last epoch again on a
///   copy of its decoder, `NMEASession.rehearse`), and waits again. The epoch's own wake-up and
///   read then find the paths they take just used: in `locbench latency`, the time from the
///   terminal's write to the reader's `read` fell by about 0.05 ms per process. The price is one
///   more wake-up per epoch for each reading process, some tens of microseconds of processor
///   time.
/// - `spin` (`CORELOCATION_EPOCH_SPIN`, microseconds, off unless set; it wins over `wake`): the
///   reader polls from `lead` before the epoch until `lead` after it, so that the epoch finds it
///   running, not halted. The price is up to twice the lead of processor time per epoch (0.1 % of
///   a processor for a 0.5 ms lead at 1 Hz, 1 % at 10 Hz), on the reading thread, which for an
///   app's main run loop is the main thread.
///
/// Either gives up once the epoch was due and waits as before: it never delays an epoch, and a
/// receiver that stops or changes its rate costs at most one early wake-up or window.
package enum EpochLead: Equatable, Sendable {
  /// Wake up this many seconds before the epoch is due, try a read, and wait again.
  case wake(Double)
  /// Poll from this many seconds before the epoch is due until as many after.
  case spin(Double)

  /// The longest lead accepted, in seconds: 5 ms.
  package static let maximum = 0.005
  /// The wake-up's lead when `CORELOCATION_EPOCH_WAKE` is not set: 1 ms.
  package static let defaultWake = 0.001

  /// The lead this process uses, from `CORELOCATION_EPOCH_SPIN` and `CORELOCATION_EPOCH_WAKE`;
  /// nil when both are off.
  package static let configured: EpochLead? = parse(
    spin: getenv("CORELOCATION_EPOCH_SPIN").map { String(cString: $0) },
    wake: getenv("CORELOCATION_EPOCH_WAKE").map { String(cString: $0) })

  /// The lead the two settings (microseconds) ask for: a spin when `spin` is a positive number;
  /// else a wake-up, of `wake` when it is a number (0 or less: none) and of `defaultWake` when it
  /// is unset or not a number. Leads are capped at `maximum`.
  package static func parse(spin: String?, wake: String?) -> EpochLead? {
    if let spin, let micros = Double(spin), micros.isFinite, micros > 0 {
      return .spin(min(micros / 1_000_000, maximum))
    }
    guard let wake, let micros = Double(wake), micros.isFinite else { return .wake(defaultWake) }
    return micros > 0 ? .wake(min(micros / 1_000_000, maximum)) : nil
  }

  /// What `EpochLead.wait` returns after an early wake-up with nothing to read: no events, and
  /// the caller tries its read anyway (it finds nothing, or the epoch's first bytes).
  package static let wakeUpEvents: Int32 = 0

  /// How a reader waits for its next bytes, given the window before the next epoch.
  package enum Plan: Equatable, Sendable {
    /// Waits until bytes come, however long.
    case block
    /// Waits until bytes come or `at` (monotonic seconds), then tries a read.
    case wake(at: Double)
    /// Waits until bytes come or `from`, then polls until `until`, then waits as before.
    case spin(from: Double, until: Double)
  }

  /// The plan for a wait that begins at `now`: none without a window, or when `reads` is false
  /// (another reader has the descriptor for now: a run loop reading it; the thread is then not
  /// woken for the window), or after a wake-up's moment has passed (this is the wait after it).
  package static func plan(window: EpochWindow?, now: Double, reads: Bool) -> Plan {
    guard let window, reads else { return .block }
    guard window.spins else { return window.start > now ? .wake(at: window.start) : .block }
    return window.end > now ? .spin(from: window.start, until: window.end) : .block
  }

  /// Waits on an epoll instance for its events (`cepoll_wait_events`) as `plan` says: the wait
  /// before a wake-up or a spin is `epoll_pwait2`'s, to the nanosecond.
  /// - Returns: the events, as `cepoll_wait_events` gives them (-1 on an error), or
  ///   `wakeUpEvents` after a wake-up with nothing to read.
  package static func wait(
    _ instance: Int32, window: EpochWindow?, reads: () -> Bool = { true }
  ) -> Int32 {
    let now = LiveClock.monotonicSeconds()
    switch plan(window: window, now: now, reads: window == nil || reads()) {
    case .block:
      return cepoll_wait_events(instance, -1)
    case .wake(let at):
      let events = cepoll_wait_events_for(instance, Int64((at - now) * 1e9))
      return events != 0 ? events : wakeUpEvents
    case .spin(let from, let until):
      if from > now {
        let events = cepoll_wait_events_for(instance, Int64((from - now) * 1e9))
        if events != 0 { return events }
      }
      var events: Int32 = 0
      _ = spin(until: until) {
        events = cepoll_wait_events(instance, 0)
        return events != 0
      }
      return events != 0 ? events : cepoll_wait_events(instance, -1)
    }
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

/// When a reader wakes up or spins before an epoch (`EpochLead`), in monotonic seconds.
package struct EpochWindow: Equatable, Sendable {
  /// When to wake up, or to begin spinning.
  package var start: Double
  /// When a spin gives up (the epoch was due `lead` before); for a wake-up, when it was due.
  package var end: Double
  /// Whether the reader polls from `start` to `end` (else it tries one read at `start`).
  package var spins: Bool
}

/// When a receiver's next epoch is due, from when its last ones arrived (monotonic seconds).
///
/// Our rule: the period is the median of the last eight intervals between arrivals, and it is
/// trusted only when every one of them is within a tenth of it (a steady receiver; a receiver
/// that pauses, changes its rate or sends bursts gets no window until eight steady intervals have
/// passed again). The next epoch is due one period after the last arrival. No window is given for
/// periods shorter than 20 leads of a spin, where spinning would take more than a tenth of the
/// processor, or 4 leads of a wake-up, where it would come nearer the last epoch than the next.
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

  /// When to wake up or spin for the next epoch, nil when no steady period is known or when it is
  /// too short for `lead`.
  package func window(lead: EpochLead) -> EpochWindow? {
    guard let period, let last = arrivals.last else { return nil }
    let due = last + period
    switch lead {
    case .spin(let seconds):
      guard period >= 20 * seconds else { return nil }
      return EpochWindow(start: due - seconds, end: due + seconds, spins: true)
    case .wake(let seconds):
      guard period >= 4 * seconds else { return nil }
      return EpochWindow(start: due - seconds, end: due, spins: false)
    }
  }
}
