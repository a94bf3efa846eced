import Foundation
import Geodesy
import LocationModel
import LocationSimulation
import Testing

@testable import LocationEngine

/// Positioning from one scan and the learned table.
@Suite struct WifiLocatorTests {
  /// A table of records with observations at the given places (metres from the tests' origin).
  static func table(_ entries: [(UInt64, [(Double, Double)])]) -> AccessPointTable {
    AccessPointTable(records: entries.map { AccessPointTableTests.record($0.0, $0.1) })
  }

  /// Observations in a 40 m square around `east`, `north`: spread 20·√2 m.
  static func around(_ east: Double, _ north: Double) -> [(Double, Double)] {
    [
      (east - 20, north - 20), (east + 20, north - 20), (east + 20, north + 20),
      (east - 20, north + 20),
    ]
  }

  /// A scan of (BSSID, dBm) readings at time 1000.
  static func scan(_ readings: [(UInt64, Double)], ssid: String = "net") -> WifiScan {
    WifiScan(
      time: 1_000,
      readings: readings.map {
        AccessPointReading(bssid: $0.0, ssid: Array(ssid.utf8), signal: $0.1, frequency: 2412)
      }, source: "wifi://wlan0")
  }

  /// Where a fix lies in the tests' plane.
  static func plane(_ fix: Fix) -> (east: Double, north: Double) {
    AccessPointTableTests.plane.project(latitude: fix.latitude, longitude: fix.longitude)
  }

  @Test func equalSignalsGiveTheMidpointAndANetworkFix() throws {
    let table = Self.table([(1, Self.around(0, 0)), (2, Self.around(100, 0))])
    let fix = try #require(WifiLocator.locate(Self.scan([(1, -70), (2, -70)]), in: table))
    let place = Self.plane(fix)
    #expect(abs(place.east - 50) < 0.01 && abs(place.north) < 0.01)
    #expect(fix.quality == .network)
    #expect(fix.source == "wifi://wlan0")
    #expect(fix.time == 1_000)
    #expect(fix.speed < 0 && fix.course < 0 && fix.altitude == nil)
    // Spreads of 28 m and a disagreement of 50 m each: r = √(2 · (800 + 2500)) / 2 ≈ 40.6 m.
    #expect(fix.horizontalAccuracy >= 40)
  }

  @Test func theLouderAccessPointPullsHarder() throws {
    let table = Self.table([(1, Self.around(0, 0)), (2, Self.around(100, 0))])
    let fix = try #require(WifiLocator.locate(Self.scan([(1, -55), (2, -85)]), in: table))
    // 30 dB apart with n 3 and g 2: weights 100:1.
    #expect(abs(Self.plane(fix).east - 100.0 / 101) < 0.01)
  }

  @Test func unknownMobileAndNomapAccessPointsAreIgnored() throws {
    var table = Self.table([
      (1, Self.around(0, 0)), (2, Self.around(60, 0)), (3, Self.around(0, 60)),
    ])
    var mobile = try #require(table[bssid: 3])
    mobile.mobile = true
    table.upsert(mobile)
    var scan = Self.scan([(1, -70), (2, -70), (3, -50), (4, -40)])
    scan.readings.append(
      AccessPointReading(bssid: 1, ssid: Array("x_nomap".utf8), signal: -40, frequency: 2412))
    let fix = try #require(WifiLocator.locate(scan, in: table))
    #expect(abs(Self.plane(fix).east - 30) < 0.01 && abs(Self.plane(fix).north) < 0.01)
    #expect(WifiLocator.locate(Self.scan([(1, -70), (2, -70)], ssid: "a_nomap"), in: table) == nil)
    #expect(WifiLocator.locate(Self.scan([(4, -70), (5, -70)]), in: table) == nil)
  }

