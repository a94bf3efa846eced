import Foundation
import Geodesy
import LocationFormats
import LocationModel
import Synchronization
import TestSupport
import Testing

@testable import LocationSources

#if canImport(Glibc)
  import Glibc
#endif

/// GPSDSource against a real gpsd (started here, fed by a loopback TCP server playing a capture of
/// gpsd's regression suite), and against small in-test servers for the protocol's edge cases.
@Suite(.serialized) struct GPSDSourceTests {
  static let capture = "nmea-rtk"

  /// Starts `gpsd -N` on a free port with the feed as its only device (`tcp://`); gpsd opens the
  /// device when the first client watches. Waits until the port accepts connections.
  static func startGPSD(port: Int, feedPort: Int, directory: URL) async throws -> ChildProcess {
    let gpsd = try ChildProcess(
      RealComponents.gpsd,
      [
        "-N", "-S", String(port), "-F", directory.appendingPathComponent("ctl.sock").path,
        "tcp://127.0.0.1:\(feedPort)",
      ], name: "gpsd")
    let ready = await eventually(timeout: 30) { Loopback.accepts(port: port) }
    if !ready {
      await gpsd.stop()
      throw TestFailure("gpsd did not listen on 127.0.0.1:\(port) within 5 s")
    }
    return gpsd
  }

  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("gpsd-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Every fix dated like the capture must be one gpsd reported for it: same time, position.
  static func checkAgainstCapture(_ fixes: [Fix], _ expected: [Int64: GPSDTPV]) -> Int {
    var matched = 0
    for fix in fixes where fix.time < 1_600_000_000 {
      guard let tpv = expected[fix.timeKey], let latitude = tpv.latitude,
        let longitude = tpv.longitude
      else {
        Issue.record("a fix at \(fix.time) is not among the capture's")
        continue
      }
      #expect(abs(fix.latitude - latitude) < 1e-9)
      #expect(abs(fix.longitude - longitude) < 1e-9)
      matched += 1
    }
    return matched
  }

  @Test(
    "fixes from a real gpsd; kill it: a transient failure; restart it: fixes resume",
    .enabled(
      if: RealComponents.runnable(RealComponents.gpsd), "gpsd is not installed (/usr/sbin/gpsd)"))
  func realDaemonOutageAndRecovery() async throws {
    guard RealComponents.require(RealComponents.gpsd) else { return }
    let expected = try Captures.gpsdFixes(Self.capture)
    let feed = try PayloadServer(
      payload: Array(try Captures.sentences(Self.capture).joined().utf8), closeAfterPayload: false)
    defer { feed.stop() }
    let directory = try Self.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try Loopback.freePort()
    var gpsd = try await Self.startGPSD(port: port, feedPort: feed.port, directory: directory)

    let context = RecordingContext(clock: .dispatch)
    let source = GPSDSource(endpoint: .tcp(host: "127.0.0.1", port: port))
    #expect(source.descriptor.nominalAccuracy == 5)
    #expect(source.descriptor.power == .high)
    source.start(context: context)

    // The capture holds 122 dated fixes; gpsd reports each epoch once it has learned the cycle.
    let first = await eventually { context.fixes.count >= 100 }
    #expect(first, "fixes from gpsd: \(context.fixes.count); failures: \(context.failures)")
    #expect(Self.checkAgainstCapture(context.fixes, expected) >= 100)
    #expect(context.failures.isEmpty)
    #expect(source.statistics.versions == 1)
    #expect(source.statistics.garbageLines == 0)

    await gpsd.stop()
    let failed = await eventually { !context.failures.isEmpty }
    #expect(failed)
    let failure = try #require(context.failures.first)
    #expect(failure.code == .disconnected)
    #expect(!failure.isPermanent)
    #expect(failure.message.hasPrefix("gpsd at 127.0.0.1:\(port)"))

    let before = context.fixes.count
    gpsd = try await Self.startGPSD(port: port, feedPort: feed.port, directory: directory)
    let resumed = await eventually { context.fixes.count >= before + 100 }
    #expect(resumed, "fixes after the restart: \(context.fixes.count - before)")
    #expect(Self.checkAgainstCapture(Array(context.fixes[before...]), expected) >= 100)
    #expect(context.failures.count == 1, "one report per outage: \(context.failures)")

    source.stop()
    context.seal()
    await gpsd.stop()
    #expect(context.lateCalls == 0)
  }

  @Test(
    "gpsd:///path: the JSON protocol relayed on a Unix socket (socat to a real gpsd)",
    .enabled(
      if: RealComponents.runnable(RealComponents.gpsd, RealComponents.socat),
      "gpsd or socat is not installed"))
  func realDaemonThroughUnixSocket() async throws {
    guard RealComponents.require(RealComponents.gpsd, RealComponents.socat) else { return }
    let expected = try Captures.gpsdFixes(Self.capture)
    let feed = try PayloadServer(
      payload: Array(try Captures.sentences(Self.capture).joined().utf8), closeAfterPayload: false)
    defer { feed.stop() }
    let directory = try Self.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try Loopback.freePort()
    let gpsd = try await Self.startGPSD(port: port, feedPort: feed.port, directory: directory)
    let socketPath = directory.appendingPathComponent("gpsd.sock").path
    let relay = try ChildProcess(
      RealComponents.socat, ["UNIX-LISTEN:\(socketPath),fork", "TCP:127.0.0.1:\(port)"],
      name: "socat")
    let listening = await eventually(timeout: 30) {
      FileManager.default.fileExists(atPath: socketPath)
    }
    #expect(listening)

    let context = RecordingContext(clock: .dispatch)
    let source = GPSDSource(endpoint: .unix(path: socketPath))
    #expect(source.descriptor.url == "gpsd://" + socketPath)
    source.start(context: context)
    let arrived = await eventually { context.fixes.count >= 50 }
    #expect(arrived, "fixes: \(context.fixes.count); failures: \(context.failures)")
    #expect(Self.checkAgainstCapture(context.fixes, expected) >= 50)
    source.stop()
    context.seal()
    await relay.stop()
    await gpsd.stop()
    #expect(context.lateCalls == 0)
  }

  // MARK: In-test servers (real sockets, no daemon)

  static let session: [String] = [
    #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
    #"{"class":"DEVICES","devices":[]}"#,
    #"{"class":"WATCH","enable":true,"json":true}"#,
    #"{"class":"TPV","device":"/dev/x","mode":1,"time":"2024-05-01T10:00:00.000Z"}"#,
    "garbage that is not JSON",
    #"{"class":"TPV","mode":3,"time":"2024-05-01T10:00:01.000Z","lat":52.5,"lon":13.4,"eph":10}"#,
    #"{"class":"TPV","mode":3,"time":"2024-05-01T10:00:01.000Z","lat":52.5,"lon":13.4,"eph":8,"altHAE":80}"#,
    #"{"class":"SKY","hdop":0.9,"satellites":[{"PRN":1,"used":true}]}"#,
    #"{"class":"ATT","heading":123.4,"mag_st":"N"}"#,
    #"{"class":"TPV","mode":3,"time":"2024-05-01T10:00:02.000Z","lat":52.50001,"lon":13.4,"#,
    String(repeating: "x", count: 70_000),
    #"{"class":"TPV","mode":2,"time":"2024-05-01T10:00:03.000Z","lat":52.50002,"lon":13.4}"#,
  ]

  @Test("a session with no-fix, duplicate, partial, unknown and oversized lines")
  func tolerantSession() async throws {
    let payload = Array((Self.session.joined(separator: "\n") + "\n").utf8)
    let server = try PayloadServer(payload: payload, closeAfterPayload: false)
    defer { server.stop() }
    let context = RecordingContext(clock: .manual)
    let source = GPSDSource(endpoint: .tcp(host: "127.0.0.1", port: server.port))
    source.start(context: context)
    let done = await eventually { context.fixes.count >= 2 && source.statistics.lines >= 12 }
    #expect(done, "fixes \(context.fixes.count), statistics \(source.statistics)")
    let fixes = context.fixes
    #expect(fixes.map(\.time) == [1_714_557_601, 1_714_557_603])
    #expect(abs((fixes.first?.horizontalAccuracy ?? 0) - 6.17) < 1e-9)
    #expect(fixes.last?.altitude == nil)
    #expect(fixes.allSatisfy { $0.source == source.descriptor.url })
    let statistics = source.statistics
    #expect(statistics.tpv == 4)
    #expect(statistics.sky == 1)
    #expect(statistics.attitude == 1)
    #expect(statistics.garbageLines == 2)
    #expect(statistics.overlongLines == 1)
    #expect(context.failures.isEmpty)
    source.stop()
    context.seal()
    server.dropConnections()
    #expect(context.lateCalls == 0)
  }

  @Test("a gpsd that speaks another protocol version is refused for good")
  func refusesOtherProtocolVersions() async throws {
    let version =
      #"{"class":"VERSION","release":"9.1","rev":"9.1","proto_major":4,"proto_minor":0}"#
    let tpv = #"{"class":"TPV","mode":3,"time":"2024-05-01T10:00:01.000Z","lat":1,"lon":2}"#
    let server = try PayloadServer(
      payload: Array((version + "\n" + tpv + "\n").utf8), closeAfterPayload: false)
    defer { server.stop() }
    let context = RecordingContext(clock: .manual)
    let source = GPSDSource(endpoint: .tcp(host: "127.0.0.1", port: server.port))
    source.start(context: context)
    #expect(await eventually { !context.failures.isEmpty })
    let failure = try #require(context.failures.first)
    #expect(failure.isPermanent)
    #expect(failure.code == .unavailable)
    #expect(failure.message.contains("protocol 4.0"))
    #expect(context.fixes.isEmpty)
    #expect(context.delays.isEmpty, "no retry after a permanent failure")
    source.stop()
  }

  @Test("no gpsd: one failure per outage, retries at 0.5 s doubling to 30 s on the context clock")
  func backoffOnTheManualClock() async throws {
    let directory = try Self.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("gpsd.sock").path
    let context = RecordingContext(clock: .manual)
    let source = GPSDSource(endpoint: .unix(path: path))
    source.start(context: context)
    let expectedDelays = [0.5, 1, 2, 4, 8, 16, 30, 30]
    for (index, delay) in expectedDelays.enumerated() {
      #expect(await eventually { context.delays.count == index + 1 }, "attempt \(index + 1)")
      #expect(context.delays.last == delay)
      if index + 1 < expectedDelays.count { context.fireNext() }
    }
    #expect(context.failures.count == 1)
    let failure = try #require(context.failures.first)
    #expect(failure.code == .disconnected)
    #expect(!failure.isPermanent)
    #expect(failure.message == "gpsd at \(path): connect: no such file or directory")

    // gpsd appears: the next attempt connects, data resets the backoff and ends the outage.
    let version = #"{"class":"VERSION","release":"3.22","proto_major":3,"proto_minor":14}"#
    let server = try PayloadServer(
      unixPath: path, payload: Array((version + "\n").utf8), closeAfterPayload: true)
    defer { server.stop() }
    context.fireNext()
    #expect(await eventually { server.accepted == 1 && context.failures.count == 2 })
    #expect(context.delays.last == 0.5, "backoff starts again after a good connection")
    #expect(context.failures.last?.message == "gpsd at \(path): the connection was closed")
    #expect(source.statistics.versions == 1)

    // stop() cancels the pending retry: firing it does nothing.
    source.stop()
    context.seal()
    context.fireNext()
    #expect(server.accepted == 1)
    #expect(context.lateCalls == 0)
  }

  /// A context that stops the source from inside its first `emit`, as a runtime may.
  final class StoppingContext: SourceContext {
    let inner = RecordingContext(clock: .manual)
    let source = Mutex<GPSDSource?>(nil)
    var now: EngineInstant { inner.now }
    func emit(_ fix: Fix) {
      inner.emit(fix)
      source.withLock { $0 }?.stop()
      inner.seal()
    }
    func fail(_ error: SourceError) { inner.fail(error) }
    func end() { inner.end() }
    func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void)
      -> any Cancellable
    {
      inner.schedule(after: seconds, action)
    }
  }

