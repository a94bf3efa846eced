import Foundation
import LocationEngine
import LocationModel
import LocationProtocol
import LocationSources
import Synchronization
import TestSupport
import Testing

@testable import LocationServices

/// The wake-up before an epoch, when it reads nothing from the daemon, rehearses the last
/// `locations` line: decoded again and handed to its manager's `rehearse` (`EpochLead`; issue
/// 19). Nothing is delivered, and a read that finds a line rehearses nothing.
@Suite struct DaemonClientRehearsalTests {
  final class Recorder: HubClient {
    let authorized = Atomic(false)
    let delivered = Mutex<[Double]>([])
    let rehearsed = Mutex<[Double]>([])

    func hub(_ service: any LocationService, deliver delivery: HubDelivery) {
      switch delivery {
      case .authorization: authorized.store(true, ordering: .releasing)
      case .locations(let fixes): delivered.withLock { $0 += fixes.map(\.latitude) }
      default: break
      }
    }

    func rehearse(_ fixes: [Fix]) { rehearsed.withLock { $0 += fixes.map(\.latitude) } }
  }

  static func line(client: Int, latitudes: [Double]) -> [UInt8] {
    DaemonProtocol.encodeLocations(
      client: client, fixesJSON: DaemonProtocol.encodeFixes(latitudes.map { fix($0, 5) }))
  }

  @Test func aReadOfNothingRehearsesTheLastLocationsLine() async throws {
    let fds = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
    defer { fds.deallocate() }
    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, fds) == 0)
    let (watched, feed) = (fds[0], fds[1])
    defer {
      close(watched)
      close(feed)
    }
    // Never connected: the lines read here are not delivered (they are not the connection's).
    let client = DaemonClient(
      socketPath: "/nonexistent/locationd.socket", readingRunLoop: nil)
    defer { client.close() }
    let recorder = Recorder()
    let number = client.register(recorder).rawValue
    let authorized = await eventually { recorder.authorized.load(ordering: .acquiring) }
    #expect(authorized)
    let reading = DaemonConnectionReading(fd: watched, generation: -1)
    func write(_ bytes: [UInt8]) {
      #expect(bytes.withUnsafeBytes { Glibc.write(feed, $0.baseAddress, $0.count) } == bytes.count)
    }

    // Nothing read yet: nothing to rehearse.
    #expect(!reading.drain(client, onRunLoop: false))
    #expect(recorder.rehearsed.withLock { $0 }.isEmpty)
    // A read that finds a line rehearses nothing; the next read of nothing rehearses it, as
    // often as it comes.
    write(Self.line(client: number, latitudes: [50]))
    #expect(reading.drain(client, onRunLoop: false))
    #expect(recorder.rehearsed.withLock { $0 }.isEmpty)
    #expect(!reading.drain(client, onRunLoop: true))
    #expect(!reading.drain(client, onRunLoop: false))
    #expect(recorder.rehearsed.withLock { $0 } == [50, 50])
    // A later line replaces it; another kind of line does not.
    write(Self.line(client: number, latitudes: [51, 52]))
    write(Array(#"{"type":"authorization","authorization":{"status":4}}"#.utf8) + [10])
    #expect(reading.drain(client, onRunLoop: false))
    #expect(!reading.drain(client, onRunLoop: false))
    #expect(recorder.rehearsed.withLock { $0 } == [50, 50, 51, 52])
    // A line longer than the rehearsal's cap (a batch) is not rehearsed, nor the one before it.
    let batch = Self.line(client: number, latitudes: (0..<40).map { Double($0) })
    #expect(batch.count > DaemonConnectionReading.rehearsedLine)
    write(batch)
    #expect(reading.drain(client, onRunLoop: false))
    #expect(!reading.drain(client, onRunLoop: false))
    #expect(recorder.rehearsed.withLock { $0 } == [50, 50, 51, 52])
    #expect(recorder.delivered.withLock { $0 }.isEmpty)
    let ended = reading.ended.load(ordering: .acquiring)
    #expect(!ended)
  }
}

/// A hub's rehearsal of a fix (a source's wake-up before an epoch, `SourceContext.rehearse`)
/// reaches its first clients' `rehearse` and nothing else: no delivery, and the engine does not
/// run (a fix delivered later is delivered as if no rehearsal had happened).
@Suite struct HubRehearsalTests {
  final class Rehearsing: HubClient {
    let deliveries = Mutex<[HubDelivery]>([])
    let rehearsed = Mutex<[[Fix]]>([])

    func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
      deliveries.withLock { $0.append(delivery) }
    }

    func rehearse(_ fixes: [Fix]) { rehearsed.withLock { $0.append(fixes) } }
  }

  @Test func aRehearsalReachesTheFirstClientsOnly() {
    let source = ScriptedSource()
    let hub = LocationHub(
      app: "org.example.tests", sources: .objects { [source] }, persistence: MemoryPersistence(),
      policy: .grant, clock: ManualClock())
    let clients = (0..<6).map { _ in Rehearsing() }
    let ids = clients.map { hub.register($0) }
    // A distance filter: had the engine seen the rehearsed fix, the real one below, at the same
    // place, would be filtered out.
    hub.startUpdates(ids[0], UpdateRequest(distanceFilter: 100))
    let before = clients.map { $0.deliveries.withLock { $0 } }
    hub.rehearse(fix(52, 5))
    let reached = LocationHub.rehearsedClients
    #expect(
      clients.map { $0.rehearsed.withLock { $0 } }
        == Array(repeating: [[fix(52, 5)]], count: reached)
        + Array(repeating: [], count: 6 - reached))
    #expect(clients.map { $0.deliveries.withLock { $0 } } == before)
    // The engine never saw the rehearsed fix: a real one like it is delivered, not filtered.
    source.emit(fix(52, 5))
    guard case .locations(let fixes) = clients[0].deliveries.withLock({ $0 }).last else {
      Issue.record("no locations delivered")
      return
    }
    #expect(fixes.map(\.latitude) == [52])
  }
}
