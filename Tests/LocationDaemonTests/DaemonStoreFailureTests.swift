import Foundation
import LocationDaemon
import LocationModel
import LocationProtocol
import LocationServices
import LocationStore
import TestSupport
import Testing

/// The daemon when its store cannot commit (README, "When the store fails"): the events of an
/// app that is away are neither lost nor kept twice: they wait in the hub, and are kept (and
/// later delivered once) when the commit goes through; `status` says what is going on. Faults from
/// CSQLite's fault-injecting VFS, hubs on a manual clock.
@Suite(.serialized) struct DaemonStoreFailureTests {
  static let home = RegionSpec(identifier: "home", latitude: 52, longitude: 5, radius: 100)

  func status(_ daemon: DaemonFixture, id: Int) throws -> DaemonStatus {
    let (control, _) = try daemon.peer(.control)
    control.send(.status(id: id))
    guard case .reply(id, .status(let status)) = try control.next() else {
      throw TestFailure("no status")
    }
    return status
  }

  @Test func eventsOfAnAbsentAppWaitForTheStoreAndAreDeliveredOnce() throws {
    try withTemporaryDirectory { directory in
      let faults = try StoreFaults()
      let store = try LocationStore(path: directory + "/store.sqlite", vfs: faults.vfs)
      let daemon = try DaemonFixture(store: store)
      defer { daemon.stop() }
      do {
        let peer = try daemon.connectApp()
        peer.send(
          .addRegion(client: 1, group: "manager", region: Self.home, initialState: .unknown))
        _ = try peer.sync()
        peer.shutdownWrite()
        _ = try peer.readUntilClosed()
      }
      _ = try daemon.waitForApps { $0.first?.connected == false }
      #expect(try status(daemon, id: 1).store?.state == .ok)

      faults.arm([.write], persistent: true, failure: .full)
      daemon.source.emit(fix(52, 5, time: 1_767_225_601))  // inside
      daemon.source.emit(fix(52.02, 5, time: 1_767_225_602))  // outside
      daemon.clock.advance(by: 30)
      let failing = try status(daemon, id: 2)
      #expect(failing.store?.state == .failing)
      #expect(failing.store?.held == 2)
      #expect(failing.store?.cause?.contains("full") == true)
      #expect(failing.store?.path == directory + "/store.sqlite")
      #expect(try store.pendingEvents(app: daemon.app).isEmpty, "nothing kept while failing")

      faults.disarm()
      daemon.clock.advance(by: 60)
      let apps = try daemon.waitForApps { $0.first?.pendingEvents == 2 }
      #expect(apps.first?.regions == 1)
      let recovered = try status(daemon, id: 3)
      #expect(recovered.store?.state == .ok)
      #expect(recovered.store?.held == 0)

      let (peer, welcome) = try daemon.peer(.app)
      #expect(welcome.regions.map(\.state) == [.outside])
      let delivered = try peer.sync().compactMap { message -> [RegionEvent.Kind]? in
        guard case .regionEvents(_, let events, _?) = message else { return nil }
        return events.map(\.event.kind)
      }
      #expect(delivered == [[.determined(.inside)], [.exited, .determined(.outside)]])
    }
  }
}
