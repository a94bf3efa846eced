import Foundation
import Geodesy
import LocationSources
import TestSupport
import Testing

/// `StaticSource`: GeoClue's four-line file, emitted at once and every 60 s; bad files fail with
/// the file and line.
@Suite struct StaticSourceTests {
  @Test func emitsTheFilesPositionAtOnceStampedWithNow() throws {
    let path = Paths.fixture("static", "good")
    let source = StaticSource(path: path)
    #expect(source.descriptor.url == "static://" + path)
    #expect(source.descriptor.nominalAccuracy == 30)
    #expect(source.descriptor.power == .none)
    let context = TestContext(wall: 1_900_000_000)
    source.start(context: context)
    let fix = try #require(context.fixes.first)
    #expect(context.fixes.count == 1)
    #expect(fix.latitude == 48.8584)
    #expect(fix.longitude == 2.2945)
    #expect(fix.altitude == 115)
    #expect(fix.horizontalAccuracy == 30)
    #expect(fix.time == 1_900_000_000)
    #expect(fix.quality == .manual)
    #expect(!fix.isSimulated)
    #expect(context.failures.isEmpty)
    #expect(context.ends == 0, "a static position never ends")
  }

  @Test func reEmitsEverySixtySeconds() {
    let context = TestContext(wall: 1_900_000_000)
    let source = StaticSource(path: Paths.fixture("static", "good"))
    source.start(context: context)
    context.advance(by: StaticSource.interval - 0.5)
    #expect(context.emissions.count == 1)
    context.advance(by: 0.5)
    #expect(context.emissions.count == 2)
    context.advance(by: 3 * StaticSource.interval)
    #expect(context.emissions.map(\.at) == [0, 60, 120, 180, 240])
    #expect(context.fixes.map(\.time) == [0, 60, 120, 180, 240].map { 1_900_000_000 + $0 })
    #expect(StaticSource.interval == 60)
  }

  @Test func stopEndsReEmission() {
    let context = TestContext()
    let source = StaticSource(path: Paths.fixture("static", "good"))
    source.start(context: context)
    context.advance(by: 60)
    source.stop()
    context.advance(by: 600)
    #expect(context.emissions.count == 2)
    #expect(context.pendingCount == 0)
  }

  @Test func restartAfterStopEmitsAgain() {
    let source = StaticSource(path: Paths.fixture("static", "good"))
    let first = TestContext()
    source.start(context: first)
    source.stop()
    let second = TestContext()
    source.start(context: second)
    second.advance(by: 60)
    #expect(second.emissions.count == 2)
    #expect(first.emissions.count == 1)
  }

  /// Bad files: `fail` with the file (and the line where there is one), nothing emitted, nothing
  /// scheduled.
  @Test(
    arguments: [
      ("empty", nil, "no values"),
      ("latitude91", 2, "latitude is outside -90...90"),
      ("nan", 3, "longitude is not a decimal number"),
      ("three_values", 4, "only 3 of 4 values; missing: accuracy radius"),
    ] as [(String, Int?, String)])
  func badFileFails(_ name: String, _ line: Int?, _ problem: String) {
    let path = Paths.fixture("static", name)
    let source = StaticSource(path: path)
    #expect(source.descriptor.nominalAccuracy == 0)
    let context = TestContext()
    source.start(context: context)
    context.advance(by: 600)
    #expect(context.emissions.isEmpty)
    #expect(context.failures.count == 1)
    let error = context.failures.first
    #expect(error?.code == .malformed)
    #expect(error?.isPermanent == true)
    let place = line.map { "\(path):\($0)" } ?? path
    #expect(error?.message.contains(place) == true, "\(error?.message ?? "")")
    #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
  }

  @Test func missingFileFailsAsUnavailable() {
    let path = "/nonexistent/corelocation-tests/geolocation"
    let context = TestContext()
    StaticSource(path: path).start(context: context)
    #expect(context.emissions.isEmpty)
    #expect(context.failures.map(\.code) == [.unavailable])
    #expect(context.failures.first?.message.contains(path) == true)
    #expect(context.pendingCount == 0)
  }

  @Test func crlfFileWorks() throws {
    let context = TestContext()
    StaticSource(path: Paths.fixture("geolocation", "geolocation_crlf")).start(context: context)
    let fix = try #require(context.fixes.first)
    #expect(fix.latitude == -33.8568)
    #expect(fix.horizontalAccuracy == 100)
  }

  /// The file is read when the source starts: the same position is stamped anew every 60 s, and an
  /// edit is picked up when the source starts again.
  @Test func readsTheFileWhenStarting() throws {
    try withTemporaryDirectory { directory in
      let path = try write("10\n20\n30\n40\n", to: "geolocation", in: directory)
      let context = TestContext()
      let source = StaticSource(path: path)
      source.start(context: context)
      _ = try write("11\n21\n31\n41\n", to: "geolocation", in: directory)
      context.advance(by: 60)
      #expect(context.fixes.map(\.latitude) == [10, 10])
      #expect(context.fixes.map(\.time) == context.fixes.map(\.time).sorted())
      #expect(context.fixes.last?.time != context.fixes.first?.time)
      source.stop()
      source.start(context: context)
      #expect(context.fixes.map(\.latitude) == [10, 10, 11])
      source.stop()
    }
  }
}
