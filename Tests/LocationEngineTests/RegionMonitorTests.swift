import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

@Suite struct RegionMonitorTests {
  static let centre = (latitude: 48.137, longitude: 11.575)

  static func spec(
    _ identifier: String, radius: Double = 100, hysteresis: Double = 5, entry: Bool = true,
    exit: Bool = true, latitude: Double = centre.latitude, longitude: Double = centre.longitude
  ) -> RegionSpec {
    RegionSpec(
      identifier: identifier, latitude: latitude, longitude: longitude, radius: radius,
      hysteresis: hysteresis, notifyOnEntry: entry, notifyOnExit: exit)
  }

  /// A point at about `distance` metres north-east of the centre, and its exact distance.
  static func point(_ distance: Double) -> (latitude: Double, longitude: Double, distance: Double) {
    let p = destination(
      latitude: centre.latitude, longitude: centre.longitude, distance: distance, bearing: 45)
    let d = Geodesic.wgs84.distance(
      latitude1: p.latitude, longitude1: p.longitude, latitude2: centre.latitude,
      longitude2: centre.longitude)
    return (p.latitude, p.longitude, d)
  }

  static func event(
    _ identifier: String, _ kind: RegionEvent.Kind, entry: Bool = true, exit: Bool = true
  ) -> RegionEvent {
    RegionEvent(identifier: identifier, kind: kind, notifyOnEntry: entry, notifyOnExit: exit)
  }

