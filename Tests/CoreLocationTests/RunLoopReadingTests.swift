import CoreLocation
import Foundation
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 19: the daemon client's socket is read by the manager's run loop itself while that run
/// loop waits (one wake-up from the daemon's `send` to the delegate), and by the reader thread
/// while the run loop is busy; lines keep their order whoever reads them, and a delegate that
/// waits for the daemon from such a delivery is answered.
@Suite struct RunLoopReadingTests {
  final class Delegate: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
    // @unchecked: an NSObject whose state is in Mutexes.
    /// Each location's latitude and whether it came on the owner's thread.
    let received = Mutex<[(latitude: Double, thread: pthread_t)]>([])
    /// When set, the first delegate call lists the monitored regions (which waits for the daemon
    /// when another process changed them) and keeps their identifiers.
    let listsRegions = Atomic(false)
    let listed = Mutex<Set<String>?>(nil)
    /// Authorization changes ("authorization") and locations ("location LATITUDE"), in order.
    let events = Mutex<[String]>([])

    func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
      events.withLock { $0.append("authorization") }
    }

    func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
      events.withLock { events in
        for location in locations { events.append("location \(location.coordinate.latitude)") }
      }
      let thread = pthread_self()
      received.withLock { received in
        for location in locations { received.append((location.coordinate.latitude, thread)) }
      }
      if listsRegions.exchange(false, ordering: .acquiringAndReleasing) {
        let identifiers = Set(manager.monitoredRegions.map(\.identifier))
        listed.withLock { $0 = identifiers }
      }
    }

    var latitudes: [Double] { received.withLock { $0.map(\.latitude) } }
  }

  /// A client of the daemon client itself, delivered to on whichever thread reads.
  final class Recorder: HubClient {
    private let received = Mutex<[Double]>([])

    func hub(_ service: any LocationService, deliver delivery: HubDelivery) {
      guard case .locations(let fixes) = delivery else { return }
      received.withLock { $0.append(contentsOf: fixes.map(\.latitude)) }
    }

    var latitudes: [Double] { received.withLock { $0 } }
  }

  /// A thread that makes the client (its run loop as the reading run loop) and a manager, then
  /// runs its run loop until told to stop.
  final class Owner: @unchecked Sendable {
    // @unchecked: `client`, `manager`, `runLoop` and `thread` are written once on the owner
    // thread before `made` is set, and read by the test only after it.
    let path: String
    let delegate = Delegate()
    let made = Atomic(false)
    let finish = Atomic(false)
    let ended = Atomic(false)
    var client: DaemonClient?
    var manager: CLLocationManager?
    var runLoop: RunLoop?
    var thread: pthread_t?

    init(path: String) { self.path = path }

    func start() { Thread { [self] in run() }.start() }

    private func run() {
      thread = pthread_self()
      runLoop = RunLoop.current
      let client = DaemonClient(socketPath: path, refreshTimeout: 120, readingRunLoop: .current)
      let environment = HubEnvironment(hub: client, scheduler: nil)
      let manager = HubEnvironment.$bound.withValue(environment) { CLLocationManager() }
      manager.delegate = delegate
      self.client = client
      self.manager = manager
      made.store(true, ordering: .releasing)
      runCurrentRunLoop { finish.load(ordering: .acquiring) }
      client.close()
      ended.store(true, ordering: .releasing)
    }

    /// Holds the owner's thread in a run loop callout until the returned semaphore is signalled;
    /// returns once it is held.
    func hold() async -> DispatchSemaphore {
      let gate = DispatchSemaphore(value: 0)
      let held = Atomic(false)
      runLoop?.perform {
        held.store(true, ordering: .releasing)
        gate.wait()
      }
      _ = await eventually { held.load(ordering: .acquiring) }
      return gate
    }

    var isOwnerThread: (pthread_t) -> Bool {
      let owner = thread
      return { thread in owner.map { pthread_equal($0, thread) != 0 } ?? false }
    }

    func stop() { finish.store(true, ordering: .releasing) }
  }

  /// A daemon, an owner with its client connected and its manager's updates started.
  struct Setup {
    let daemon: FakeDaemon
    let owner: Owner
    let client: DaemonClient

    init(welcome: String = FakeDaemon.welcomeLine()) async throws {
      daemon = try FakeDaemon(welcome: welcome)
      owner = Owner(path: daemon.path)
      owner.start()
      let owner = owner
      #expect(await eventually { owner.made.load(ordering: .acquiring) })
      client = try #require(owner.client)
      let client = client
      #expect(await eventually { client.isConnected })
      owner.manager?.startUpdatingLocation()
      let daemon = daemon
      #expect(await eventually { !daemon.messages("startUpdates").isEmpty })
    }

    /// Both readers took part: the thread (while the run loop was held) and the run loop.
    func expectBothReadersRead() {
      #expect(client.linesReadByThread.load(ordering: .relaxed) > 0)
      #expect(client.linesReadByRunLoop.load(ordering: .relaxed) > 0)
    }

    func stop() async {
      owner.stop()
      let owner = owner
      _ = await eventually { owner.ended.load(ordering: .acquiring) }
      daemon.stop()
    }
  }

  /// A `locations` line exactly as `locationd` writes it.
  static func line(client: Int, latitude: Double) -> String {
    let bytes = DaemonProtocol.encodeLocations(
      client: client, fixesJSON: DaemonProtocol.encodeFixes([fix(latitude, 5)]))
    return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
  }

  @Test func theWaitingRunLoopReadsLocationsAndCallsTheDelegateItself() async throws {
    let setup = try await Setup()
    let owner = setup.owner
    for index in 0..<20 {
      setup.daemon.send(Self.line(client: 1, latitude: 50 + Double(index) / 100))
      #expect(await eventually { owner.delegate.latitudes.count == index + 1 })
    }
    #expect(owner.delegate.latitudes == (0..<20).map { 50 + Double($0) / 100 })
    let isOwner = owner.isOwnerThread
    #expect(owner.delegate.received.withLock { $0.allSatisfy { isOwner($0.thread) } })
    // The run loop waits nearly all the time here (its timer fires every 50 ms).
    #expect(setup.client.linesReadByRunLoop.load(ordering: .relaxed) > 0)
    await setup.stop()
  }

  @Test func aBusyRunLoopLeavesTheReadingToTheThread() async throws {
    let setup = try await Setup()
    let recorder = Recorder()
    let number = setup.client.register(recorder).rawValue
    let gate = await setup.owner.hold()
    let before = setup.client.linesReadByThread.load(ordering: .relaxed)
    setup.daemon.send(Self.line(client: number, latitude: 10))
    setup.daemon.send(Self.line(client: 1, latitude: 11))
    // The other client has its location while the owner's thread is still held.
    #expect(await eventually { recorder.latitudes == [10] })
    let client = setup.client
    #expect(await eventually { client.linesReadByThread.load(ordering: .relaxed) >= before + 2 })
    #expect(setup.owner.delegate.latitudes.isEmpty)
    gate.signal()
    #expect(await eventually { setup.owner.delegate.latitudes == [11] })
    await setup.stop()
  }

  @Test func linesKeepTheirOrderWhicheverReadsThem() async throws {
    let setup = try await Setup()
    let recorder = Recorder()
    let number = setup.client.register(recorder).rawValue
    await Self.rounds(30, setup, recorder) { burst in
      var sent: [Double] = []
      for index in 0..<10 {
        let latitude = Double(burst * 10 + index) / 1000
        sent.append(latitude)
        setup.daemon.send(Self.line(client: number, latitude: latitude))
        // An authorization line between them goes through the client's queue.
        if index == 4 {
          setup.daemon.send(#"{"type":"authorization","authorization":{"status":4}}"#)
        }
      }
      return sent
    }
  }

  /// Runs `count` rounds, every other one while the owner's run loop is busy: `send` sends the
  /// round's locations and returns their latitudes; each round waits until the recorder has them.
  /// Then every location was received once, in order, and both the run loop and the reader
  /// thread read some; the setup is stopped.
  private static func rounds(
    _ count: Int, _ setup: Setup, _ recorder: Recorder, send: (Int) async -> [Double]
  ) async {
    var expected: [Double] = []
    for round in 0..<count {
      let gate = round % 2 == 0 ? await setup.owner.hold() : nil
      expected += await send(round)
      gate?.signal()
      let total = expected.count
      #expect(await eventually { recorder.latitudes.count == total })
    }
    #expect(recorder.latitudes == expected)
    setup.expectBothReadersRead()
    await setup.stop()
  }

  /// A line that arrives in pieces, each read on its own (the client drains the socket with one
  /// `recv` when it comes back short), is whole when handed on, whether the run loop or the
  /// thread reads it.
  @Test func aLineInPiecesIsReadWhole() async throws {
    let setup = try await Setup()
    let recorder = Recorder()
    let number = setup.client.register(recorder).rawValue
    let daemon = setup.daemon
    await Self.rounds(12, setup, recorder) { index in
      let latitude = Double(index) / 10
      let bytes = Array((Self.line(client: number, latitude: latitude) + "\n").utf8)
      let third = bytes.count / 3
      for piece in [bytes[..<third], bytes[third..<(2 * third)], bytes[(2 * third)...]] {
        daemon.sendRaw(Array(piece))
        #expect(await eventually { daemon.unreadBytes == 0 })
      }
      return [latitude]
    }
  }

  /// A location read by the run loop does not overtake an authorization change the daemon sent
  /// before it, which reached the manager through the client's queue.
  @Test func aManagersDeliveriesKeepTheirOrder() async throws {
    let setup = try await Setup()
    let owner = setup.owner
    #expect(await eventually { owner.delegate.events.withLock { $0.contains("authorization") } })
    let start = owner.delegate.events.withLock { $0.count }
    var expected: [String] = []
    for index in 0..<20 {
      let status = index % 2 == 0 ? 3 : 4
      setup.daemon.send(#"{"type":"authorization","authorization":{"status":\#(status)}}"#)
      setup.daemon.send(Self.line(client: 1, latitude: Double(index)))
      expected += ["authorization", "location \(Double(index))"]
    }
    let count = start + expected.count
    #expect(await eventually { owner.delegate.events.withLock { $0.count } >= count })
    // The last of them (a late first authorization call may come before them).
    #expect(owner.delegate.events.withLock { Array($0.suffix(expected.count)) } == expected)
    await setup.stop()
  }

  /// A delegate called from the run loop's own reading that lists its regions waits for the
  /// daemon's `regionList`: the thread reads it (the run loop's thread waits, and the reading's
  /// lock is not held while the delegate runs).
  @Test func aDelegateWaitingForTheDaemonIsAnswered() async throws {
    let setup = try await Setup(
      welcome: FakeDaemon.welcomeLine(
        status: 4, regions: [FakeDaemon.regionEntry("home", state: "inside")]))
    let owner = setup.owner
    setup.daemon.send(#"{"type":"regionsChanged"}"#)
    owner.delegate.listsRegions.store(true, ordering: .releasing)
    setup.daemon.send(Self.line(client: 1, latitude: 1))
    #expect(await eventually { !setup.daemon.messages("refreshRegions").isEmpty })
    let work =
      #"{"identifier":"work","latitude":52.2,"longitude":5.2,"radius":200,"hysteresis":5,"#
      + #""notifyOnEntry":true,"notifyOnExit":true}"#
    setup.daemon.send(
      #"{"type":"regionList","regions":[{"group":"manager","state":"outside","region":"# + work
        + "}]}")
    #expect(await eventually { owner.delegate.listed.withLock { $0 } != nil })
    #expect(owner.delegate.listed.withLock { $0 } == ["work"])
    // And the run loop reads again afterwards.
    setup.daemon.send(Self.line(client: 1, latitude: 2))
    #expect(await eventually { owner.delegate.latitudes == [1, 2] })
    await setup.stop()
  }

  @Test func theRunLoopReadsAgainAfterAReconnection() async throws {
    let setup = try await Setup()
    let owner = setup.owner
    setup.daemon.send(Self.line(client: 1, latitude: 1))
    #expect(await eventually { owner.delegate.latitudes == [1] })
    setup.daemon.clearReceived()
    setup.daemon.dropConnection()
    #expect(await eventually { !setup.daemon.messages("startUpdates").isEmpty })
    let client = setup.client
    #expect(await eventually { client.isConnected })
    let before = client.linesReadByRunLoop.load(ordering: .relaxed)
    for index in 0..<10 {
      setup.daemon.send(Self.line(client: 1, latitude: 2 + Double(index)))
      #expect(await eventually { owner.delegate.latitudes.count == index + 2 })
    }
    #expect(owner.delegate.latitudes == [1] + (0..<10).map { 2 + Double($0) })
    #expect(client.linesReadByRunLoop.load(ordering: .relaxed) > before)
    await setup.stop()
  }

  /// Each connection's reading is let go of when it ends, with its epoll instances: its source
  /// and observer held it, and it held them (one epoll instance leaked per reconnection before).
  @Test func aConnectionsReadingIsFreedWhenItEnds() async throws {
    let setup = try await Setup()
    let client = setup.client
    for _ in 0..<10 {
      setup.daemon.clearReceived()
      setup.daemon.dropConnection()
      #expect(await eventually { !setup.daemon.messages("startUpdates").isEmpty })
    }
    #expect(await eventually { client.runLoopReadings.value.load(ordering: .relaxed) == 1 })
    // Closed while its run loop still runs: nothing of it is left.
    client.close()
    #expect(await eventually { client.runLoopReadings.value.load(ordering: .relaxed) == 0 })
    await setup.stop()
  }
}
