import Foundation
import Geodesy
import LocationModel
import Testing

@testable import LocationSources

/// A context that records what a source sends and keeps scheduled actions for the test to run.
final class GeoClueRecordingContext: SourceContext, @unchecked Sendable {
  // Safe: every stored property is read and written with `condition` locked.
  private let condition = NSCondition()
  private var fixes: [Fix] = []
  private var failures: [SourceError] = []
  private var scheduled: [(delay: Double, action: @Sendable () -> Void)] = []

  struct Token: Cancellable {
    func cancel() {}
  }

  var now: EngineInstant {
    EngineInstant(
      monotonic: ProcessInfo.processInfo.systemUptime, wall: Date().timeIntervalSince1970)
  }

  func emit(_ fix: Fix) { record { $0.fixes.append(fix) } }
  func fail(_ error: SourceError) { record { $0.failures.append(error) } }
  func end() {}

  @discardableResult
  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    record { $0.scheduled.append((seconds, action)) }
    return Token()
  }

  private func record(_ change: (GeoClueRecordingContext) -> Void) {
    condition.lock()
    change(self)
    condition.broadcast()
    condition.unlock()
  }

  /// A snapshot of what arrived.
  var snapshot: (fixes: [Fix], failures: [SourceError], delays: [Double]) {
    condition.lock()
    defer { condition.unlock() }
    return (fixes, failures, scheduled.map(\.delay))
  }

  /// Runs the scheduled action at `index` (in the order they were scheduled), as the runtime's
  /// clock would when its time comes.
  func runScheduled(at index: Int) {
    condition.lock()
    let action = scheduled.indices.contains(index) ? scheduled[index].action : nil
    condition.unlock()
    action?()
  }

  /// Waits until `predicate` holds for what arrived, at most `timeout` seconds; returns whether it
  /// holds.
  func wait(
    timeout: Double,
    until predicate: (_ arrived: (fixes: [Fix], failures: [SourceError], delays: [Double])) -> Bool
  ) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while !predicate((fixes, failures, scheduled.map(\.delay))) {
      guard condition.wait(until: deadline) else {
        return predicate((fixes, failures, scheduled.map(\.delay)))
      }
    }
    return true
  }
}

@Suite struct GeoClueSourceTests {
  // MARK: With real GeoClue

  @Test func receivesFixesNearTheCapturedPositionAndStopStopsTheClient() throws {
    let harness: GeoClueHarness
    do {
      harness = try GeoClueHarness.start()
    } catch {
      try GeoClueHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }
    let source = GeoClueSource(
      accuracyLevel: .exact, desktopId: GeoClueHarness.allowedId, busAddress: harness.busAddress,
      callTimeout: GeoClueHarness.agentWait)
    let context = GeoClueRecordingContext()
    source.start(context: context)
    let arrived = context.wait(timeout: 60) { $0.fixes.count >= 3 || !$0.failures.isEmpty }
    #expect(source.clientPath != nil)
    // GeoClue reads its NMEA socket only while a client is active.
    let server = try #require(harness.nmeaServer)
    #expect(server.connectedClients >= 1)
    source.stop()
    let (fixes, failures, _) = context.snapshot
    #expect(failures.isEmpty, "\(failures)")
    #expect(arrived && fixes.count >= 3, "only \(fixes.count) fixes in 10 s")
    let expected = GeoClueHarness.capturePosition
    for fix in fixes {
      // The capture stays within a few metres; GeoClue's accuracy comes in coarse HDOP steps.
      #expect(abs(fix.latitude - expected.latitude) < 0.001)
      #expect(abs(fix.longitude - expected.longitude) < 0.001)
      #expect(fix.horizontalAccuracy > 0 && fix.horizontalAccuracy <= 100)
      #expect(fix.quality == .network)
      #expect(fix.source == "geoclue")
      #expect(fix.time > 0)
      #expect(fix.altitude.map { abs($0 - 60) < 5 } ?? false, "GGA altitude is about 60 m")
      #expect(fix.course == -1 || (0..<360).contains(fix.course))
      #expect(fix.speed == -1 || fix.speed >= 0)
    }

    // With our client stopped GeoClue has no active client and closes its NMEA connection.
    #expect(source.clientPath == nil)
    #expect(server.waitForClients(timeout: 30) { $0 == 0 }, "GeoClue still reads the NMEA socket")
    let count = context.snapshot.fixes.count
    #expect(count == fixes.count, "no fix after stop()")
  }

