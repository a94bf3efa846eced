import Dispatch
import Foundation
import LocationModel
import Synchronization
import TestSupport
import Testing

@testable import LocationServices

/// The Ichnaea client against a loopback HTTP server, through the real curl.
@Suite struct IchnaeaClientTests {
  /// A scan of `count` named access points (signals -40, -41, …), one hidden, one `_nomap`.
  static func scan(count: Int = 3) -> WifiScan {
    var readings = (0..<count).map { index in
      AccessPointReading(
        bssid: 0x0A0B_0C0D_0E00 + UInt64(index), ssid: Array("cafe-\(index)".utf8),
        signal: -40 - Double(index), frequency: index == 0 ? 2437 : 0)
    }
    readings.append(
      AccessPointReading(bssid: 0x1111_1111_1111, ssid: [], signal: -20, frequency: 2412))
    readings.append(
      AccessPointReading(
        bssid: 0x2222_2222_2222, ssid: Array("home_nomap".utf8), signal: -10, frequency: 5180))
    return WifiScan(time: 1_700_000_000, readings: readings, source: "wifi")
  }

  static let found = #"{"location": {"lat": 52.5186, "lng": 13.3762}, "accuracy": 50.0}"#
  static let notFound = """
    {"error": {"errors": [{"domain": "geolocation", "reason": "notFound", "message": "Not found"}],
     "code": 404, "message": "Not found"}}
    """

  /// A running server answering with `respond`, and a client of it; nil (the test skipped) when
  /// curl is missing outside CI.
  private func setUp(
    interval: Double = 0,
    _ respond: @escaping @Sendable (LocalHTTPServer.Request) -> LocalHTTPServer.Response
  ) throws -> (LocalHTTPServer, IchnaeaClient)? {
    guard RealComponents.runnable(RealComponents.curl) else {
      try RealComponents.unavailable("\(RealComponents.curl) is missing (Debian's curl)")
      return nil
    }
    guard RealComponents.require(RealComponents.curl) else { return nil }
    let server = try LocalHTTPServer(respond: respond)
    #expect(server.waitUntilReady())
    let client = try IchnaeaClient(
      configuration: .init(
        url: server.url.absoluteString + "v1/geolocate?key=test", userAgent: "IchnaeaTests/1",
        minimumInterval: interval, timeout: 20))
    return (server, client)
  }

  /// The result of one request.
  private func locate(_ client: IchnaeaClient, _ scan: WifiScan = scan()) async -> Result<
    Fix, IchnaeaError
  > {
    await withCheckedContinuation { continuation in
      client.locate(scan) { continuation.resume(returning: $0) }
    }
  }

