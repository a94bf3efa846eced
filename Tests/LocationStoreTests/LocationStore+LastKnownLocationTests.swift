import Geodesy
import LocationModel
import Testing

@testable import LocationStore

@Suite struct LocationStoreLastKnownLocationTests {
  static let full = Fix(
    latitude: 47.376_887, longitude: 8.541_694, altitude: 408.5, ellipsoidalAltitude: 456.25,
    horizontalAccuracy: 4.5, verticalAccuracy: 7.25, speed: 1.5, speedAccuracy: 0.5, course: 271.5,
    courseAccuracy: 12, time: 1_764_400_000.125, quality: .rtkFloat, satellitesUsed: 14, floor: 3,
    isSimulated: true, source: "gpsd://127.0.0.1:2947")

  @Test func everyFieldSurvivesTheRoundTrip() throws {
    let store = try LocationStore.inMemory()
    try store.saveLastKnownLocation(Self.full, app: "a")
    #expect(try store.lastKnownLocation(app: "a") == Self.full)
  }

  @Test func missingOptionalsStayMissing() throws {
    let store = try LocationStore.inMemory()
    let bare = Fix(latitude: -33.9, longitude: 151.2, horizontalAccuracy: 100, time: 5)
    try store.saveLastKnownLocation(bare, app: "")
    #expect(try store.lastKnownLocation(app: "") == bare)
  }

  @Test func perAppAndMachineWideAreSeparateAndReplaced() throws {
    let store = try LocationStore.inMemory()
    #expect(try store.lastKnownLocation(app: "") == nil)
    var machine = Self.full
    machine.source = "static:///etc/geolocation"
    try store.saveLastKnownLocation(Self.full, app: "a")
    try store.saveLastKnownLocation(machine, app: "")
    var newer = Self.full
    newer.time += 60
    newer.latitude = 47.4
    try store.saveLastKnownLocation(newer, app: "a")
    #expect(try store.lastKnownLocation(app: "a") == newer)
    #expect(try store.lastKnownLocation(app: "") == machine)
  }

  @Test(arguments: [
    Fix(latitude: .nan, longitude: 0, horizontalAccuracy: 5, time: 0),
    Fix(latitude: 0, longitude: .nan, horizontalAccuracy: 5, time: 0),
    Fix(latitude: 90.5, longitude: 0, horizontalAccuracy: 5, time: 0),
    Fix(latitude: 0, longitude: .infinity, horizontalAccuracy: 5, time: 0),
    Fix(latitude: 0, longitude: 0, altitude: .nan, horizontalAccuracy: 5, time: 0),
    Fix(latitude: 0, longitude: 0, horizontalAccuracy: .nan, time: 0),
    Fix(latitude: 0, longitude: 0, horizontalAccuracy: 5, time: .infinity),
  ])
  func badNumbersAreRejectedBeforeWriting(fix: Fix) throws {
    let store = try LocationStore.inMemory()
    try store.saveLastKnownLocation(Self.full, app: "a")
    let error = #expect(throws: StoreError.self) { try store.saveLastKnownLocation(fix, app: "a") }
    #expect(error?.code == .invalidValue)
    #expect(error?.operation == "saveLastKnownLocation")
    #expect(try store.lastKnownLocation(app: "a") == Self.full)
  }
}
