import Foundation
import Geodesy
import LocationModel
import Testing

@testable import LocationSources

/// A context that records the headings and failures a source sends and keeps scheduled actions
/// for the test to run.
final class IIOCompassRecordingContext: SourceContext, @unchecked Sendable {
  // Safe: every stored property is read and written with `condition` locked.
  private let condition = NSCondition()
  private var headings: [HeadingSample] = []
  private var fixes = 0
  private var failures: [SourceError] = []
  private var scheduled: [(delay: Double, action: @Sendable () -> Void)] = []

  struct Token: Cancellable {
    func cancel() {}
  }

  /// What arrived so far.
  struct Arrived {
    var headings: [HeadingSample]
    var fixes: Int
    var failures: [SourceError]
    var delays: [Double]
  }

  var now: EngineInstant {
    EngineInstant(
      monotonic: ProcessInfo.processInfo.systemUptime, wall: Date().timeIntervalSince1970)
  }

  func emit(_ fix: Fix) { record { $0.fixes += 1 } }
  func emitHeading(_ sample: HeadingSample) { record { $0.headings.append(sample) } }
  func fail(_ error: SourceError) { record { $0.failures.append(error) } }
  func end() {}

  @discardableResult
  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    record { $0.scheduled.append((seconds, action)) }
    return Token()
  }

  private func record(_ change: (IIOCompassRecordingContext) -> Void) {
    condition.lock()
    change(self)
    condition.broadcast()
    condition.unlock()
  }

  private var arrived: Arrived {
    Arrived(headings: headings, fixes: fixes, failures: failures, delays: scheduled.map(\.delay))
  }

  /// A snapshot of what arrived.
  var snapshot: Arrived {
    condition.lock()
    defer { condition.unlock() }
    return arrived
  }

  /// Runs the scheduled action at `index` (in the order they were scheduled), as the runtime's
  /// clock would when its time comes.
  func runScheduled(at index: Int) {
    condition.lock()
    let action = scheduled.indices.contains(index) ? scheduled[index].action : nil
    condition.unlock()
    action?()
  }

  /// Waits until `predicate` holds for what arrived, at most `timeout` seconds (a bound on a
  /// daemon's answer, not a delay); returns whether it holds.
  func wait(timeout: Double, until predicate: (Arrived) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while !predicate(arrived) {
      guard condition.wait(until: deadline) else { return predicate(arrived) }
    }
    return true
  }
}

@Suite struct IIOCompassSourceTests {
  // MARK: Without components

  @Test func descriptorSaysHeadingsOnlyAtLowPower() {
    let source = IIOCompassSource()
    #expect(source.descriptor.url == "iio-compass")
    #expect(source.descriptor.producesHeading)
    #expect(!source.descriptor.producesLocation)
    #expect(source.descriptor.power == .low)
    #expect(source.descriptor.nominalAccuracy == .infinity)
  }

