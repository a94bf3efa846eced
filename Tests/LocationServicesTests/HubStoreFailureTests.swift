import Foundation
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import LocationStore
import Synchronization
import TestSupport
import Testing

/// The hub when the store cannot commit (README, "When the store fails"): a failed commit is
/// "not yet". Region events wait, in order, and are delivered once the commit succeeds, exactly
/// once, across a restart too; locations keep flowing meanwhile. The faults are SQLite I/O errors
/// injected by CSQLite's fault-injecting VFS (`StoreFaults`), at every commit point of a region
/// evaluation; all on a manual clock.
@Suite struct HubStoreFailureTests {
  static let app = "org.example.store-failures"
  static let home = RegionSpec(identifier: "home", latitude: 52, longitude: 5, radius: 100)
  static let inside = fix(52, 5, time: 1_767_225_601)
  static let outside = fix(52.02, 5, time: 1_767_225_602)

  /// A hub on the store at `path` (through `vfs`), with one scripted source and a client.
  struct Running {
    let clock = ManualClock()
    let source = ScriptedSource()
    let client = RecordingClient()
    let store: LocationStore
    let hub: LocationHub
    let id: ClientID

    init(path: String, vfs: String?) throws {
      store = try LocationStore(path: path, vfs: vfs)
      let source = self.source
      hub = LocationHub(
        app: HubStoreFailureTests.app, sources: .objects { [source] },
        persistence: StorePersistence(store: store), policy: .grant, clock: clock)
      id = hub.register(client)
    }

    /// The region events delivered so far, one string per event.
    var events: [String] { client.regionEvents }
  }

  /// What a table row injects.
  struct Fault: Sendable, CustomTestStringConvertible {
    var operation: StoreFaults.Operation
    var failure: StoreFaults.Failure
    /// Whether every later operation fails too until the fault is lifted (a full disk), or only
    /// the one (a transient I/O error).
    var persistent: Bool

    var testDescription: String {
      "\(operation) \(failure)\(persistent ? " until lifted" : " once")"
    }
  }

  static let faults: [Fault] = [
    Fault(operation: .write, failure: .ioError, persistent: false),
    Fault(operation: .write, failure: .full, persistent: true),
    Fault(operation: .sync, failure: .ioError, persistent: false),
    Fault(operation: .sync, failure: .ioError, persistent: true),
  ]

  /// For each fault and each commit point of what one fix commits (every write, every sync its
  /// transactions make, counted first: the region evaluation's, then the last known location's):
  /// an event is never delivered before its state is in the file; when the evaluation's commit
  /// fails, the event waits while the location still goes out, and is delivered once when the
  /// retry commits; a restart on the same file delivers nothing again.
  @Test(arguments: faults)
  func aFailureAtEachCommitPointHoldsTheEventUntilItCommits(fault: Fault) throws {
    // How many of these operations one fix's commits make.
    let points = try withTemporaryDirectory { directory -> Int in
      let faults = try StoreFaults()
      let running = try Self.started(path: directory + "/store.sqlite", vfs: faults.vfs)
      faults.count([fault.operation])
      running.source.emit(Self.inside)
      #expect(running.events == ["home determined inside"])
      return faults.seen
    }
    #expect(points > 0, "a fix's commits make at least one \(fault.operation)")
    var held = 0
    for point in 0..<points {
      try withTemporaryDirectory { directory in
        let path = directory + "/store.sqlite"
        let faults = try StoreFaults()
        do {
          let running = try Self.started(path: path, vfs: faults.vfs)
          faults.arm(
            [fault.operation], after: point, persistent: fault.persistent, failure: fault.failure)
          running.source.emit(Self.inside)
          #expect(faults.failures >= 1, "point \(point)")
          #expect(running.client.locations.count == 1, "point \(point): locations keep flowing")
          let committed =
            try LocationStore(path: path).allRegions().first?.state == RegionState.inside.rawValue
          if running.events.isEmpty {
            held += 1
            #expect(!committed, "point \(point)")
            #expect(running.hub.heldWrites == 1, "point \(point)")
          } else {
            // The fault hit the last known location's transaction: the evaluation committed.
            #expect(committed, "point \(point): delivered before it was committed")
          }
          if fault.persistent {
            // Nothing new while the store fails (a fault in the last known location's save, the
            // step's last commit, comes after the evaluation was committed and delivered).
            let before = running.events
            running.clock.advance(by: 10)
            #expect(running.events == before, "point \(point): delivered while the store fails")
            faults.disarm()
          }
          running.clock.advance(by: 60)
          #expect(running.events == ["home determined inside"], "point \(point)")
          #expect(running.hub.heldWrites == 0)
          running.clock.advance(by: 600)
          #expect(running.events.count == 1, "point \(point): delivered twice")
          running.store.close()
        }
        // A restart on the same file: the committed state is where it left off.
        let restarted = try Self.started(path: path, vfs: nil)
        restarted.source.emit(Self.inside)
        #expect(restarted.events.isEmpty, "point \(point): delivered again after a restart")
        restarted.source.emit(Self.outside)
        #expect(restarted.events == ["home exited", "home determined outside"])
      }
    }
    #expect(held > 0, "some commit point belongs to the evaluation")
  }

