import Dispatch
import Foundation
import LocationEngine
import LocationModel
import LocationSources
import Synchronization

// Sources of the hub: made on first demand, started and stopped by the arbiter's choice
// (`SourceArbiter`), their runs tracked by `SourceRun`.
extension LocationHub {
  // MARK: Sources

  /// Starts and stops sources so that the arbiter's choice for the current demand runs
  /// (`SourceArbiter`), then tells the engine which sources run. With every source finished for
  /// good, the engine hears that the sources have ended.
  func reconcileSources() {
    let (needed, made) = state.withLock {
      ($0.demand != nil || $0.headingDemand || $0.beaconDemand, $0.candidates != nil)
    }
    if needed, !made {
      let sources: [any LocationSource]
      switch self.sources {
      case .urls(let urls):
        // GeoClue's accuracy level follows the strongest accuracy asked for when sources are
        // first needed.
        let accuracy = state.withLock { $0.demand }
        sources = urls.map { SourceFactory.make($0, accuracy: accuracy) }
      case .objects(let make):
        sources = make()
      case .unavailable(let message):
        state.withLock { $0.problem = message }
        process(.sourcesEnded)
        return
      }
      guard !sources.isEmpty else {
        state.withLock { $0.problem = HubConfiguration.noSourceMessage }
        process(.sourcesEnded)
        return
      }
      state.withLock { $0.candidates = sources.map { Candidate(source: $0) } }
    }
    var toStart: [(Int, Int, any LocationSource)] = []
    var toStop: [any LocationSource] = []
    let now = clock.now.monotonic
    let (infos, changed, allFinished, holds) = state.withLock {
      state -> ([SourceInfo], Bool, Bool, Bool) in
      guard var candidates = state.candidates else { return ([], false, false, false) }
      var chosen = SourceArbiter.select(candidates.map(\.arbiterView), accuracy: state.demand)
      if state.headingDemand {
        // Headings: every source that may produce them runs while a client wants headings.
        for index in candidates.indices
        where candidates[index].source.descriptor.producesHeading && !candidates[index].run.finished
        {
          chosen.insert(index)
        }
      }
      if learnsWifi,
        chosen.contains(where: { candidates[$0].source.descriptor.power == .high })
      {
        // Wi-Fi learning: a scanner runs beside a receiver, so that its scans meet good fixes.
        for index in candidates.indices
        where candidates[index].source.descriptor.producesScans && !candidates[index].run.finished {
          chosen.insert(index)
        }
      }
      let holds = learnsWifi && holdForLearning(&chosen, &state, now: now)
      if state.beaconDemand {
        // Beacons: every source that may hear them runs while beacons are wanted.
        for index in candidates.indices
        where candidates[index].source.descriptor.producesBeacons && !candidates[index].run.finished
        {
          chosen.insert(index)
        }
      }
      var changed = false
      for index in candidates.indices {
        let wanted = chosen.contains(index)
        guard wanted != candidates[index].run.running else { continue }
        changed = true
        // Every source reports when it is on (issue 7): on-time is kept on the hub's clock.
        if wanted {
          let generation = candidates[index].run.start(at: now)
          toStart.append((index, generation, candidates[index].source))
        } else {
          candidates[index].run.stop(at: now)
          toStop.append(candidates[index].source)
        }
      }
      state.candidates = candidates
      if changed, !toStart.isEmpty { state.problem = nil }
      let infos = candidates.filter(\.run.running).map {
        SourceInfo(
          name: $0.source.descriptor.url, nominalAccuracy: $0.source.descriptor.nominalAccuracy,
          power: $0.source.descriptor.power.rawValue,
          producesLocation: $0.source.descriptor.producesLocation)
      }
      let allFinished =
        state.demand != nil && !candidates.isEmpty && candidates.allSatisfy(\.run.finished)
      return (infos, changed, allFinished, holds)
    }
    if holds { armLearningHold(now: now) }
    for source in toStop {
      HubLog.write(.info, source.descriptor.url, "stopped: no longer needed")
      source.stop()
    }
    if changed { process(.sourcesChanged(infos)) }
    for (index, generation, source) in toStart {
      HubLog.write(.info, source.descriptor.url, "starting")
      source.start(
        context: HubSourceContext(
          hub: self, generation: generation, index: index, url: source.descriptor.url))
    }
    // Tell the end once, when the last source stops for good (a refusal, as a denial).
    if allFinished, changed {
      let denied = state.withLock { $0.lastFailureWasDenial }
      process(denied ? .sourcesDenied : .sourcesEnded)
    }
  }

  func setDemand(_ accuracy: Double?) {
    let changed = state.withLock { state -> Bool in
      let changed = state.demand != accuracy
      state.demand = accuracy
      if accuracy == nil {
        // Nobody needs locations: ended sources may run again when asked next time.
        for index in (state.candidates ?? []).indices { state.candidates?[index].run.clearFinish() }
      }
      return changed
    }
    if changed { reconcileSources() }
  }

