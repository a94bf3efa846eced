import LocationEngine
import LocationModel
import LocationSources
import LocationStore

// Writes the store must take before anyone is told (README, "When the store fails"): the hub
// applies ``CommitOutbox``'s rule to them on its executor. A failed commit is "not yet": the
// region events wait, in order, and the commit is tried again with backoff on the hub's clock;
// they are delivered once it succeeds, exactly once. Locations keep flowing meanwhile.
extension LocationHub {
  /// Writes waiting for the store (0 when it takes everything).
  package var heldWrites: Int { state.withLock { $0.outbox.held.count } }

  /// Hands a write to the outbox and does what it says (on the executor).
  func submit(_ write: HeldWrite) {
    let now = clock.now.monotonic
    perform(state.withLock { $0.outbox.submit(write, at: now) })
  }

  /// The retry timer fired (on the executor).
  private func retryCommits() {
    let now = clock.now.monotonic
    perform(state.withLock { $0.outbox.retryDue(at: now) })
  }

  /// Applies the outbox's actions in order, committing, releasing and arming as told, until it has
  /// nothing more to do.
  private func perform(_ actions: [CommitOutbox<HeldWrite>.Action]) {
    var queue = actions[...]
    while let action = queue.popFirst() {
      switch action {
      case .commit(let write):
        let failure = commit(write)
        let now = clock.now.monotonic
        queue.append(
          contentsOf: state.withLock { state -> [CommitOutbox<HeldWrite>.Action] in
            state.lastStoreFailure = failure
            return failure == nil ? state.outbox.succeeded(at: now) : state.outbox.failed(at: now)
          })
      case .release(let write):
        release(write)
      case .armRetry(let deadline):
        let token = clock.schedule(at: deadline) { [self] in
          executor.run { [self] in retryCommits() }
        }
        state.withLock { $0.retryTimer.replace(with: token) }?.cancel()
      case .began:
        let (held, cause) = state.withLock { ($0.outbox.held.count, $0.lastStoreFailure) }
        HubLog.write(
          .info, "store",
          "\(held) write(s) held: the store cannot commit (\(cause?.message ?? "unknown")); "
            + "retrying with backoff")
      case .ended(let seconds, let released):
        state.withLock { $0.retryTimer.replace(with: nil) }?.cancel()
        HubLog.write(
          .info, "store",
          "the store commits again: \(released) held write(s) released after "
            + "\(Int(seconds.rounded())) s")
      }
    }
  }

  /// Commits one write; the error when it could not be.
  private func commit(_ write: HeldWrite) -> StoreError? {
    do throws(StoreError) {
      switch write {
      case .regionEvents(let group, let events, let time):
        try persistence.commitRegionEvents(events, group: group, app: app, time: time)
      case .regionRemoved(let group, let identifier):
        try persistence.deleteRegion(identifier: identifier, group: group, app: app)
      case .authorization(let snapshot):
        try persistence.setAuthorization(snapshot, app: app)
        try persistence.setServicesEnabled(snapshot.servicesEnabled)
      case .visit(let visit, let time):
        try persistence.commitVisit(visit, app: app, time: time)
      case .visitMonitoring(let on, let time):
        try persistence.setVisitMonitoring(on, app: app, time: time)
      }
      return nil
    } catch {
      return error
    }
  }

  /// Announces what a committed write held back.
  private func release(_ write: HeldWrite) {
    switch write {
    case .regionEvents(let group, let events, _):
      let clients = state.withLock { $0.clients.all.map(\.client) }
      for client in clients { client.hub(self, deliver: .regionEvents(group: group, events)) }
    case .visit(let visit, _):
      let clients = state.withLock { $0.clients.all.map(\.client) }
      for client in clients { client.hub(self, deliver: .visit(visit)) }
    case .regionRemoved, .authorization, .visitMonitoring:
      // Nobody waits for these: the engine and the clients already have them.
      break
    }
  }

  /// Stores a region the engine has just added.
  /// - Returns: Why it cannot be monitored, or nil when it is stored. While the outbox holds
  ///   writes the store is failing: the region is refused without trying (it would be stored
  ///   ahead of the held writes, and a held state could overwrite it).
  func storeRegion(_ spec: RegionSpec, state regionState: RegionState, group: String)
    -> String?
  {
    if let held = state.withLock({ $0.outbox.held.isEmpty ? nil : $0.lastStoreFailure }) {
      return "the region could not be stored: the store cannot commit now (\(held.message))"
    }
    do throws(StoreError) {
      try persistence.saveRegion(spec, state: regionState, group: group, app: app)
      return nil
    } catch {
      return "the region could not be stored (\(error.message))"
    }
  }

  /// A region the engine added cannot be stored: it is not monitored. The requester hears
  /// `regionFailed` (`CLError.regionMonitoringFailure`), the engine drops it at once (a stored
  /// region it replaced goes too, through the outbox), and its events of this step are not
  /// announced.
  func refuse(group: String, identifier: String, _ reason: String, requester: ClientID?) {
    state.withLock { _ = $0.refused.insert(RegionKey(group: group, identifier: identifier)) }
    HubLog.write(.info, "store", "region not monitored: \(reason)")
    if let requester {
      client(requester)?.hub(
        self, deliver: .regionFailed(group: group, identifier: identifier, .notStored(reason)))
    }
    let now = clock.now
    let effects = state.withLock {
      $0.engine.handle(.removeRegion(group: group, identifier: identifier), at: now)
    }
    for effect in effects { apply(effect) }
  }
}

extension Optional where Wrapped == any Cancellable {
  /// Replaces the value, returning the old one (to cancel outside the lock).
  mutating func replace(with new: (any Cancellable)?) -> (any Cancellable)? {
    defer { self = new }
    return self
  }
}
