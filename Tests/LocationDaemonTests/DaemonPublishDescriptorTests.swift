import Foundation
import LocationDaemon
import LocationFormats
import LocationModel
import LocationSources
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A hole found by `locbench publish`'s fleet row (issue 18): libmosquitto's network loop waits
/// with select(2), which refuses a socket numbered 1024 or above. A local program holding a
/// thousand connections to the daemon pushed every new descriptor past 1024, and the publisher,
/// at its next reconnection, got a socket it could never use: publishing stalled for as long as
/// the connections stayed. The daemon now numbers the descriptors peers can multiply from 1024
/// up, so its own stay low.
///
/// The hostile program is a child (Python), and it holds no more connections than needed, to
/// keep this test process's descriptors down: Foundation's `Process.run()` reads `/proc/self/fd`
/// (to close every descriptor in the child) copying each entry's whole 256-byte name field, which
/// reads past the end of a full 32 KiB `getdents` buffer (more than about 1,350 entries) and
/// crashed the test process while another test started a program (2 crashes in 30 runs of this
/// suite beside `whereami`'s tests, when this process held both ends of 1,100 connections, about
/// 3,300 descriptors). This test's share is now 1,040, and `make test` runs it in a test process
/// of its own (`ISOLATED_TESTS` in the Makefile): beside the other tests' connections it still
/// passed the limit (a peak of 1,767 sampled), and a run of the whole suite crashed so once.
@Suite(.serialized) struct DaemonPublishDescriptorTests {
  /// Connections a hostile program holds. Each costs the daemon two descriptors (the socket and
  /// its pidfd): 1,040, past 1024 had the daemon numbered them from the lowest free.
  static let held = 520

  /// Connects `held` times to the socket at `argv[1]` and keeps the connections until killed.
  static let hostile = """
    import signal, socket, sys
    held = []
    for _ in range(int(sys.argv[2])):
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(sys.argv[1])
        held.append(connection)
    signal.pause()
    """

  @Test func manyConnectionsDoNotStopThePublisherFromReconnecting() async throws {
    guard try MosquittoBroker.ready() else { return }
    guard RealComponents.runnable(RealComponents.python3) else {
      print("skipped: \(RealComponents.python3) is missing")
      return
    }
    guard RealComponents.require(RealComponents.python3) else { return }
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    guard limit.rlim_cur >= 4096 else {
      let reason = "the descriptor limit (\(limit.rlim_cur)) is too low to hold the connections"
      if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(reason)") }
      print("skipped: \(reason)")
      return
    }
    let broker = try MosquittoBroker()
    defer { broker.remove() }
    let daemon = try DaemonFixture { configuration in
      var publish = PublishSettings()
      publish.host = "127.0.0.1"
      publish.port = broker.port
      publish.topic = "owntracks/pi/car"
      publish.minimumInterval = 0
      publish.minimumDistance = 0
      configuration.publish = publish
      configuration.maximumConnectionsPerUID = 2 * Self.held
      configuration.helloTimeout = 3600
    }
    defer { daemon.stop() }
    #expect(await eventually { daemon.source.isRunning })
    func emit(_ second: Double) {
      daemon.source.emit(
        Fix(
          latitude: 52.37 + second * 1e-3, longitude: 4.89, horizontalAccuracy: 5,
          time: 1_767_225_600 + second, quality: .autonomous))
      daemon.clock.advance(by: 1)
    }
    func connected() -> Bool? {
      guard let (control, _) = try? daemon.peer(.control) else { return nil }
      control.send(.status(id: 1))
      guard case .reply(1, .status(let status)) = try? control.next() else { return nil }
      return status.publish?.connected
    }
    emit(0)
    #expect(await eventually { (try? daemon.store.outboxDepth()) == 0 && connected() == true })

    // The broker goes away: the publisher's socket is closed, its number free.
    broker.stop(signal: SIGKILL)
    #expect(await eventually { connected() == false })

    // The hostile program's connections, each accepted by the daemon as a descriptor numbered
    // from 1024 up (other tests' daemons number their peers so too: a few more at most).
    func highDescriptors() -> Int {
      ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [])
        .compactMap { Int($0) }.filter { $0 >= 1024 }.count
    }
    let attacker = Process()
    attacker.executableURL = URL(fileURLWithPath: RealComponents.python3)
    attacker.arguments = ["-c", Self.hostile, daemon.socketPath, String(Self.held)]
    attacker.standardInput = FileHandle.nullDevice
    attacker.standardOutput = FileHandle.nullDevice
    try runWithEmptySignalMask(attacker)
    defer { stopChild(attacker) }
    #expect(
      await eventually(timeout: 60) { highDescriptors() >= Self.held },
      "the daemon accepts the hostile program's connections")

    // The broker comes back: the publisher connects again (after its backoff of 1 to 4 s) and
    // the broker acknowledges what was kept meanwhile (the test process's own MQTT clients would
    // meet the same limit, so the broker's acknowledgements are the evidence).
    emit(1)
    try broker.start()
    emit(2)
    #expect(
      await eventually(timeout: 60) {
        (try? daemon.store.outboxDepth()) == 0 && connected() == true
      }, "\(broker.log())")
  }
}
