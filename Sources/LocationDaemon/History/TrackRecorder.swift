import Dispatch
import Foundation
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import LocationStore
import Synchronization

/// The device's track history (issue 18): when `history = yes` in `locationd.conf`, the daemon's
/// own positions are kept in the store for `locationctl export`.
///
/// The daemon asks its sources for locations as an app of its own would (`locationd:history`,
/// authorized always with full accuracy by the configuration, a hub over the source pool's
/// relays, as `DevicePublisher` does): every location with a valid coordinate, at least
/// `history-interval` seconds after the last one recorded (by the fixes' times), joins a batch.
/// Rules (ours):
/// - The hub's delivery only adds to the batch (it must not block); the batch is committed in one
///   transaction at most once per ``flushInterval`` (a timer armed by the first point of a
///   batch), as soon as the clock runs it when it reaches ``batchLimit`` points, before an export
///   reads the history, and at stop.
/// - A batch the store refuses is logged (once per run of failures) and kept for the next flush,
///   up to ``pendingLimit`` points: the oldest go first beyond it. A failure never stops the
///   daemon.
/// - Points older than `history-days` are deleted at start and every ``pruneInterval``.
final class TrackRecorder: HubClient, @unchecked Sendable {
  // Safe: `state` is behind a lock; the rest is set once.
  /// The app identifier the daemon's own requests are made under.
  static let app = "locationd:history"
  /// Seconds between two commits of a batch, at most.
  static let flushInterval = 1.0
  /// Points that make a batch commit at once.
  static let batchLimit = 1000
  /// Points kept in memory while the store refuses them.
  static let pendingLimit = 100_000
  /// Seconds between two prunings.
  static let pruneInterval = 3600.0

  let settings: HistorySettings
  private let store: LocationStore
  private let hub: LocationHub
  private let clock: any HubClock

  private struct State {
    var client: ClientID?
    var lastTime: Double?
    var pending: [Fix] = []
    var flushTimer: (any Cancellable)?
    var pruneTimer: (any Cancellable)?
    var failing = false
    var stopped = false
  }

  private let state = Mutex(State())
  /// Keeps commits in order: one flush at a time.
  private let flushing = Mutex(())

  var regionGroups: Set<String> { [] }

  /// Creates the recorder (nothing runs before `start`).
  /// - Parameters:
  ///   - settings: The configuration's history keys.
  ///   - store: Where points are kept.
  ///   - sources: The pool's relays.
  ///   - clock: The daemon's clock; nil: real time, timers on a queue of the recorder's own.
  init(
    settings: HistorySettings, store: LocationStore, sources: LocationHub.Sources,
    clock: (any HubClock)?
  ) {
    self.settings = settings
    self.store = store
    self.clock = clock ?? LiveClock(queue: DispatchQueue(label: "locationd history"))
    hub = .daemonOwn(app: Self.app, sources: sources, clock: clock, reduced: nil)
  }

  /// Prunes past the retention and asks the sources for locations.
  func start() {
    prune()
    let id = hub.register(self)
    state.withLock { $0.client = id }
    hub.startUpdates(id, UpdateRequest(desiredAccuracy: -1, distanceFilter: -1))
    schedulePrune()
    DaemonLog.write(
      "history: recording positions (every \(settings.minimumInterval) s at most, kept "
        + "\(settings.retentionDays) days)")
  }

  /// Stops asking for locations and commits what waits.
  func stop() {
    let (id, timers) = state.withLock { state in
      state.stopped = true
      defer {
        state.flushTimer = nil
        state.pruneTimer = nil
      }
      return (state.client, [state.flushTimer, state.pruneTimer])
    }
    for timer in timers { timer?.cancel() }
    if let id { hub.unregister(id) }
    flush()
  }