  @Test func oneAccessPointNeedsAMeasuredSpread() throws {
    let table = Self.table([
      (1, [(0, 0)]), (2, [(500, 0), (505, 0), (500, 5)]), (3, Self.around(1_000, 0)),
    ])
    // One observation: its spread says nothing of its range.
    #expect(WifiLocator.locate(Self.scan([(1, -60)]), in: table) == nil)
    // Three observations within 5 m: too narrow to tell.
    #expect(WifiLocator.locate(Self.scan([(2, -60)]), in: table) == nil)
    // Four observations over 28 m: located at it, with an accuracy no better than the spread.
    let fix = try #require(WifiLocator.locate(Self.scan([(3, -60)]), in: table))
    #expect(abs(Self.plane(fix).east - 1_000) < 0.01)
    #expect(fix.horizontalAccuracy >= 20 * 2.0.squareRoot())
  }

  @Test func aLoneKnownAccessPointAmongUnknownOnesIsNotTrusted() {
    let table = Self.table([(3, Self.around(1_000, 0))])
    // One unknown neighbour is allowed; two are not: the known one may have moved here.
    #expect(WifiLocator.locate(Self.scan([(3, -60), (10, -70)]), in: table) != nil)
    #expect(WifiLocator.locate(Self.scan([(3, -60), (10, -70), (11, -75)]), in: table) == nil)
  }

  @Test func aMovedAccessPointIsOutvoted() throws {
    let table = Self.table([
      (1, Self.around(0, 0)), (2, Self.around(40, 0)), (3, Self.around(0, 40)),
      (4, Self.around(1_500, 800)),
    ])
    // The moved one is the loudest: it was carried next to the device.
    let fix = try #require(
      WifiLocator.locate(Self.scan([(1, -70), (2, -72), (3, -75), (4, -45)]), in: table))
    let place = Self.plane(fix)
    #expect(hypot(place.east - 15, place.north - 15) < 20)
    #expect(fix.horizontalAccuracy < 60)
  }

  @Test func twoThatDisagreeGiveNoFix() {
    let table = Self.table([(1, Self.around(0, 0)), (2, Self.around(900, 0))])
    #expect(WifiLocator.locate(Self.scan([(1, -60), (2, -62)]), in: table) == nil)
  }

  @Test func theAccuracyIsNeverBelowTheFloor() throws {
    let table = Self.table([(1, [(0, 0), (1, 0), (0, 1)]), (2, [(2, 0), (3, 0), (2, 1)])])
    let fix = try #require(WifiLocator.locate(Self.scan([(1, -50), (2, -50)]), in: table))
    #expect(fix.horizontalAccuracy == WifiLocator.Configuration().accuracyFloor)
  }

  /// Learns 40 minutes of a seeded town, then locates 20 minutes of scans: the truth lies within
  /// the claimed accuracy most of the time, and the errors are those of `locbench wifi`'s scale.
  @Test func theAccuracyIsHonestOnASeededTown() throws {
    let town = WifiTown(seed: 11)
    var random = SplitMix64(seed: 12)
    var learner = WifiLearner()
    var table = AccessPointTable()
    for sample in town.drive(seed: 13, duration: 2_400) {
      if town.isFixTime(sample) { learner.note(town.fix(sample, &random)) }
      if town.isScanTime(sample) { _ = learner.learn(town.scan(sample, &random), into: &table) }
    }
    var errors: [Double] = []
    var within = 0
    for sample in town.drive(seed: 14, duration: 1_200, start: WifiTown.epoch + 2_400)
    where town.isScanTime(sample) {
      guard let fix = WifiLocator.locate(town.scan(sample, &random), in: table) else { continue }
      let place = town.plane.project(latitude: fix.latitude, longitude: fix.longitude)
      let error = hypot(place.east - sample.east, place.north - sample.north)
      errors.append(error)
      if error <= fix.horizontalAccuracy { within += 1 }
    }
    try #require(errors.count > 100)
    let fraction = Double(within) / Double(errors.count)
    #expect(fraction >= 0.68, "truth within the accuracy \(fraction)")
    #expect(errors.sorted()[errors.count / 2] <= 40)
  }
}