  /// Evaluations that come while the store fails wait behind the first, and all go out in
  /// order, each once, when it commits again; the retries back off (1 s, 2 s, 4 s, ...).
  @Test func heldEvaluationsGoOutInOrderWithBackoff() throws {
    try withTemporaryDirectory { directory in
      let faults = try StoreFaults()
      let running = try Self.started(path: directory + "/store.sqlite", vfs: faults.vfs)
      faults.arm([.write], persistent: true, failure: .full)
      running.source.emit(Self.inside)
      running.source.emit(Self.outside)
      running.source.emit(fix(52, 5, time: 1_767_225_603))
      #expect(running.events.isEmpty)
      #expect(running.hub.heldWrites == 3)
      #expect(running.client.locations.count == 3)
      // One attempt at 1 s, 3 s, 7 s, 15 s: four failures in 15 s, not one per fix or per second.
      let before = faults.failures
      running.clock.advance(by: 15)
      let attempts = faults.failures - before
      #expect(attempts >= 4 && attempts <= 8, "\(attempts) failed writes in 15 s")
      faults.disarm()
      running.clock.advance(by: 16)
      #expect(
        running.events == [
          "home determined inside", "home exited", "home determined outside", "home entered",
          "home determined inside",
        ])
      #expect(running.hub.heldWrites == 0)
    }
  }

  /// A region that cannot be stored is not monitored: its requester hears `regionFailed`
  /// (`notStored`, which CoreLocation turns into `CLError.regionMonitoringFailure`), and no event
  /// of it is ever delivered.
  @Test func aRegionThatCannotBeStoredFailsAndIsNotMonitored() throws {
    try withTemporaryDirectory { directory in
      let faults = try StoreFaults()
      let running = try Running(path: directory + "/store.sqlite", vfs: faults.vfs)
      faults.arm([.write], persistent: true, failure: .full)
      running.hub.addRegion(Self.home, group: "manager", requester: running.id)
      let failures = running.client.deliveries.compactMap { delivery -> RegionFailure? in
        if case .regionFailed("manager", "home", let failure) = delivery { return failure }
        return nil
      }
      guard case .notStored(let message)? = failures.first else {
        Issue.record("no notStored failure: \(running.client.deliveries)")
        return
      }
      #expect(message.contains("full"))
      #expect(running.hub.regions(group: "manager").isEmpty)
      faults.disarm()
      running.source.emit(Self.inside)
      running.clock.advance(by: 60)
      #expect(running.events.isEmpty)
    }
  }

  /// A running hub with the home region added and committed.
  static func started(path: String, vfs: String?) throws -> Running {
    let running = try Running(path: path, vfs: vfs)
    if running.hub.regions(group: "manager").isEmpty {
      running.hub.addRegion(home, group: "manager", requester: running.id)
    }
    running.hub.startUpdates(running.id, UpdateRequest())
    #expect(running.source.isRunning)
    return running
  }
}

extension RecordingClient {
  /// The region events delivered, one string per event ("home entered").
  var regionEvents: [String] {
    deliveries.flatMap { delivery -> [String] in
      guard case .regionEvents(_, let events) = delivery else { return [] }
      return events.map { event in
        switch event.kind {
        case .entered: "\(event.identifier) entered"
        case .exited: "\(event.identifier) exited"
        case .determined(let state): "\(event.identifier) determined \(state)"
        }
      }
    }
  }
}

/// The same rule on a real file system that fills up: a size-limited tmpfs (root; CI runs as
/// root) filled while the hub runs, then freed.
@Suite(.serialized) struct HubFullDiskTests {
  @Test func aFullFileSystemHoldsEventsUntilFreedAndARestartDeliversNothingAgain() throws {
    guard let tmpfs = try Tmpfs.mountedOrUnavailable(kibibytes: 2048) else { return }
    defer { tmpfs.unmount() }
    let path = tmpfs.path + "/corelocation/store.sqlite"
    do {
      let running = try HubStoreFailureTests.started(path: path, vfs: nil)
      try tmpfs.fill()
      running.source.emit(HubStoreFailureTests.inside)
      running.source.emit(HubStoreFailureTests.outside)
      #expect(running.client.locations.count == 2, "locations keep flowing")
      #expect(running.events.isEmpty, "delivered on a full disk")
      #expect(running.hub.heldWrites == 2)
      guard case .failing(let cause, _) = running.store.condition else {
        Issue.record("the condition is \(running.store.condition)")
        return
      }
      #expect(cause.code == .full, "\(cause)")
      running.clock.advance(by: 30)
      #expect(running.events.isEmpty)

      tmpfs.free()
      running.clock.advance(by: 60)
      #expect(
        running.events == ["home determined inside", "home exited", "home determined outside"])
      #expect(running.hub.heldWrites == 0)
      #expect(running.store.condition == .healthy)
      running.store.close()
    }
    let restarted = try HubStoreFailureTests.started(path: path, vfs: nil)
    restarted.source.emit(HubStoreFailureTests.outside)
    #expect(restarted.events.isEmpty, "delivered again after a restart")
    restarted.source.emit(HubStoreFailureTests.inside)
    #expect(restarted.events == ["home entered", "home determined inside"])
  }
}