  @Test func firstDecisiveFixDeterminesOnly() throws {
    var monitor = RegionMonitor()
    #expect(try monitor.add(Self.spec("a")) == [])
    #expect(monitor.state(of: "a") == .unknown)
    // On the boundary band: no evidence, still unknown.
    let edge = Self.point(100)
    #expect(monitor.evaluate(latitude: edge.latitude, longitude: edge.longitude, accuracy: 5) == [])
    #expect(monitor.requestState(identifier: "a") == Self.event("a", .determined(.unknown)))
    let inside = Self.point(10)
    #expect(
      monitor.evaluate(latitude: inside.latitude, longitude: inside.longitude, accuracy: 5)
        == [Self.event("a", .determined(.inside))])
    #expect(
      monitor.evaluate(latitude: inside.latitude, longitude: inside.longitude, accuracy: 5) == [])
    let far = Self.point(500)
    #expect(
      monitor.evaluate(latitude: far.latitude, longitude: far.longitude, accuracy: 5)
        == [Self.event("a", .exited), Self.event("a", .determined(.outside))])
    #expect(monitor.requestState(identifier: "a") == Self.event("a", .determined(.outside)))
    #expect(monitor.requestState(identifier: "nobody") == nil)
  }

  @Test func firstFixOutsideDeterminesOnly() throws {
    var monitor = RegionMonitor()
    try monitor.add(Self.spec("a"))
    let far = Self.point(5000)
    #expect(
      monitor.evaluate(latitude: far.latitude, longitude: far.longitude, accuracy: 10)
        == [Self.event("a", .determined(.outside))])
    let inside = Self.point(0)
    #expect(
      monitor.evaluate(latitude: inside.latitude, longitude: inside.longitude, accuracy: 10)
        == [Self.event("a", .entered), Self.event("a", .determined(.inside))])
  }

  @Test(arguments: [(false, true), (true, false), (false, false)])
  func notifyFlagsTravelWithEvents(entry: Bool, exit: Bool) throws {
    var monitor = RegionMonitor()
    try monitor.add(Self.spec("a", entry: entry, exit: exit), initialState: .outside)
    let inside = Self.point(0)
    let entered = monitor.evaluate(
      latitude: inside.latitude, longitude: inside.longitude, accuracy: 5)
    #expect(
      entered == [
        Self.event("a", .entered, entry: entry, exit: exit),
        Self.event("a", .determined(.inside), entry: entry, exit: exit),
      ])
    #expect(entered.map(\.shouldNotify) == [entry, true])
    let far = Self.point(1000)
    let exited = monitor.evaluate(latitude: far.latitude, longitude: far.longitude, accuracy: 5)
    #expect(exited.map(\.kind) == [.exited, .determined(.outside)])
    #expect(exited.map(\.shouldNotify) == [exit, true])
  }

  /// Boundaries of the rule at the monitor, with a radius chosen so that `r - m` or `r + m` is
  /// exactly the fix's distance.
  struct Boundary: Sendable, CustomTestStringConvertible {
    var name: String
    var accuracy: Double
    var hysteresis: Double
    /// The radius is `d + offset` (so `r - m == d` when `offset == m`).
    var offset: Double
    var expected: RegionState
    var testDescription: String { name }
  }

  static let boundaries: [Boundary] = [
    Boundary(name: "a>h exactly r-a", accuracy: 20, hysteresis: 5, offset: 20, expected: .inside),
    Boundary(
      name: "a>h 1 cm inside", accuracy: 20, hysteresis: 5, offset: 20.01, expected: .inside),
    Boundary(
      name: "a>h 1 cm short", accuracy: 20, hysteresis: 5, offset: 19.99, expected: .unknown),
    Boundary(name: "a>h exactly r+a", accuracy: 20, hysteresis: 5, offset: -20, expected: .outside),
    Boundary(
      name: "a>h 1 cm short of r+a", accuracy: 20, hysteresis: 5, offset: -19.99, expected: .unknown
    ),
    Boundary(
      name: "a>h 1 cm outside", accuracy: 20, hysteresis: 5, offset: -20.01, expected: .outside),
    Boundary(name: "h>a exactly r-h", accuracy: 3, hysteresis: 25, offset: 25, expected: .inside),
    Boundary(
      name: "h>a 1 cm short", accuracy: 3, hysteresis: 25, offset: 24.99, expected: .unknown),
    Boundary(name: "h>a exactly r+h", accuracy: 3, hysteresis: 25, offset: -25, expected: .outside),
    Boundary(
      name: "h>a 1 cm short of r+h", accuracy: 3, hysteresis: 25, offset: -24.99, expected: .unknown
    ),
    Boundary(name: "invalid accuracy", accuracy: -1, hysteresis: 5, offset: 50, expected: .unknown),
  ]

  @Test(arguments: boundaries)
  func boundary(_ row: Boundary) throws {
    let p = Self.point(300)
    var radius = p.distance + row.offset
    // Make `radius ∓ m` land exactly on the distance where the row says "exactly".
    let margin = max(row.accuracy, row.hysteresis)
    if abs(row.offset) == margin {
      let target = p.distance
      for _ in 0..<8 where (row.offset > 0 ? radius - margin : radius + margin) != target {
        let value = row.offset > 0 ? radius - margin : radius + margin
        radius = value < target ? radius.nextUp : radius.nextDown
      }
      try #require((row.offset > 0 ? radius - margin : radius + margin) == target)
    }
    var monitor = RegionMonitor()
    try monitor.add(Self.spec("a", radius: radius, hysteresis: row.hysteresis))
    let events = monitor.evaluate(
      latitude: p.latitude, longitude: p.longitude, accuracy: row.accuracy)
    #expect(monitor.state(of: "a") == row.expected)
    #expect(
      events == (row.expected == .unknown ? [] : [Self.event("a", .determined(row.expected))]))
  }

  @Test func invalidFixIsNoEvidenceAndNotRemembered() throws {
    var monitor = RegionMonitor()
    try monitor.add(Self.spec("a"))
    let inside = Self.point(0)
    let fix = Fix(
      latitude: inside.latitude, longitude: inside.longitude, horizontalAccuracy: -1, time: 0)
    #expect(monitor.evaluate(fix) == [])
    #expect(monitor.evaluate(latitude: .nan, longitude: 0, accuracy: 5) == [])
    #expect(monitor.evaluate(latitude: 0, longitude: 200, accuracy: 5) == [])
    #expect(monitor.evaluate(latitude: 0, longitude: 0, accuracy: .nan) == [])
    // None of those is a last fix: a new region reports nothing.
    #expect(try monitor.add(Self.spec("b")) == [])
    let good = Fix(
      latitude: inside.latitude, longitude: inside.longitude, horizontalAccuracy: 5, time: 0)
    #expect(
      monitor.evaluate(good) == [
        Self.event("a", .determined(.inside)), Self.event("b", .determined(.inside)),
      ])
  }

  @Test func replacementByIdentifierKeepsPlaceAndResetsState() throws {
    var monitor = RegionMonitor()
    try monitor.add(Self.spec("a"))
    try monitor.add(Self.spec("b", radius: 50))
    let inside = Self.point(0)
    _ = monitor.evaluate(latitude: inside.latitude, longitude: inside.longitude, accuracy: 5)
    #expect(monitor.states == [.inside, .inside])
    // Replace "a" with a region far away: evaluated against the last fix at once.
    let far = Self.point(10_000)
    let events = try monitor.add(
      Self.spec("a", radius: 200, entry: false, latitude: far.latitude, longitude: far.longitude))
    #expect(events == [Self.event("a", .determined(.outside), entry: false)])
    #expect(monitor.count == 2)
    #expect(monitor.specs.map(\.identifier) == ["a", "b"])
    #expect(monitor.spec(of: "a")?.radius == 200)
    #expect(monitor.spec(of: "a")?.notifyOnEntry == false)
    // The new geometry is found by later fixes; the old one is not.
    #expect(
      monitor.evaluate(latitude: far.latitude, longitude: far.longitude, accuracy: 5) == [
        Self.event("a", .entered, entry: false),
        Self.event("a", .determined(.inside), entry: false),
        Self.event("b", .exited), Self.event("b", .determined(.outside)),
      ])
  }

  @Test func removal() throws {
    var monitor = RegionMonitor()
    try monitor.add(Self.spec("a"))
    try monitor.add(Self.spec("b"))
    let inside = Self.point(0)
    _ = monitor.evaluate(latitude: inside.latitude, longitude: inside.longitude, accuracy: 5)
    #expect(monitor.remove(identifier: "a")?.identifier == "a")
    #expect(monitor.remove(identifier: "a") == nil)
    #expect(monitor.state(of: "a") == nil)
    #expect(monitor.count == 1)
    let far = Self.point(1000)
    #expect(
      monitor.evaluate(latitude: far.latitude, longitude: far.longitude, accuracy: 5)
        == [Self.event("b", .exited), Self.event("b", .determined(.outside))])
    // Re-adding goes to the end and starts unknown.
    try monitor.add(Self.spec("a"))
    #expect(monitor.specs.map(\.identifier) == ["b", "a"])
    #expect(monitor.state(of: "a") == .outside)  // determined at once against the last fix
    #expect(monitor.remove(identifier: "b") != nil)
    #expect(monitor.remove(identifier: "a") != nil)
    #expect(monitor.count == 0)
    #expect(monitor.specs.isEmpty)
  }

  @Test func restoredStateReportsTheCrossing() throws {
    var monitor = RegionMonitor()
    try monitor.add(Self.spec("was-inside"), initialState: .inside)
    try monitor.add(Self.spec("was-outside", latitude: 0, longitude: 0), initialState: .outside)
    try monitor.add(Self.spec("still-outside", latitude: 10, longitude: 10), initialState: .outside)
    let far = Self.point(2000)
    // "was-inside" crossed out while the app was not running; the others agree with the fix.
    #expect(
      monitor.evaluate(latitude: far.latitude, longitude: far.longitude, accuracy: 5)
        == [Self.event("was-inside", .exited), Self.event("was-inside", .determined(.outside))])
    // A restored region added while a fix is known is evaluated against it at once.
    let events = try monitor.add(Self.spec("restored", radius: 5000), initialState: .outside)
    #expect(
      events == [Self.event("restored", .entered), Self.event("restored", .determined(.inside))])
    monitor.forgetLastFix()
    #expect(try monitor.add(Self.spec("later", radius: 5000), initialState: .outside) == [])
  }

  @Test func eventsFollowTheOrderOfSpecs() throws {
    var monitor = RegionMonitor()
    for name in ["z", "m", "a", "q"] { try monitor.add(Self.spec(name, radius: 50)) }
    try monitor.add(Self.spec("m", radius: 60))  // replacement keeps its place
    let inside = Self.point(0)
    let events = monitor.evaluate(
      latitude: inside.latitude, longitude: inside.longitude, accuracy: 5)
    #expect(events.map(\.identifier) == ["z", "m", "a", "q"])
  }

  @Test func storageStaysSmallPerRegion() throws {
    var monitor = RegionMonitor()
    monitor.reserveCapacity(5000, identifierBytes: 5000 * 12)
    for i in 0..<5000 {
      let lat = 48 + Double(i % 100) * 0.001
      let lon = 11 + Double(i / 100) * 0.001
      try monitor.add(
        RegionSpec(identifier: "region-\(i)", latitude: lat, longitude: lon, radius: 200))
    }
    monitor.buildIndex()
    #expect(monitor.storageBytes / monitor.count <= 200)
  }
}
