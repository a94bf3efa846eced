import Foundation
import LocationModel
import Testing

@testable import LocationEngine

/// Learning access points from scans that coincide with good fixes.
@Suite struct WifiLearnerTests {
  /// A fix `east`, `north` metres from the tests' origin at `time`.
  static func fix(
    _ east: Double, _ north: Double, time: Double, accuracy: Double = 5,
    quality: FixQuality = .autonomous
  ) -> Fix {
    let place = AccessPointTableTests.place(east, north)
    return Fix(
      latitude: place.latitude, longitude: place.longitude, horizontalAccuracy: accuracy,
      time: time, quality: quality)
  }

  /// A scan at `time` of the given BSSIDs, each at −60 dBm unless said.
  static func scan(_ bssids: [UInt64], time: Double, ssid: String = "home", signal: Double = -60)
    -> WifiScan
  {
    WifiScan(
      time: time,
      readings: bssids.map {
        AccessPointReading(bssid: $0, ssid: Array(ssid.utf8), signal: signal, frequency: 2412)
      }, source: "wifi")
  }

  @Test func aCoincidentScanIsLearnedAtTheFix() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    learner.note(Self.fix(10, 20, time: 100))
    let changed = learner.learn(Self.scan([1, 2], time: 101.5), into: &table)
    #expect(changed.map(\.bssid) == [1, 2])
    #expect(table.count == 2)
    let expected = AccessPointTableTests.place(10, 20)
    #expect(abs(table[bssid: 1]!.position.latitude - expected.latitude) < 1e-9)
    #expect(table[bssid: 1]!.lastSeen == 101.5)
  }

  @Test func theCoincidenceWindowIsTwoSecondsEitherWay() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    learner.note(Self.fix(0, 0, time: 100))
    #expect(learner.learn(Self.scan([1], time: 102.5), into: &table).isEmpty)
    #expect(learner.learn(Self.scan([1], time: 97.5), into: &table).isEmpty)
    #expect(learner.learn(Self.scan([1], time: 98), into: &table).count == 1)
    #expect(learner.learn(Self.scan([1], time: 102), into: &table).count == 1)
    #expect(table[bssid: 1]?.observations == 2)
  }

  @Test func noFixNoLearning() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    #expect(learner.learn(Self.scan([1], time: 100), into: &table).isEmpty)
    #expect(table.count == 0)
  }

  @Test func badFixesAreIgnored() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    for quality in FixQuality.allCases {
      switch quality {
      case .autonomous, .differential, .precise, .rtkFixed, .rtkFloat: continue
      case .none, .estimated, .manual, .simulated, .network: break
      }
      learner.note(Self.fix(0, 0, time: 100, quality: quality))
      #expect(learner.lastFix == nil, "quality \(quality)")
    }
    learner.note(Self.fix(0, 0, time: 100, accuracy: 25))
    learner.note(Self.fix(0, 0, time: 100, accuracy: -1))
    #expect(learner.lastFix == nil)
    #expect(learner.learn(Self.scan([1], time: 100), into: &table).isEmpty)
    // A good fix then a bad one: the good one stays the place of the next scan.
    learner.note(Self.fix(0, 0, time: 100, quality: .differential))
    learner.note(Self.fix(500, 0, time: 101, accuracy: 20, quality: .network))
    #expect(learner.lastFix?.quality == .differential)
    #expect(learner.learn(Self.scan([1], time: 101), into: &table).count == 1)
  }

  @Test func nomapIsNeverRecorded() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    learner.note(Self.fix(0, 0, time: 100))
    var scan = Self.scan([1, 2], time: 100, ssid: "cafe_nomap")
    scan.readings.append(
      AccessPointReading(bssid: 3, ssid: Array("cafe".utf8), signal: -70, frequency: 2412))
    let changed = learner.learn(scan, into: &table)
    #expect(changed.map(\.bssid) == [3])
    #expect(table[bssid: 1] == nil && table[bssid: 2] == nil)
    #expect(table.count == 1)
  }

  @Test func louderReadingsWeighMore() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    learner.note(Self.fix(0, 0, time: 100))
    _ = learner.learn(Self.scan([1], time: 100, signal: -50), into: &table)
    learner.note(Self.fix(100, 0, time: 110))
    _ = learner.learn(Self.scan([1], time: 110, signal: -80), into: &table)
    let record = table[bssid: 1]!
    let centre = AccessPointTableTests.plane.project(
      latitude: record.position.latitude, longitude: record.position.longitude)
    #expect(centre.east > 0 && centre.east < 20)
  }

  @Test func aFarObservationMarksMobileAndItStaysMobile() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    for (index, east) in [0.0, 20, 40].enumerated() {
      learner.note(Self.fix(east, 0, time: 100 + Double(index) * 10))
      _ = learner.learn(Self.scan([1], time: 100 + Double(index) * 10), into: &table)
    }
    #expect(table[bssid: 1]?.mobile == false)
    learner.note(Self.fix(1_500, 0, time: 300))
    let changed = learner.learn(Self.scan([1], time: 300), into: &table)
    #expect(changed.first?.mobile == true)
    #expect(table[bssid: 1]?.mobile == true)
    #expect(table[bssid: 1]?.observations == 3)
    // Heard back home: still mobile, and still remembered as heard.
    learner.note(Self.fix(20, 0, time: 400))
    _ = learner.learn(Self.scan([1], time: 400), into: &table)
    #expect(table[bssid: 1]?.mobile == true)
    #expect(table[bssid: 1]?.lastSeen == 400)
  }

  @Test func aLongSilentAccessPointHeardFarAwayHasMoved() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    for (index, east) in [0.0, 20, 40].enumerated() {
      learner.note(Self.fix(east, 0, time: 100 + Double(index) * 10))
      _ = learner.learn(Self.scan([1], time: 100 + Double(index) * 10), into: &table)
    }
    let later = 100 + 40 * 86_400.0
    learner.note(Self.fix(3_000, 0, time: later))
    _ = learner.learn(Self.scan([1], time: later), into: &table)
    let record = table[bssid: 1]!
    #expect(!record.mobile)
    #expect(record.observations == 1)
    #expect(record.firstSeen == later)
    let here = AccessPointTableTests.place(3_000, 0)
    #expect(record.distance(latitude: here.latitude, longitude: here.longitude) < 1)
  }

  @Test func expiryUsesTheConfiguredAge() {
    var learner = WifiLearner()
    learner.configuration.expiry = 1_000
    var table = AccessPointTable()
    learner.note(Self.fix(0, 0, time: 100))
    _ = learner.learn(Self.scan([1, 2], time: 100), into: &table)
    learner.note(Self.fix(0, 0, time: 900))
    _ = learner.learn(Self.scan([2], time: 900), into: &table)
    #expect(learner.expire(&table, now: 1_500) == [1])
    #expect(table.count == 1)
  }
}

