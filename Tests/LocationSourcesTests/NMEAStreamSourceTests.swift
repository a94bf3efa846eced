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

/// NMEAStreamSource on a pseudo-terminal pair made by socat (a serial GPS stand-in) and on a
/// loopback TCP server, with the sentences of a real capture.
@Suite(.serialized) struct NMEAStreamSourceTests {
  static let capture = "nmea-rtk"

  /// A socat pseudo-terminal pair: the source reads `gps0`, the test writes `feed0`.
  final class PseudoTerminalPair: Sendable {
    let device: String
    let feed: String
    let socat: ChildProcess

    init(directory: URL) async throws {
      device = directory.appendingPathComponent("gps0").path
      feed = directory.appendingPathComponent("feed0").path
      socat = try ChildProcess(
        RealComponents.socat,
        [
          "-d", "-d", "pty,raw,echo=0,link=\(device),perm=0666",
          "pty,raw,echo=0,link=\(feed),perm=0666",
        ], name: "socat")
      let (device, feed) = (device, feed)
      let ready = await eventually(timeout: 30) {
        FileManager.default.fileExists(atPath: device)
          && FileManager.default.fileExists(atPath: feed)
      }
      if !ready {
        await socat.stop()
        throw TestFailure("socat made no pseudo-terminals within 5 s")
      }
    }
  }

  /// Writes the capture into a pseudo-terminal, over and over, until stopped. A pseudo-terminal
  /// does not throttle to a baud rate, so the writer paces itself: one epoch (its two sentences)
  /// and then a millisecond, like a fast receiver (this paces the device; it synchronizes
  /// nothing).
  final class Writer: Sendable {
    private let running = Atomic(true)
    private let done = DispatchSemaphore(value: 0)

    init(path: String, epochs: [[UInt8]]) throws {
      let fd = open(path, O_WRONLY | O_NOCTTY)
      guard fd >= 0 else { throw TestFailure("open \(path): errno \(errno)") }
      let thread = Thread { [self] in
        defer {
          close(fd)
          done.signal()
        }
        while running.load(ordering: .relaxed) {
          for epoch in epochs {
            guard running.load(ordering: .relaxed) else { return }
            let written = epoch.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 { return }
            usleep(1000)
          }
        }
      }
      thread.start()
    }

    func stop() {
      running.store(false, ordering: .relaxed)
      done.wait()
    }
  }