  func sourceEmitted(_ fix: Fix, generation: Int, index: Int) {
    // On the source's thread when the hub is idle: no wake-up of another thread between the
    // receiver's bytes and the engine.
    executor.runHere { [self] in
      LatencyTrace.mark(.hub, fixTime: fix.time)
      let outcome = state.withLock {
        $0.candidates?[index].run.report(.fix, generation: generation) ?? .stale
      }
      guard case .accepted(let recovered) = outcome else { return }
      HubLog.write(
        .debug, fix.source,
        "fix at \(Date(timeIntervalSince1970: fix.time)) ±\(String(format: "%.1f", fix.horizontalAccuracy)) m"
          + (fix.hasValidCoordinate ? "" : " (invalid, dropped)"))
      // On a caller's thread (an app's reading run loop, embedded; a source's thread, such as
      // `locationd`'s pool handing the fix to every hub), only the engine's step, its deliveries
      // and its timers run: a recovered source (reconciling starts and stops sources) and a
      // learning hold send the rest of the fix's work to the queue, and so does Wi-Fi learning
      // when a scan waits (the store).
      let onAppThread = executor.isAppThread
      if onAppThread && (recovered || state.withLock { $0.learningHold != nil }) {
        executor.run { [self] in accepted(fix, recovered: recovered, onAppThread: false) }
        return
      }
      accepted(fix, recovered: recovered, onAppThread: onAppThread)
    }
  }

  /// How many clients a rehearsal reaches (the first in id order): enough to warm the code of a
  /// delivery, few enough that a daemon's hub with hundreds of clients does not do a fix's work
  /// twice.
  static let rehearsedClients = 4

  /// Rehearses a fix's deliveries (a source's wake-up before an epoch, `SourceContext.rehearse`):
  /// the first few clients go through a delivery of it and drop it (`HubClient.rehearse`). The
  /// engine does not run: nothing is counted, stored or delivered, and no state changes.
  package func rehearse(_ fix: Fix) {
    let clients = state.withLock { $0.clients.first(Self.rehearsedClients) }
    for client in clients { client.rehearse([fix]) }
  }

  private func accepted(_ fix: Fix, recovered: Bool, onAppThread: Bool) {
    if recovered { reconcileSources() }
    // The fix is noted before the engine sees it (a learning hold and the sources chosen depend on
    // whether a scan met it); what it taught is written to the store after its deliveries.
    var learned = WifiKnowledge.Learned.nothing
    if let wifi {
      if !onAppThread {
        learned = wifi.learn(fix)
      } else if !wifi.noteWithoutStore(fix) {
        executor.run { wifi.note(fix) }
      }
    }
    endLearningHoldIfTaught()
    process(.fix(fix), onAppThread: onAppThread)
    wifi?.store(learned)
  }

  func sourceEmittedScan(_ scan: WifiScan, generation: Int, index: Int) {
    executor.run { [self] in
      let current = state.withLock {
        $0.candidates?[index].run.isCurrent(generation) ?? false
      }
      guard current, let wifi else { return }
      // Not located (the access points heard are not known yet): an outage, once, so that the
      // arbiter runs the next source beside it (whose good fixes teach the scanner) until a scan
      // is located again.
      let failing = state.withLock { $0.candidates?[index].run.failing ?? true }
      wifi.receive(
        scan, failing: failing,
        emit: { [self] fix in sourceEmitted(fix, generation: generation, index: index) },
        fail: { sourceFailed($0, generation: generation, index: index) })
      endLearningHoldIfTaught()
    }
  }

  func sourceEmittedHeading(_ sample: HeadingSample, generation: Int, index: Int) {
    executor.run { [self] in
      let outcome = state.withLock {
        $0.candidates?[index].run.report(.heading, generation: generation) ?? .stale
      }
      if outcome != .stale { process(.heading(sample)) }
    }
  }

  func sourceEmittedAdvertisement(
    _ advertisement: BeaconAdvertisement, generation: Int, index: Int
  ) {
    executor.runHere { [self] in
      let outcome = state.withLock {
        $0.candidates?[index].run.report(.advertisement, generation: generation) ?? .stale
      }
      guard case .accepted(let recovered) = outcome else { return }
      // As for a fix: on a source's thread (`locationd`'s fan-out to every app's hub, a radio's
      // own thread), the step and what it delivers run here, and a beacon region's commit and
      // the sources' reconciling go to the queue, so that the next hub hears the advertisement
      // without waiting for this one's store.
      let onAppThread = executor.isAppThread
      if recovered && onAppThread {
        executor.run { [self] in
          reconcileSources()
          process(.advertisement(advertisement))
        }
        return
      }
      if recovered { reconcileSources() }
      process(.advertisement(advertisement), onAppThread: onAppThread)
    }
  }

