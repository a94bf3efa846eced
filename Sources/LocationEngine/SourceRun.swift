/// The life of one source as its owner sees it (the embedded hub for its sources, `locationd`'s
/// pool for the real ones): whether it runs, which run it is on, whether it is in an outage or
/// finished for good, and how long it has been on. A value type; the owner starts and stops the
/// source itself, outside any lock, when these methods say so.
///
/// Rules:
/// - **Runs.** Every start and every stop begins a new generation, so that a report from a run
///   that was stopped (a late callback) is recognised and ignored (``report(_:generation:)``).
/// - **Outage.** A transient failure marks the source failing; its next fix ends the outage
///   (``Outcome/accepted(recovered:)`` says so). Stopping the source forgets an outage.
/// - **Finished.** A permanent failure or an end marks it finished; it stays finished, and is not
///   started for anyone, until the owner clears it (``clearFinish()``: nobody needs it any more).
/// - **On-time.** Seconds running are counted on the owner's monotonic clock (every source reports
///   when it is on).
package struct SourceRun: Sendable, Equatable {
  /// What a running source reported.
  package enum Report: Sendable, Equatable {
    /// A fix.
    case fix
    /// A heading sample.
    case heading
    /// A beacon advertisement (a Bluetooth source heard something: it works again).
    case advertisement
    /// A failure, permanent or not.
    case failure(permanent: Bool)
    /// The end of a recording.
    case end
  }

  /// What a report means.
  package enum Outcome: Sendable, Equatable {
    /// From a run that has been stopped (or another generation): ignore it.
    case stale
    /// From the current run; `recovered` when a fix ended an outage.
    case accepted(recovered: Bool)
  }

  /// Whether the source runs.
  package private(set) var running = false
  /// The current run's number.
  package private(set) var generation = 0
  /// How many times it was started.
  package private(set) var starts = 0
  /// Whether it is in an outage (a transient failure and no fix since).
  package private(set) var failing = false
  /// Whether it failed or ended for good.
  package private(set) var finished = false
  private var onSince: Double?
  private var onSeconds = 0.0

  /// A source that has never run.
  package init() {}

  /// Starts a run.
  /// - Parameter now: Monotonic seconds.
  /// - Returns: The run's generation, to tag its reports with.
  package mutating func start(at now: Double) -> Int {
    running = true
    generation += 1
    starts += 1
    failing = false
    onSince = now
    return generation
  }

  /// Stops the run; an outage is forgotten.
  /// - Parameter now: Monotonic seconds.
  package mutating func stop(at now: Double) {
    running = false
    generation += 1
    failing = false
    if let since = onSince { onSeconds += max(0, now - since) }
    onSince = nil
  }

  /// Whether reports tagged with `generation` come from the current run.
  package func isCurrent(_ generation: Int) -> Bool {
    running && self.generation == generation
  }

  /// A report from the run `generation`.
  /// - Returns: `stale` for an old run; else what it changed.
  package mutating func report(_ report: Report, generation: Int) -> Outcome {
    guard isCurrent(generation) else { return .stale }
    switch report {
    case .fix, .advertisement:
      let recovered = failing
      failing = false
      return .accepted(recovered: recovered)
    case .heading:
      return .accepted(recovered: false)
    case .failure(let permanent):
      if permanent { finished = true } else { failing = true }
      return .accepted(recovered: false)
    case .end:
      finished = true
      return .accepted(recovered: false)
    }
  }

  /// Forgets a finish: the source may run again (nobody needs it, or everybody let it go).
  package mutating func clearFinish() { finished = false }

  /// Seconds it has been on, up to `now`.
  package func onTime(at now: Double) -> Double {
    onSeconds + (onSince.map { max(0, now - $0) } ?? 0)
  }
}
