import Foundation
import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// The learned table and the estimate an `AccessPointRecord`'s sums hold.
@Suite struct AccessPointTableTests {
  static let plane = LocalTangentPlane(latitude: 52.5, longitude: 13.4)

  /// A latitude and longitude `east`, `north` metres from the tests' origin.
  static func place(_ east: Double, _ north: Double) -> (latitude: Double, longitude: Double) {
    plane.unproject(east: east, north: north)
  }

  /// A record of observations at the given places (metres), weight 1 each, at time 0.
  static func record(_ bssid: UInt64, _ places: [(Double, Double)], time: Double = 0)
    -> AccessPointRecord
  {
    let first = place(places[0].0, places[0].1)
    var record = AccessPointRecord(
      bssid: bssid, latitude: first.latitude, longitude: first.longitude, weight: 1, time: time)
    for (east, north) in places.dropFirst() {
      let point = place(east, north)
      record = record.adding(
        latitude: point.latitude, longitude: point.longitude, weight: 1, time: time)
    }
    return record
  }

  @Test func oneObservationIsItsPlaceWithNoSpread() {
    let record = Self.record(1, [(30, -40)])
    let expected = Self.place(30, -40)
    #expect(abs(record.position.latitude - expected.latitude) < 1e-9)
    #expect(abs(record.position.longitude - expected.longitude) < 1e-9)
    #expect(record.spread < 0.01)
    #expect(record.observations == 1)
  }

  @Test func centroidAndSpreadOfASquare() {
    // Four corners of a 100 m square around (0, 0): centroid (0, 0), RMS distance 50·√2 m.
    let record = Self.record(2, [(50, 50), (-50, 50), (-50, -50), (50, -50)])
    let centre = Self.plane.project(
      latitude: record.position.latitude, longitude: record.position.longitude)
    #expect(abs(centre.east) < 0.01 && abs(centre.north) < 0.01)
    // The sphere's radius differs from WGS-84's radii of curvature here by under 0.5 %.
    #expect(abs(record.spread - 50 * 2.0.squareRoot()) < 0.005 * 50 * 2.0.squareRoot())
    #expect(record.observations == 4)
  }

  @Test func weightsPullTheCentroid() {
    let a = Self.place(0, 0)
    let b = Self.place(90, 0)
    let record = AccessPointRecord(
      bssid: 3, latitude: a.latitude, longitude: a.longitude, weight: 2, time: 10
    ).adding(latitude: b.latitude, longitude: b.longitude, weight: 1, time: 20)
    let centre = Self.plane.project(
      latitude: record.position.latitude, longitude: record.position.longitude)
    #expect(abs(centre.east - 30) < 0.01)
    #expect(abs(centre.north) < 0.01)
    // RMS: √((2·30² + 60²) / 3) = √1800.
    #expect(abs(record.spread - 1_800.0.squareRoot()) < 0.005 * 1_800.0.squareRoot())
    #expect(record.firstSeen == 10 && record.lastSeen == 20)
    let distance = record.distance(latitude: b.latitude, longitude: b.longitude)
    #expect(abs(distance - 60) < 0.005 * 60)
  }

  @Test func upsertLookupRemoveAndCount() {
    var table = AccessPointTable()
    #expect(table.count == 0)
    table.upsert(Self.record(7, [(0, 0)]))
    table.upsert(Self.record(8, [(10, 0)]))
    table.upsert(Self.record(7, [(5, 5), (6, 6)]))
    #expect(table.count == 2)
    #expect(table[bssid: 7]?.observations == 2)
    #expect(table[bssid: 9] == nil)
    #expect(table.remove(8)?.bssid == 8)
    #expect(table.remove(8) == nil)
    #expect(table.count == 1)
    let copy = AccessPointTable(records: table.records)
    #expect(copy == table)
  }

  @Test func expireDropsOnlyTheOldOnes() {
    var table = AccessPointTable(records: [
      Self.record(1, [(0, 0)], time: 100),
      Self.record(2, [(0, 0)], time: 500),
      Self.record(3, [(0, 0)], time: 50),
    ])
    #expect(table.expire(now: 1_000, notHeardFor: 600) == [1, 3])
    #expect(table.count == 1)
    #expect(table[bssid: 2] != nil)
    #expect(table.expire(now: 1_000, notHeardFor: 600) == [])
  }
}