  func sourceFailed(_ error: SourceError, generation: Int, index: Int) {
    executor.run { [self] in
      let current = state.withLock { state -> Bool in
        let outcome =
          state.candidates?[index].run.report(
            .failure(permanent: error.isPermanent), generation: generation) ?? .stale
        guard outcome != .stale else { return false }
        state.problem = error.message
        state.lastFailureWasDenial = error.code == .denied
        return true
      }
      guard current else { return }
      HubLog.write(.info, error.message, error.isPermanent ? "failed for good" : "failed; retrying")
      let (allFinished, covered) = state.withLock { state -> (Bool, Bool) in
        let candidates = state.candidates ?? []
        // Another location source that has not ended can take over from an unlocated scan.
        let covered = candidates.indices.contains {
          $0 != index && candidates[$0].source.descriptor.producesLocation
            && !candidates[$0].run.finished
        }
        return (candidates.allSatisfy(\.run.finished), covered)
      }
      // When nothing is left, the end says it all (one error, with this message); a scan that
      // could not be located while another source can serve is no news for clients.
      if !allFinished, !(error.code == .notLocated && covered) {
        process(.sourceFailed(source: error.message, reason: error.code.rawValue))
      }
      reconcileSources()
    }
  }

  func sourceEnded(generation: Int, index: Int) {
    executor.run { [self] in
      let outcome = state.withLock {
        $0.candidates?[index].run.report(.end, generation: generation) ?? .stale
      }
      if outcome != .stale { reconcileSources() }
    }
  }

  /// Whether a configured (or discovered) source can produce headings: a compass is present
  /// (`headingAvailable()`). Sources are made, not started, to ask them.
  package var headingAvailable: Bool {
    if let known = state.withLock({ $0.headingCapable }) { return known }
    let existing = state.withLock { $0.candidates?.map(\.source) }
    let sources: [any LocationSource]
    if let existing {
      sources = existing
    } else {
      switch self.sources {
      case .urls(let urls): sources = urls.map { SourceFactory.make($0) }
      case .objects(let make): sources = make()
      case .unavailable: sources = []
      }
    }
    let capable = sources.contains { $0.descriptor.producesHeading }
    state.withLock { $0.headingCapable = capable }
    return capable
  }

  /// Whether a configured (or discovered) source can hear beacons now
  /// (`isRangingAvailable()`): one that produces advertisements and says it is available (a
  /// Bluetooth adapter present and powered, a recording that exists).
  package var beaconsAvailable: Bool {
    switch sources {
    case .urls(let urls): return urls.contains { SourceDiscovery.hearsBeacons($0) }
    case .objects(let make):
      // Relays of `locationd`'s pool carry the real source's URL: ask it as for a URL.
      return make().contains { source in
        guard source.descriptor.producesBeacons else { return false }
        guard let url = try? SourceURL.parse(source.descriptor.url) else { return true }
        return SourceDiscovery.hearsBeacons(url)
      }
    case .unavailable: return false
    }
  }

  /// How long each configured source has been on, on the hub's clock (issue 7, "every source
  /// reports when it is on"); empty before any source was needed.
  package var sourceUsage: [SourceUsage] {
    let now = clock.now.monotonic
    return state.withLock { state in
      (state.candidates ?? []).map {
        SourceUsage(
          url: $0.source.descriptor.url, power: $0.source.descriptor.power,
          running: $0.run.running, onSeconds: $0.run.onTime(at: now))
      }
    }
  }

  /// The URLs of the sources running now.
  package var runningSources: [String] {
    state.withLock { ($0.candidates ?? []).filter(\.run.running).map(\.source.descriptor.url) }
  }
}

/// What a running source sees of the hub.
private struct HubSourceContext: SourceContext {
  let hub: LocationHub
  let generation: Int
  let index: Int
  let url: String

  var now: EngineInstant {
    let now = hub.clock.now
    return EngineInstant(monotonic: now.monotonic, wall: now.wall)
  }

  func emit(_ fix: Fix) {
    var fix = fix
    if fix.source.isEmpty { fix.source = url }
    hub.sourceEmitted(fix, generation: generation, index: index)
  }

  func emitHeading(_ sample: HeadingSample) {
    var sample = sample
    if sample.source.isEmpty { sample.source = url }
    hub.sourceEmittedHeading(sample, generation: generation, index: index)
  }

  func emitAdvertisement(_ advertisement: BeaconAdvertisement) {
    hub.sourceEmittedAdvertisement(advertisement, generation: generation, index: index)
  }

  func emitScan(_ scan: WifiScan) {
    var scan = scan
    if scan.source.isEmpty { scan.source = url }
    hub.sourceEmittedScan(scan, generation: generation, index: index)
  }

  func fail(_ error: SourceError) { hub.sourceFailed(error, generation: generation, index: index) }

  func rehearse(_ fix: Fix) { hub.rehearse(fix) }

  func end() { hub.sourceEnded(generation: generation, index: index) }

  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    hub.clock.schedule(at: hub.clock.now.monotonic + seconds, action)
  }

  var readingRunLoop: ReadingRunLoop? { hub.readingRunLoop }
}

/// How long one source has been on.
package struct SourceUsage: Sendable, Equatable {
  /// The source's URL.
  package var url: String
  /// Its power cost.
  package var power: PowerCost
  /// Whether it runs now.
  package var running: Bool
  /// Seconds it has been on since the hub made it (hub clock).
  package var onSeconds: Double

  /// Creates a record.
  package init(url: String, power: PowerCost, running: Bool, onSeconds: Double) {
    self.url = url
    self.power = power
    self.running = running
    self.onSeconds = onSeconds
  }
}