  /// The capture grouped into epochs (the sentences that share a time of fix).
  static func epochs() throws -> [[UInt8]] {
    var groups: [[UInt8]] = []
    var lastTime: Substring?
    for sentence in try Captures.sentences(capture) {
      let time = sentence.split(separator: ",", omittingEmptySubsequences: false).dropFirst().first
      if time != lastTime || groups.isEmpty {
        groups.append([])
        lastTime = time
      }
      groups[groups.count - 1].append(contentsOf: Array(sentence.utf8))
    }
    return groups
  }

  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("nmea-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Every fix must be one that `NMEADecoder` finds in the capture: same time and position.
  static func checkAgainstCapture(_ fixes: [Fix], _ expected: [Int64: Fix]) -> Int {
    var matched = 0
    for fix in fixes {
      guard let reference = expected[fix.timeKey] else {
        Issue.record("a fix at \(fix.time) is not among the capture's")
        continue
      }
      #expect(fix.latitude == reference.latitude)
      #expect(fix.longitude == reference.longitude)
      #expect(fix.altitude == reference.altitude)
      matched += 1
    }
    return matched
  }

  @Test(
    "a serial GPS on a pseudo-terminal at 4800 and 9600 baud; the device vanishes and returns",
    .enabled(if: RealComponents.runnable(RealComponents.socat), "socat is not installed"),
    arguments: [4800, 9600])
  func pseudoTerminal(baud: Int) async throws {
    guard RealComponents.require(RealComponents.socat) else { return }
    let expected = try Captures.decodedFixes(Self.capture)
    let epochs = try Self.epochs()
    let directory = try Self.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var pair = try await PseudoTerminalPair(directory: directory)
    var writer = try Writer(path: pair.feed, epochs: epochs)

    let context = RecordingContext(clock: .dispatch)
    let source = NMEAStreamSource(serialPath: pair.device, baud: baud)
    #expect(source.descriptor.url == "nmea://\(pair.device)?baud=\(baud)")
    source.start(context: context)
    let arrived = await eventually { context.fixes.count >= 150 }
    #expect(arrived, "fixes: \(context.fixes.count); failures: \(context.failures)")
    #expect(Self.checkAgainstCapture(context.fixes, expected) >= 150)
    #expect(context.failures.isEmpty)

    // The device goes away (socat ends: the pseudo-terminal reads EIO, then its link is gone).
    writer.stop()
    await pair.socat.stop()
    #expect(await eventually { !context.failures.isEmpty })
    let failure = try #require(context.failures.first)
    #expect(failure.code == .disconnected)
    #expect(!failure.isPermanent)
    #expect(failure.message.hasPrefix("NMEA device \(pair.device): "))

    // It comes back under the same name: the source reopens it.
    let before = context.fixes.count
    pair = try await PseudoTerminalPair(directory: directory)
    writer = try Writer(path: pair.feed, epochs: epochs)
    let resumed = await eventually { context.fixes.count >= before + 50 }
    #expect(resumed, "fixes after the device returned: \(context.fixes.count - before)")
    #expect(Self.checkAgainstCapture(Array(context.fixes[before...]), expected) >= 50)
    #expect(context.failures.count == 1, "one report per outage: \(context.failures)")

    source.stop()
    context.seal()
    writer.stop()
    await pair.socat.stop()
    #expect(context.lateCalls == 0)
  }

  @Test(
    "the serial port is opened in raw mode at the requested speed",
    .enabled(if: RealComponents.runnable(RealComponents.socat), "socat is not installed"),
    arguments: [4800, 9600, 115_200])
  func termiosSettings(baud: Int) async throws {
    guard RealComponents.require(RealComponents.socat) else { return }
    let directory = try Self.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let pair = try await PseudoTerminalPair(directory: directory)
    let fd = try SerialPort.open(path: pair.device, baud: baud).get()
    let speeds = SerialPort.speeds(of: fd)
    #expect(speeds?.input == baud)
    #expect(speeds?.output == baud)
    #expect(SerialPort.isRaw(fd))
    #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
    close(fd)
    await pair.socat.stop()
  }

  @Test("a regular file is refused for good; a missing device is retried")
  func openErrors() throws {
    let directory = try Self.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("track.nmea")
    try Data("$GPGGA\r\n".utf8).write(to: file)
    switch SerialPort.open(path: file.path, baud: 4800) {
    case .success(let fd):
      close(fd)
      Issue.record("a regular file was opened as a serial device")
    case .failure(let error):
      #expect(error.isPermanent)
      #expect(error.message.contains("replay://"))
    }
    switch SerialPort.open(path: directory.appendingPathComponent("none").path, baud: 4800) {
    case .success(let fd):
      close(fd)
      Issue.record("a missing device was opened")
    case .failure(let error):
      #expect(!error.isPermanent)
      #expect(error.message == "open: no such file or directory")
    }
  }

  @Test("nmea+tcp: a loopback server that sends the capture and closes; the source reconnects")
  func tcpServer() async throws {
    let expected = try Captures.decodedFixes(Self.capture)
    let payload = Array(try Captures.sentences(Self.capture).joined().utf8)
    let server = try PayloadServer(payload: payload, closeAfterPayload: true)
    defer { server.stop() }
    let context = RecordingContext(clock: .dispatch)
    let source = NMEAStreamSource(host: "127.0.0.1", port: server.port)
    #expect(source.descriptor.url == "nmea+tcp://127.0.0.1:\(server.port)")
    source.start(context: context)
    // Each connection delivers the whole capture (the last epoch when the peer closes).
    let twice = await eventually { server.accepted >= 2 && context.fixes.count >= 2 * 122 }
    #expect(twice, "connections \(server.accepted), fixes \(context.fixes.count)")
    #expect(Self.checkAgainstCapture(context.fixes, expected) >= 2 * 122)
    let failure = try #require(context.failures.first)
    #expect(failure.code == .disconnected)
    #expect(!failure.isPermanent)
    #expect(failure.message == "NMEA server at 127.0.0.1:\(server.port): the connection was closed")
    source.stop()
    context.seal()
    #expect(context.lateCalls == 0)
  }

  @Test("an undated fix is dated by the runtime clock's nearest day")
  func datingUndatedFixes() {
    let now = 1_714_557_600.0  // 2024-05-01T10:00:00Z
    #expect(NMEASession.dated(timeOfDay: 36_005, now: now) == now + 5)
    #expect(NMEASession.dated(timeOfDay: 86_000, now: 1_714_521_700) == 1_714_521_600 - 400)
    #expect(NMEASession.dated(timeOfDay: 100, now: 1_714_521_600 - 200) == 1_714_521_600 + 100)
  }

  @Test("the factory makes NMEAStreamSources for nmea:// and nmea+tcp:// URLs")
  func factory() throws {
    let serial = SourceFactory.make(try SourceURL.parse("nmea:///dev/ttyUSB0?baud=9600"))
    #expect(serial is NMEAStreamSource)
    #expect((serial as? NMEAStreamSource)?.name == "NMEA device /dev/ttyUSB0")
    let tcp = SourceFactory.make(try SourceURL.parse("nmea+tcp://10.0.0.1:10110"))
    #expect(tcp is NMEAStreamSource)
    #expect(tcp.descriptor.url == "nmea+tcp://10.0.0.1:10110")
  }
}