  @Test("stop() from inside emit: no deadlock, nothing reaches the context afterwards")
  func stopFromInsideEmit() async throws {
    let lines = (1...50).map { second in
      #"{"class":"TPV","mode":3,"time":"2024-05-01T10:00:"#
        + (second < 10 ? "0\(second)" : "\(second)") + #".000Z","lat":52.5,"lon":13.4}"#
    }
    let server = try PayloadServer(
      payload: Array((lines.joined(separator: "\n") + "\n").utf8), closeAfterPayload: true)
    defer { server.stop() }
    let context = StoppingContext()
    let source = GPSDSource(endpoint: .tcp(host: "127.0.0.1", port: server.port))
    context.source.withLock { $0 = source }
    source.start(context: context)
    #expect(await eventually { context.inner.fixes.count == 1 })
    #expect(context.inner.fixes.count == 1)
    #expect(context.inner.failures.isEmpty)
    #expect(context.inner.lateCalls == 0)
  }

  @Test("a host name with several addresses: each is tried (localhost: ::1 refused, then IPv4)")
  func hostNameAddresses() async throws {
    let tpv = #"{"class":"TPV","mode":2,"time":"2024-05-01T10:00:01.000Z","lat":1,"lon":2}"#
    let server = try PayloadServer(payload: Array((tpv + "\n").utf8), closeAfterPayload: false)
    defer { server.stop() }
    let context = RecordingContext(clock: .manual)
    let source = GPSDSource(endpoint: .tcp(host: "localhost", port: server.port))
    source.start(context: context)
    #expect(await eventually { context.fixes.count == 1 }, "failures: \(context.failures)")
    #expect(context.failures.isEmpty)
    source.stop()
  }

  @Test("the factory makes a GPSDSource for gpsd:// URLs")
  func factory() throws {
    let source = SourceFactory.make(try SourceURL.parse("gpsd://127.0.0.1:2947"))
    #expect(source is GPSDSource)
    #expect(source.descriptor.url == "gpsd://127.0.0.1:2947")
    #expect((source as? GPSDSource)?.name == "gpsd at 127.0.0.1:2947")
  }
}
