import LocationEngine
import LocationSources

// Wi-Fi learning in the hub (README, "Wi-Fi"): the learning hold.
extension LocationHub {
  /// The longest a receiver stays on after it is no longer needed, waiting for a scan to meet its
  /// last good fix, seconds (NetworkManager's scans come every few seconds while it is asked).
  package static let learningHoldLimit = 15.0

  /// The learning hold (our rule). A significant-change burst ends at the receiver's first fix,
  /// usually before the scanner's next scan: without more, a device that only ever monitors
  /// significant changes would never learn the access points it passes. So when the hub is about
  /// to stop a receiver while a scanner runs beside it, the machine learns, a significant-change
  /// client is monitoring (and authorized), and the receiver's last good fix has met no scan yet
  /// (`WifiKnowledge.awaitsScan`), both stay on until a scan meets a fix or
  /// ``learningHoldLimit`` passes; it ends at once when monitoring stops or authorization is
  /// withdrawn. Each burst then teaches one scan, for a few seconds of
  /// receiver time. Called in ``reconcileSources()`` under the state's lock.
  ///
  /// - Parameters:
  ///   - chosen: The sources to run; the held ones are added.
  ///   - state: The hub's state.
  ///   - now: The hub monotonic instant.
  /// - Returns: True when a hold starts (its timer is the caller's to arm).
  func holdForLearning(_ chosen: inout Set<Int>, _ state: inout State, now: Double) -> Bool {
    guard let candidates = state.candidates else { return false }
    let held = candidates.indices.filter {
      let descriptor = candidates[$0].source.descriptor
      return candidates[$0].run.running && !candidates[$0].run.finished
        && (descriptor.power == .high || descriptor.producesScans)
    }
    if let hold = state.learningHold {
      // Over when its time is up, or when nobody monitors any more (stopped, not authorized):
      // its timer then finds nothing to end.
      guard hold.until > now, state.engine.monitorsSignificantChanges else {
        state.learningHold = nil
        return false
      }
      chosen.formUnion(held)
      return false
    }
    let stopsReceiver = held.contains {
      candidates[$0].source.descriptor.power == .high && !chosen.contains($0)
    }
    let scans = held.contains { candidates[$0].source.descriptor.producesScans }
    guard stopsReceiver, scans, state.engine.monitorsSignificantChanges,
      learning?.awaitsScan(at: clock.now.wall) == true
    else { return false }
    state.learningHold = (until: now + Self.learningHoldLimit, timer: nil)
    chosen.formUnion(held)
    return true
  }

  /// Arms the timer that ends the hold that started at `now`.
  func armLearningHold(now: Double) {
    let timer = clock.schedule(at: now + Self.learningHoldLimit) { [self] in
      executor.run { [self] in endLearningHold() }
    }
    let armed = state.withLock { state -> Bool in
      guard state.learningHold != nil else { return false }
      state.learningHold?.timer = timer
      return true
    }
    if !armed { timer.cancel() }
  }

  /// Ends the hold when the scan it waited for has been learned (after a fix or a scan).
  func endLearningHoldIfTaught() {
    guard state.withLock({ $0.learningHold != nil }),
      learning?.awaitsScan(at: clock.now.wall) != true
    else { return }
    endLearningHold()
  }

  /// Ends the hold, if one is on; the sources no longer needed stop.
  func endLearningHold() {
    let hold = state.withLock { state in
      defer { state.learningHold = nil }
      return state.learningHold
    }
    guard let hold else { return }
    hold.timer?.cancel()
    reconcileSources()
  }
}
