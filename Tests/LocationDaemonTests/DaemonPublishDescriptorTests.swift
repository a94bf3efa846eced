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
@Suite(.serialized) struct DaemonPublishDescriptorTests {
  /// Connections a hostile program holds (more than 1024 descriptors in the daemon).
  static let held = 1100

  @Test func manyConnectionsDoNotStopThePublisherFromReconnecting() async throws {
    guard try MosquittoBroker.ready() else { return }
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    guard limit.rlim_cur >= 4096 else {
      let reason = "the descriptor limit (\(limit.rlim_cur)) is too low to hold 2,200 descriptors"
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

    // The hostile program's connections; its own ends are moved above 1024 so that only the
    // daemon's ends can take the low numbers.
    var connections: [Int32] = []
    defer { for fd in connections { close(fd) } }
    for _ in 0..<Self.held {
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      try #require(fd >= 0)
      var address = sockaddr_un()
      address.sun_family = sa_family_t(AF_UNIX)
      withUnsafeMutableBytes(of: &address.sun_path) { path in
        path.copyBytes(from: daemon.socketPath.utf8.prefix(path.count - 1))
      }
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
      try #require(connected == 0, "connect: \(String(cString: strerror(errno)))")
      let high = fcntl(fd, F_DUPFD_CLOEXEC, 3000)
      close(fd)
      try #require(high >= 0)
      connections.append(high)
    }
    // Every connection is accepted (the daemon holds a descriptor for each).
    #expect(
      await eventually(timeout: 60) {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 0)
          >= 2 * Self.held
      })

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