/// A scan that met no fix is kept for the fix that follows within the window.
@Suite struct WifiLearnerScanBeforeFixTests {
  @Test func aScanBeforeTheFixIsLearnedAtIt() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    #expect(learner.learn(WifiLearnerTests.scan([1, 2], time: 98.5), into: &table).isEmpty)
    learner.note(WifiLearnerTests.fix(10, 20, time: 100))
    let scan = try! #require(learner.scanBeforeLastFix)
    #expect(learner.learn(scan, into: &table).map(\.bssid) == [1, 2])
    #expect(table[bssid: 1]?.lastSeen == 98.5)
    #expect(learner.scanBeforeLastFix == nil, "each scan is learned once")
    learner.note(WifiLearnerTests.fix(10, 20, time: 100.5))
    #expect(learner.scanBeforeLastFix == nil)
  }

  @Test func aScanTooLongBeforeTheFixIsNotKeptForIt() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    _ = learner.learn(WifiLearnerTests.scan([1], time: 97.5), into: &table)
    learner.note(WifiLearnerTests.fix(0, 0, time: 100))
    #expect(learner.scanBeforeLastFix == nil)
    learner.note(WifiLearnerTests.fix(0, 0, time: 100, accuracy: 50))
    #expect(learner.lastFix?.horizontalAccuracy == 5, "a poor fix does not replace a good one")
  }

  @Test func aFixAwaitsAScanUntilOneIsLearnedNearIt() {
    var learner = WifiLearner()
    var table = AccessPointTable()
    #expect(!learner.awaitsScan(at: 100), "no fix")
    learner.note(WifiLearnerTests.fix(0, 0, time: 100))
    #expect(learner.awaitsScan(at: 100.5))
    #expect(!learner.awaitsScan(at: 103), "the fix is too old for a scan now to meet it")
    _ = learner.learn(WifiLearnerTests.scan([1], time: 101), into: &table)
    #expect(!learner.awaitsScan(at: 101))
    learner.note(WifiLearnerTests.fix(0, 0, time: 102))
    #expect(!learner.awaitsScan(at: 102), "the scan at 101 met it")
    learner.note(WifiLearnerTests.fix(0, 0, time: 104))
    #expect(learner.awaitsScan(at: 104))
  }
}