  @Test func unreachableBusIsARetriedNonPermanentFailure() throws {
    let source = IIOCompassSource(
      busAddress: "unix:path=/nonexistent/iio-compass-test/bus", callTimeout: 1_000_000)
    let context = IIOCompassRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait(timeout: 30) { $0.delays.count >= 1 && !$0.failures.isEmpty })
    let arrived = context.snapshot
    let failure = try #require(arrived.failures.first)
    #expect(!failure.isPermanent)
    #expect(failure.code == .unavailable)
    #expect(failure.message.hasPrefix("iio-compass:"))
    #expect(arrived.delays == [IIOCompassSource.initialRetryDelay])
    #expect(!IIOCompassSource.isOnBus(address: "unix:path=/nonexistent/iio-compass-test/bus"))
  }

  // MARK: With the real iio-sensor-proxy

  @Test func headingsArriveAndStopReleasesTheClaim() throws {
    let harness: IIOCompassHarness
    do {
      harness = try IIOCompassHarness.start()
    } catch {
      try IIOCompassHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }
    #expect(IIOCompassSource.isOnBus(address: harness.busAddress, timeout: 60_000_000))

    let source = IIOCompassSource(busAddress: harness.busAddress)
    let context = IIOCompassRecordingContext()
    let before = Date().timeIntervalSince1970
    source.start(context: context)
    // The claim turns the fake compass to 10° at once, then 10° more every 2 s. Under load the
    // sensor's resting 0° can be read before the claim's first change: it is skipped.
    let arrivedTwo = context.wait(timeout: 60) { recorded in
      recorded.headings.filter { ($0.magneticHeading ?? 0) != 0 }.count >= 2
        || !recorded.failures.isEmpty
    }
    source.stop()
    let log = harness.log()
    let arrived = context.snapshot
    #expect(arrivedTwo, "headings: \(arrived.headings), log: \(log)")
    #expect(arrived.failures.isEmpty, "\(arrived.failures)")
    #expect(arrived.fixes == 0)
    let headings = arrived.headings.compactMap(\.magneticHeading).drop { $0 == 0 }
    #expect(Array(headings.prefix(2)) == [10, 20], "\(headings)")
    for sample in arrived.headings {
      #expect(sample.trueHeading == nil)
      #expect(sample.accuracy == -1)
      #expect(sample.source == "iio-compass")
      #expect(!sample.isSimulated)
      #expect(sample.time >= before - 1 && sample.time <= Date().timeIntervalSince1970 + 1)
    }
    // The daemon logs each claim and release as it handles it, before answering; `stop()` waits
    // for the answer to `ReleaseCompass`.
    #expect(log.contains("Handling driver refcounting method 'ClaimCompass'"), "\(log)")
    #expect(log.contains("Handling driver refcounting method 'ReleaseCompass'"), "\(log)")
    #expect(!source.isClaimed)
  }

  @Test func noDaemonIsARetriedNonPermanentFailureWithBackoff() throws {
    let harness: IIOCompassHarness
    do {
      harness = try IIOCompassHarness.start(withDaemon: false)
    } catch {
      try IIOCompassHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }
    #expect(!IIOCompassSource.isOnBus(address: harness.busAddress, timeout: 60_000_000))

    let source = IIOCompassSource(busAddress: harness.busAddress)
    let context = IIOCompassRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait(timeout: 30) { $0.delays.count >= 1 && !$0.failures.isEmpty })
    context.runScheduled(at: 0)
    #expect(context.wait(timeout: 30) { $0.delays.count >= 2 })
    let arrived = context.snapshot
    #expect(arrived.failures.allSatisfy { !$0.isPermanent && $0.code == .unavailable })
    #expect(arrived.failures.first?.message.contains("net.hadess.SensorProxy") == true)
    #expect(arrived.delays == [1, 2])
    #expect(arrived.headings.isEmpty)
  }

  @Test func daemonWithoutACompassIsAPermanentFailure() throws {
    let harness: IIOCompassHarness
    do {
      harness = try IIOCompassHarness.start(sensor: .light)
    } catch {
      try IIOCompassHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }
    #expect(!IIOCompassSource.isOnBus(address: harness.busAddress, timeout: 60_000_000))

    let source = IIOCompassSource(busAddress: harness.busAddress)
    let context = IIOCompassRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait(timeout: 30) { !$0.failures.isEmpty })
    source.stop()
    let arrived = context.snapshot
    #expect(arrived.failures.count == 1)
    let failure = try #require(arrived.failures.first)
    #expect(failure.isPermanent)
    #expect(failure.code == .unavailable)
    #expect(failure.message.contains("no compass"))
    #expect(arrived.delays.isEmpty)
    #expect(arrived.headings.isEmpty)
    #expect(!harness.log().contains("ClaimCompass"))
  }

  @Test func daemonLeavingTheBusIsADisconnectionThenARetry() throws {
    let harness: IIOCompassHarness
    do {
      harness = try IIOCompassHarness.start()
    } catch {
      try IIOCompassHarness.skipOrFail(error)
      return
    }
    defer { harness.stop() }

    let source = IIOCompassSource(busAddress: harness.busAddress)
    let context = IIOCompassRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait(timeout: 60) { !$0.headings.isEmpty || !$0.failures.isEmpty })
    harness.stopDaemon()
    #expect(context.wait(timeout: 60) { !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(failure.code == .disconnected)
    #expect(!failure.isPermanent)
    #expect(context.snapshot.delays == [IIOCompassSource.initialRetryDelay])
    #expect(!source.isClaimed)

    // Back on the bus: the scheduled attempt claims the compass again.
    try harness.startDaemon()
    let count = context.snapshot.headings.count
    context.runScheduled(at: 0)
    #expect(context.wait(timeout: 60) { $0.headings.count > count })
    #expect(source.isClaimed)
  }
}