  func hub(_ service: any LocationService, deliver delivery: HubDelivery) {
    guard case .locations(let fixes) = delivery else { return }
    let (arm, full) = state.withLock { state -> (Bool, Bool) in
      guard !state.stopped else { return (false, false) }
      let wasEmpty = state.pending.isEmpty
      for fix in fixes where Self.recordable(fix) {
        // A fix earlier than the last one recorded (a source that restarted its clock, a
        // replay that began again) is kept, and the interval counts from it.
        if let last = state.lastTime, fix.time - last < settings.minimumInterval,
          fix.time >= last
        {
          continue
        }
        state.lastTime = fix.time
        state.pending.append(fix)
      }
      // While the store refuses batches, the retry timer paces the attempts.
      let full = !state.failing && state.pending.count >= Self.batchLimit
      return (wasEmpty && !state.pending.isEmpty, full)
    }
    if arm || full {
      // A full batch is committed as soon as the clock runs it, off the hub's executor.
      let delay = full ? 0 : Self.flushInterval
      let timer = clock.schedule(at: clock.now.monotonic + delay) { [weak self] in
        self?.flush()
      }
      let stale = state.withLock { state -> (any Cancellable)? in
        defer { state.flushTimer = timer }
        return state.flushTimer
      }
      stale?.cancel()
    }
  }

  /// Commits the waiting points in one transaction; on failure they wait for the next flush.
  func flush() {
    flushing.withLock { _ in
      let (batch, timer) = state.withLock { state -> ([Fix], (any Cancellable)?) in
        defer {
          state.flushTimer = nil
          state.pending.removeAll(keepingCapacity: true)
        }
        return (state.pending, state.flushTimer)
      }
      // A flush before its timer (an export, the stop) makes the timer pointless.
      timer?.cancel()
      guard !batch.isEmpty else { return }
      do throws(StoreError) {
        try store.appendHistory(batch)
        let recovered = state.withLock { state -> Bool in
          defer { state.failing = false }
          return state.failing
        }
        if recovered { DaemonLog.write("history: the store takes points again") }
      } catch {
        let (first, dropped) = state.withLock { state -> (Bool, Int) in
          let first = !state.failing
          state.failing = true
          var kept = batch + state.pending
          let dropped = max(0, kept.count - Self.pendingLimit)
          kept.removeFirst(dropped)
          state.pending = kept
          return (first, dropped)
        }
        if first {
          DaemonLog.write(
            "history: \(batch.count) points not kept (\(error.message)); they wait for the store")
        }
        if dropped > 0 {
          DaemonLog.write("history: \(dropped) points dropped while the store refuses them")
        }
        // Tried again a flush interval later (or with the next batch).
        rearm()
      }
    }
  }

  private func rearm() {
    let stopped = state.withLock { $0.stopped || $0.flushTimer != nil }
    guard !stopped else { return }
    let timer = clock.schedule(at: clock.now.monotonic + Self.flushInterval) { [weak self] in
      self?.flush()
    }
    state.withLock { $0.flushTimer = timer }
  }

  /// Deletes the points older than the retention.
  func prune() {
    let edge = clock.now.wall - settings.retentionDays * 86_400
    do {
      let deleted = try store.pruneHistory(before: edge)
      if deleted > 0 {
        DaemonLog.write(
          "history: \(deleted) points older than \(settings.retentionDays) days deleted")
      }
    } catch {
      DaemonLog.write("history: old points not deleted (\(error.message))")
    }
  }

  private func schedulePrune() {
    let timer = clock.schedule(at: clock.now.monotonic + Self.pruneInterval) { [weak self] in
      guard let self else { return }
      prune()
      let stopped = state.withLock { $0.stopped }
      if !stopped { schedulePrune() }
    }
    let stopped = state.withLock { state -> Bool in
      if !state.stopped { state.pruneTimer = timer }
      return state.stopped
    }
    if stopped { timer.cancel() }
  }

  /// A point worth keeping: a valid coordinate and finite measures (what the store accepts).
  static func recordable(_ fix: Fix) -> Bool {
    fix.horizontalAccuracy >= 0 && fix.horizontalAccuracy.isFinite && fix.latitude.isFinite
      && abs(fix.latitude) <= 90 && fix.longitude.isFinite && abs(fix.longitude) <= 180
      && fix.time.isFinite && fix.verticalAccuracy.isFinite && fix.speed.isFinite
      && fix.course.isFinite && (fix.altitude?.isFinite ?? true)
  }
}