  @Test func sendsOnlyMappableAccessPointsAndReadsTheFix() async throws {
    guard let (server, client) = try setUp({ _ in .answer(status: 200, body: Self.found) }) else {
      return
    }
    defer { server.stop() }
    let fix = try await locate(client).get()
    #expect(fix.latitude == 52.5186 && fix.longitude == 13.3762)
    #expect(abs(fix.horizontalAccuracy - 50 * 0.617) < 1e-9)
    #expect(fix.quality == .network)
    #expect(fix.time == 1_700_000_000)
    // The service, without its key: apps receive a location's source.
    #expect(fix.source.hasSuffix("/v1/geolocate") && !fix.source.contains("key"))

    let request = try #require(server.requests.first)
    #expect(request.method == "POST")
    #expect(request.path == "/v1/geolocate")
    #expect(request.query["key"] == "test")
    #expect(request.headers["user-agent"] == "IchnaeaTests/1")
    #expect(request.headers["content-type"] == "application/json")
    #expect(!request.body.contains("cafe") && !request.body.lowercased().contains("ssid"))
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
    #expect(object["considerIp"] as? Bool == false)
    let points = try #require(object["wifiAccessPoints"] as? [[String: Any]])
    #expect(
      points.compactMap { $0["macAddress"] as? String } == [
        "0a:0b:0c:0d:0e:00", "0a:0b:0c:0d:0e:01", "0a:0b:0c:0d:0e:02",
      ])
    #expect(points.compactMap { $0["signalStrength"] as? Int } == [-40, -41, -42])
    #expect(points[0]["frequency"] as? Int == 2437)
    #expect(points[1]["frequency"] == nil)
  }

  @Test func notFoundIsNoFixWithTheReason() async throws {
    guard let (server, client) = try setUp({ _ in .answer(status: 404, body: Self.notFound) })
    else { return }
    defer { server.stop() }
    #expect(await locate(client) == .failure(.notFound("Not found")))
  }

  @Test func otherServiceErrorsKeepTheirCode() async throws {
    let body = #"{"error": {"code": 400, "message": "Invalid API key"}}"#
    guard let (server, client) = try setUp({ _ in .answer(status: 400, body: body) }) else {
      return
    }
    defer { server.stop() }
    #expect(await locate(client) == .failure(.service(code: 400, message: "Invalid API key")))
  }

  @Test(arguments: [
    "not json", #"{"location": {"lat": 95, "lng": 0}, "accuracy": 5}"#,
    #"{"location": {"lat": 1, "lng": 2}}"#, "[]",
  ])
  func malformedAnswersAreErrors(body: String) async throws {
    guard let (server, client) = try setUp({ _ in .answer(status: 200, body: body) }) else {
      return
    }
    defer { server.stop() }
    let result = await locate(client)
    guard case .failure(.malformedAnswer) = result else {
      Issue.record("expected a malformed answer, got \(result)")
      return
    }
  }

  @Test func aServerThatHangsUpIsATransportError() async throws {
    guard let (server, client) = try setUp({ _ in .hangUp }) else { return }
    defer { server.stop() }
    let result = await locate(client)
    guard case .failure(.transport(let reason)) = result else {
      Issue.record("expected a transport error, got \(result)")
      return
    }
    #expect(reason.contains("curl exit status"))
  }

  @Test func oneRequestInFlightAndOnePerInterval() async throws {
    let release = DispatchSemaphore(value: 0)
    guard
      let (server, client) = try setUp(
        interval: 0,
        { _ in
          _ = release.wait(timeout: .now() + 60)
          return .answer(status: 200, body: Self.found)
        })
    else { return }
    defer { server.stop() }
    let first = Task { await locate(client) }
    #expect(await eventually { server.requests.count == 1 })
    // The first is in flight: a second is refused at once, before locate returns.
    let refused = Refusal()
    client.locate(Self.scan()) { refused.set($0) }
    #expect(refused.value == .failure(.rateLimited))
    release.signal()
    #expect((try? await first.value.get()) != nil)
    // With no minimum interval the next one goes.
    release.signal()
    #expect((try? await locate(client).get()) != nil)

    let slow = try IchnaeaClient(
      configuration: .init(url: server.url.absoluteString, minimumInterval: 3_600, timeout: 20))
    release.signal()
    #expect((try? await locate(slow).get()) != nil)
    #expect(await locate(slow) == .failure(.rateLimited))
    #expect(server.requests.count == 3)
  }

  @Test func tooFewAccessPointsSendNothing() async throws {
    guard let (server, client) = try setUp({ _ in .answer(status: 200, body: Self.found) }) else {
      return
    }
    defer { server.stop() }
    #expect(await locate(client, Self.scan(count: 1)) == .failure(.tooFewAccessPoints))
    #expect(server.requests.isEmpty)
  }

  @Test func aMissingCurlIsAClearError() async throws {
    let client = try IchnaeaClient(
      configuration: .init(url: "http://127.0.0.1:9/", curlPath: "/nonexistent/curl"))
    #expect(await locate(client) == .failure(.curlMissing("/nonexistent/curl")))
  }

  /// A client whose "curl" is a shell script (`body`), in a directory removed afterwards.
  private func withFakeCurl(
    _ body: String, timeout: Double = 20, _ test: (IchnaeaClient) async throws -> Void
  ) async throws {
    let directory = NSTemporaryDirectory() + "IchnaeaClientTests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/curl"
    // Written through a close-on-exec descriptor, so that no child another test starts meanwhile
    // keeps it open for writing (executing the script would then fail with ETXTBSY).
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    try #require(descriptor >= 0)
    let script = Array("#!/bin/sh\n\(body)\n".utf8)
    let written = script.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    try #require(written == script.count)
    try await test(
      try IchnaeaClient(
        configuration: .init(
          url: "http://127.0.0.1:9/", minimumInterval: 0, timeout: timeout, curlPath: path)))
  }

  /// The result of one request, asked again while the fake curl cannot start because a child
  /// that another test started in the same instant still holds it open (ETXTBSY).
  private func locateFake(_ client: IchnaeaClient) async -> Result<Fix, IchnaeaError> {
    let deadline = ContinuousClock.now + .seconds(60)
    while true {
      let result = await locate(client)
      guard case .failure(.transport(let reason)) = result, reason.contains("Text file busy"),
        ContinuousClock.now < deadline
      else { return result }
    }
  }

  @Test func anEndlessAnswerIsCutOff() async throws {
    try await withFakeCurl("exec /bin/cat /dev/zero") { client in
      let result = await locateFake(client)
      guard case .failure(.malformedAnswer(let reason)) = result else {
        Issue.record("expected a malformed answer, got \(result)")
        return
      }
      #expect(reason.contains("65536"))
    }
  }

  @Test func aCurlThatNeverEndsIsKilledAfterTheTimeout() async throws {
    // Reads the body, then never ends (its standard output stays open: `tail -f /dev/null`).
    try await withFakeCurl("/bin/cat >/dev/null; exec /usr/bin/tail -f /dev/null", timeout: 0.2) {
      client in
      let started = ContinuousClock.now
      let result = await locateFake(client)
      #expect(result == .failure(.timedOut))
      #expect(started.duration(to: .now) < .seconds(60))
    }
  }

  @Test func aCurlExitStatusIsATransportError() async throws {
    try await withFakeCurl("echo 'curl: (7) Failed to connect' >&2; exit 7") { client in
      let result = await locateFake(client)
      #expect(result == .failure(.transport("curl exit status 7: curl: (7) Failed to connect")))
    }
  }

  @Test(arguments: [
    "ftp://example.org/", "file:///etc/passwd", "http://", "https:///v1", "-K/etc/x",
    "http://example.org/ x", "",
  ])
  func onlyHTTPURLsWithAHost(url: String) {
    #expect(throws: IchnaeaError.self) {
      _ = try IchnaeaClient(configuration: .init(url: url))
    }
  }

  @Test func defaultsAndArguments() throws {
    let client = try IchnaeaClient(
      configuration: .init(url: "https://api.example.org/v1/geolocate"))
    #expect(client.configuration.minimumInterval == 60)
    #expect(client.configuration.userAgent.hasPrefix("CoreLocation-for-Linux/"))
    #expect(client.arguments.first == "/usr/bin/curl")
    #expect(client.arguments.last == "https://api.example.org/v1/geolocate")
    #expect(client.arguments.contains("--fail-with-body"))
    #expect(client.arguments[1] == "--disable")
  }
}

/// A result set from a completion, read by the test.
private final class Refusal: Sendable {
  private let result = Mutex<Result<Fix, IchnaeaError>?>(nil)
  /// The result, if the completion ran.
  var value: Result<Fix, IchnaeaError>? { result.withLock { $0 } }
  /// Records the result.
  func set(_ value: Result<Fix, IchnaeaError>) { result.withLock { $0 = value } }
}