  @Test func geoClueLeavingTheBusIsRetriedAndTheSourceComesBack() throws {
    let harness: GeoClueHarness
    do {
      harness = try GeoClueHarness.start()
    } catch {
      try GeoClueHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }
    let source = GeoClueSource(
      accuracyLevel: .exact, desktopId: GeoClueHarness.allowedId, busAddress: harness.busAddress,
      callTimeout: GeoClueHarness.agentWait)
    let context = GeoClueRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait(timeout: 60) { !$0.fixes.isEmpty })

    harness.stopGeoClue()
    #expect(context.wait(timeout: 60) { !$0.failures.isEmpty && !$0.delays.isEmpty })
    var (fixes, failures, delays) = context.snapshot
    let lost = try #require(failures.first)
    #expect(lost.code == .disconnected && !lost.isPermanent, "\(lost)")
    #expect(delays == [1])

    try harness.restartGeoClue()
    let before = fixes.count
    context.runScheduled(at: 0)
    #expect(context.wait(timeout: 60) { $0.fixes.count > before || $0.failures.count > 1 })
    (fixes, failures, delays) = context.snapshot
    #expect(fixes.count > before, "fixes again after GeoClue came back")
    #expect(failures.count == 1, "\(failures)")
    #expect(source.clientPath != nil)
  }

  @Test func aDesktopIdTheConfigurationRefusesIsDeniedForGood() throws {
    let harness: GeoClueHarness
    do {
      harness = try GeoClueHarness.start()
    } catch {
      try GeoClueHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }
    let source = GeoClueSource(
      accuracyLevel: .exact, desktopId: GeoClueHarness.deniedId, busAddress: harness.busAddress,
      callTimeout: GeoClueHarness.agentWait)
    let context = GeoClueRecordingContext()
    source.start(context: context)
    #expect(context.wait(timeout: 60) { !$0.failures.isEmpty })
    source.stop()
    let (fixes, failures, delays) = context.snapshot
    let failure = try #require(failures.first)
    #expect(failures.count == 1)
    #expect(failure.code == .denied)
    #expect(failure.isPermanent)
    #expect(failure.message.hasPrefix(GeoClueSource.accessDeniedPrefix), "\(failure.message)")
    #expect(failure.message.contains(GeoClueHarness.deniedId))
    #expect(fixes.isEmpty)
    #expect(delays.isEmpty, "a denial is not retried")
  }

  @Test func withoutAnAgentGeoClueDoesNotAnswerAndTheSourceRetries() throws {
    let harness: GeoClueHarness
    do {
      harness = try GeoClueHarness.start(withAgent: false)
    } catch {
      try GeoClueHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }
    // GeoClue 2.6 holds GetClient until an agent registers for the caller's user.
    let source = GeoClueSource(
      accuracyLevel: .exact, desktopId: GeoClueHarness.allowedId, busAddress: harness.busAddress,
      callTimeout: 300_000)
    let context = GeoClueRecordingContext()
    source.start(context: context)
    #expect(context.wait(timeout: 60) { !$0.failures.isEmpty && !$0.delays.isEmpty })
    source.stop()
    let (fixes, failures, delays) = context.snapshot
    let failure = try #require(failures.first)
    #expect(!failure.isPermanent && failure.code == .unavailable)
    #expect(failure.message.contains("agent"), "\(failure.message)")
    #expect(fixes.isEmpty && delays == [1])
  }

  // MARK: Without GeoClue

  @Test func geoClueMissingFromTheBusIsRetriedWithBackoff() throws {
    let harness: GeoClueHarness
    do {
      harness = try GeoClueHarness.start(withGeoClue: false)
    } catch {
      try GeoClueHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }
    let source = GeoClueSource(
      accuracyLevel: .exact, desktopId: GeoClueHarness.allowedId, busAddress: harness.busAddress)
    let context = GeoClueRecordingContext()
    source.start(context: context)
    for attempt in 1...4 {
      if attempt > 1 { context.runScheduled(at: attempt - 2) }
      // Each failed attempt reports the error and then schedules the next one.
      #expect(
        context.wait(timeout: 60) { $0.failures.count >= attempt && $0.delays.count >= attempt })
    }
    source.stop()
    let (_, failures, delays) = context.snapshot
    #expect(delays == [1, 2, 4, 8])
    for failure in failures {
      #expect(!failure.isPermanent)
      #expect(failure.code == .unavailable)
      #expect(failure.message.contains("not running"), "\(failure.message)")
    }
  }

  @Test func noBusIsRetried() {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "geoclue-nobus-\(UUID().uuidString.prefix(8))"
    ).path
    let source = GeoClueSource(
      accuracyLevel: .exact, desktopId: "x", busAddress: "unix:path=\(directory)/bus")
    let context = GeoClueRecordingContext()
    source.start(context: context)
    #expect(context.wait(timeout: 60) { !$0.failures.isEmpty && !$0.delays.isEmpty })
    source.stop()
    let (_, failures, delays) = context.snapshot
    #expect(failures.count == 1)
    #expect(failures.first?.isPermanent == false)
    #expect(failures.first?.message.hasPrefix("geoclue: cannot connect") == true)
    #expect(delays == [1])
  }

  // MARK: Mapping

  @Test func geoClueUnknownValuesBecomeApplesInvalidOnes() throws {
    let fix = try #require(
      GeoClueSource.fix(
        from: [
          "Latitude": .double(52.5), "Longitude": .double(13.4), "Accuracy": .double(20),
          "Altitude": .double(-Double.greatestFiniteMagnitude), "Speed": .double(-1),
          "Heading": .double(-1),
          "Timestamp": .structure([.uint64(1_700_000_000), .uint64(250_000)]),
          "Description": .string(""),
        ], now: 5))
    #expect(fix.latitude == 52.5 && fix.longitude == 13.4)
    #expect(fix.horizontalAccuracy == 20)
    #expect(fix.altitude == nil)
    #expect(fix.speed == -1 && fix.course == -1)
    #expect(fix.time == 1_700_000_000.25)
    #expect(fix.quality == .network && fix.source == "geoclue" && !fix.isSimulated)
  }

  @Test func knownValuesAreCopied() throws {
    let fix = try #require(
      GeoClueSource.fix(
        from: [
          "Latitude": .double(-37.78), "Longitude": .double(175.31), "Accuracy": .double(-1),
          "Altitude": .double(59.9), "Speed": .double(0.35), "Heading": .double(181.39),
        ], now: 5))
    #expect(fix.horizontalAccuracy == -1, "GeoClue's unknown accuracy marks the coordinate invalid")
    #expect(fix.altitude == 59.9 && fix.speed == 0.35 && fix.course == 181.39)
    #expect(fix.time == 5, "no Timestamp: the runtime's clock")
    #expect(GeoClueSource.fix(from: ["Latitude": .double(1)], now: 0) == nil)
  }

  @Test(arguments: [
    (-2.0, GeoClueSource.AccuracyLevel.exact), (-1, .exact), (0, .exact), (10, .exact),
    (100, .exact), (100.5, .street), (1_000, .street), (3_000, .neighborhood),
    (5_000, .neighborhood), (15_000, .city), (15_001, .country), (.infinity, .country),
    (.nan, .country),
  ])
  func desiredAccuracyChoosesALevel(metres: Double, level: GeoClueSource.AccuracyLevel) {
    #expect(GeoClueSource.AccuracyLevel.forDesiredAccuracy(metres) == level)
  }

  @Test func desktopIdComesFromTheEnvironmentThenTheExecutable() {
    #expect(
      GeoClueSource.defaultDesktopId(
        environment: ["CORELOCATION_APP_ID": "/usr/share/applications/org.example.Maps.desktop"],
        executablePath: "/usr/bin/maps") == "org.example.Maps")
    #expect(
      GeoClueSource.defaultDesktopId(
        environment: ["CORELOCATION_APP_ID": "org.example.Maps"], executablePath: nil)
        == "org.example.Maps")
    #expect(
      GeoClueSource.defaultDesktopId(environment: [:], executablePath: "/usr/bin/whereami")
        == "whereami")
    #expect(
      GeoClueSource.defaultDesktopId(environment: ["CORELOCATION_APP_ID": ""], executablePath: "")
        == "corelocation")
    #expect(GeoClueSource().descriptor.url == "geoclue")
  }
}
