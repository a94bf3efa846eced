import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// `ReducedAccuracy`: outputs near the truth but never finer than a cell, one output per cell,
/// averages that recover nothing, the poles and the antimeridian, bad input.
@Suite struct ReducedAccuracyTests {
  let reduction = ReducedAccuracy(secret: 0x1234_5678_9ABC_DEF0)

  /// The farthest an output may be from the truth: half the cell's diagonal (the farthest a
  /// point of the cell is from its centre) plus the offset, with 1 % for the ellipsoid. Near the
  /// poles the cells are wedges, wider at their equatorward edge.
  static func bound(latitude: Double) -> Double {
    abs(latitude) < 89 ? 3_200 : 3_700
  }

  /// Points spread over the globe, reproducibly (a linear congruential generator, Knuth's MMIX
  /// constants), with extra points in the polar caps and along the antimeridian.
  static func samples(count: Int) -> [(Double, Double)] {
    var state: UInt64 = 7
    func unit() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) * 0x1p-53
    }
    var points: [(Double, Double)] = []
    for index in 0..<count {
      switch index % 4 {
      case 0: points.append((unit() * 180 - 90, unit() * 360 - 180))
      case 1: points.append((89 + unit(), unit() * 360 - 180))  // the north polar cap
      case 2: points.append((-89 - unit(), unit() * 360 - 180))  // the south polar cap
      default:  // along the antimeridian, on both sides
        let side = unit() * 0.05
        points.append((unit() * 170 - 85, unit() < 0.5 ? 180 - side : -180 + side))
      }
    }
    return points
  }

  static func distance(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
    Geodesic.wgs84.distance(latitude1: a.0, longitude1: a.1, latitude2: b.0, longitude2: b.1)
  }

  @Test func everyOutputIsWithinTheBoundOfTheTruthAndValid() {
    var largest = 0.0
    for (latitude, longitude) in Self.samples(count: 20_000) {
      let truth = Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: 5, time: 0)
      let reduced = reduction.apply(truth)
      #expect(reduced.hasValidCoordinate)
      #expect(reduced.horizontalAccuracy == ReducedAccuracy.cellSize)
      let error = Self.distance((latitude, longitude), (reduced.latitude, reduced.longitude))
      largest = max(largest, error)
      #expect(
        error <= Self.bound(latitude: latitude),
        "\(latitude), \(longitude): \(error) m from the truth")
    }
    #expect(largest > 2_500, "the outputs are really displaced (largest: \(largest) m)")
  }

  @Test func cellsAreAboutThreeKilometresEverywhere() {
    #expect(ReducedAccuracy.bandCount == 6_672)
    #expect(abs(ReducedAccuracy.bandHeight * ReducedAccuracy.metresPerDegree - 3_000) < 1)
    for band in stride(from: 0, to: ReducedAccuracy.bandCount, by: 7) {
      let cell = ReducedAccuracy.Cell(
        band: band, column: 0, columns: ReducedAccuracy.columnCount(band: band))
      let parallel = RegionGeometry.sinCos(degrees: cell.centreLatitude).cos
      let width = cell.width * ReducedAccuracy.metresPerDegree * parallel
      #expect(width >= ReducedAccuracy.cellSize, "band \(band): never narrower than a cell")
      #expect(
        cell.columns < 100 || width <= ReducedAccuracy.cellSize * 1.01,
        "band \(band): about a cell wide away from the poles")
    }
  }

  @Test func measuresThatCouldBePreciseAreCleared() {
    let fix = Fix(
      latitude: 52.37, longitude: 4.89, altitude: 3, ellipsoidalAltitude: 46,
      horizontalAccuracy: 4, verticalAccuracy: 6, speed: 1.5, speedAccuracy: 0.3, course: 90,
      courseAccuracy: 5, time: 1_767_225_600, quality: .differential, satellitesUsed: 9, floor: 2,
      isSimulated: true, source: "gpsd://localhost:2947")
    let reduced = reduction.apply(fix)
    #expect(reduced.altitude == nil && reduced.ellipsoidalAltitude == nil)
    #expect(reduced.verticalAccuracy < 0)
    #expect(reduced.speed < 0 && reduced.speedAccuracy < 0)
    #expect(reduced.course < 0 && reduced.courseAccuracy < 0)
    #expect(reduced.floor == nil && reduced.satellitesUsed == nil)
    #expect(reduced.time == fix.time && reduced.quality == .differential)
    #expect(reduced.isSimulated && reduced.source == "gpsd://localhost:2947")
    #expect(reduced.horizontalAccuracy == 3_000)
    var coarse = fix
    coarse.horizontalAccuracy = 25_000
    #expect(reduction.apply(coarse).horizontalAccuracy == 25_000, "a worse accuracy stays")
  }

  @Test func everyFixInOneCellGivesTheSameOutputAndTheMeanRecoversNothing() throws {
    let cell = try #require(ReducedAccuracy.cell(latitude: 52.37, longitude: 4.89))
    let single = reduction.apply(
      Fix(
        latitude: cell.centreLatitude, longitude: cell.centreLongitude, horizontalAccuracy: 5,
        time: 0))
    var state: UInt64 = 99
    func unit() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) * 0x1p-53
    }
    // 10,000 fixes of a device sitting still at one place, with noise, all inside the cell.
    let truth = (cell.south + 0.3 * ReducedAccuracy.bandHeight, cell.west + 0.7 * cell.width)
    var sum = (0.0, 0.0)
    for _ in 0..<10_000 {
      let latitude = truth.0 + (unit() - 0.5) * 0.4 * ReducedAccuracy.bandHeight
      let longitude = truth.1 + (unit() - 0.5) * 0.4 * cell.width
      #expect(ReducedAccuracy.cell(latitude: latitude, longitude: longitude) == cell)
      let reduced = reduction.apply(
        Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: 5, time: 0))
      #expect(reduced == single)
      sum.0 += reduced.latitude
      sum.1 += reduced.longitude
    }
    let mean = (sum.0 / 10_000, sum.1 / 10_000)
    #expect(abs(mean.0 - single.latitude) < 1e-9 && abs(mean.1 - single.longitude) < 1e-9)
    // The output sits off the centre by the cell's offset, which averaging cannot remove.
    let offset = Self.distance(
      (cell.centreLatitude, cell.centreLongitude), (single.latitude, single.longitude))
    #expect(offset <= ReducedAccuracy.maximumOffset * 1.01)
    let meanError = Self.distance(truth, mean)
    #expect(abs(meanError - Self.distance(truth, (single.latitude, single.longitude))) < 1e-3)
  }

  @Test func neighbouringCellsGiveDifferentOutputs() throws {
    let here = reduction.apply(
      Fix(latitude: 52.37, longitude: 4.89, horizontalAccuracy: 5, time: 0))
    let north = reduction.apply(
      Fix(
        latitude: 52.37 + ReducedAccuracy.bandHeight, longitude: 4.89, horizontalAccuracy: 5,
        time: 0))
    #expect(here.latitude != north.latitude)
    #expect(Self.distance((here.latitude, here.longitude), (north.latitude, north.longitude)) > 500)
  }

  @Test func differentSecretsGiveDifferentOffsets() throws {
    let cell = try #require(ReducedAccuracy.cell(latitude: -33.86, longitude: 151.21))
    let outputs = (0..<50).map { ReducedAccuracy(secret: UInt64($0)).output(of: cell) }
    let distinct = Set(outputs.map { "\($0.latitude),\($0.longitude)" })
    #expect(distinct.count == 50)
    let same = ReducedAccuracy(secret: 3).output(of: cell)
    #expect(
      same.latitude == outputs[3].latitude && same.longitude == outputs[3].longitude,
      "the same secret, the same output (stable across restarts)")
    // Offsets are spread over the disc, not stuck at the centre.
    let distances = outputs.map {
      Self.distance((cell.centreLatitude, cell.centreLongitude), ($0.latitude, $0.longitude))
    }
    #expect(distances.allSatisfy { $0 <= ReducedAccuracy.maximumOffset * 1.01 })
    #expect(distances.contains { $0 > ReducedAccuracy.maximumOffset / 2 })
  }

  @Test(arguments: [
    (90.0, 0.0), (-90.0, 0.0), (90.0, 180.0), (-90.0, -180.0), (89.999_99, 179.999_99),
    (0.0, 180.0), (0.0, -180.0), (45.0, 179.999_999_9), (45.0, -179.999_999_9), (-12.0, 540.0),
    (10.0, -900.5), (0.0, 0.0),
  ])
  func polesAndTheAntimeridianGiveValidCoordinates(latitude: Double, longitude: Double) {
    let reduced = reduction.apply(
      Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: 5, time: 0))
    #expect(reduced.hasValidCoordinate)
    #expect(reduced.longitude >= -180 && reduced.longitude < 180)
    var normalized = (longitude + 180).truncatingRemainder(dividingBy: 360)
    if normalized < 0 { normalized += 360 }
    let error = Self.distance((latitude, normalized - 180), (reduced.latitude, reduced.longitude))
    #expect(error <= Self.bound(latitude: latitude))
  }

  @Test func bothSidesOfTheAntimeridianMeetInOneCell() {
    let east = reduction.apply(Fix(latitude: 10, longitude: 180, horizontalAccuracy: 5, time: 0))
    let west = reduction.apply(Fix(latitude: 10, longitude: -180, horizontalAccuracy: 5, time: 0))
    #expect(east == west, "180° is -180°")
  }

  @Test(arguments: [
    (Double.nan, 5.0, 5.0), (52.0, Double.nan, 5.0), (Double.infinity, 5.0, 5.0),
    (52.0, -Double.infinity, 5.0), (95.0, 5.0, 5.0), (-90.000_1, 5.0, 5.0),
  ])
  func nonPositionsPassUnchanged(latitude: Double, longitude: Double, accuracy: Double) {
    let fix = Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: accuracy, time: 7)
    let reduced = reduction.apply(fix)
    #expect(!reduced.hasValidCoordinate)
    #expect(reduced.time == 7)
    #expect(reduced.latitude.isNaN == latitude.isNaN)
  }

  @Test(arguments: [-1.0, Double.nan])
  func anInvalidAccuracyStaysInvalidButItsCoordinateIsSnapped(accuracy: Double) {
    let fix = Fix(
      latitude: 52.37, longitude: 4.89, altitude: 3, horizontalAccuracy: accuracy, time: 0)
    let reduced = reduction.apply(fix)
    #expect(!reduced.hasValidCoordinate)
    #expect(reduced.horizontalAccuracy.isNaN == accuracy.isNaN)
    #expect(reduced.altitude == nil)
    let valid = reduction.apply(
      Fix(latitude: 52.37, longitude: 4.89, horizontalAccuracy: 5, time: 0))
    #expect(reduced.latitude == valid.latitude && reduced.longitude == valid.longitude)
  }
}
