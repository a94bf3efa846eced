import LocationModel
import Testing

@testable import LocationFormats

/// OwnTracks' JSON messages against the examples OwnTracks documents (the OwnTracks booklet,
/// github.com/owntracks/booklet, read at commit 8a5a150), and round trips through our `Fix`.
@Suite struct OwnTracksCodecTests {
  // MARK: documented examples

  /// `docs/guide/quicksetup.md`: what `mosquitto_sub` shows of an Android phone's publish.
  @Test func quickSetupLocation() throws {
    let payload = """
      {"_type":"location","SSID":"mywifi","alt":154,"batt":53,"conn":"w","created_at":1706856299,\
      "lat":48.856826,"lon":2.292713,"tid":"j1","tst":1706856298,"vel":0}
      """
    let message = try OwnTracksMessage.decode(payload)
    #expect(
      message
        == .location(
          OwnTracksLocation(
            latitude: 48.856826, longitude: 2.292713, altitude: 154, velocity: 0,
            timestamp: 1_706_856_298, trackerID: "j1")))
    guard case .location(let location) = message else { return }
    let fix = location.fix(source: "owntracks+mqtt://broker/owntracks/jane/nokia")
    #expect(fix.latitude == 48.856826 && fix.longitude == 2.292713)
    #expect(fix.altitude == 154 && fix.verticalAccuracy == -1)
    #expect(fix.speed == 0 && fix.course == -1)
    #expect(fix.horizontalAccuracy == OwnTracksLocation.assumedAccuracy)
    #expect(fix.time == 1_706_856_298)
    #expect(fix.quality == .network)
    #expect(fix.source == "owntracks+mqtt://broker/owntracks/jane/nokia")
  }

  /// `docs/tech/lua.md` (a trigger, `batt` -1) and `docs/features/traccar.md` (members in another
  /// order, a space after a comma).
  @Test func luaAndTraccarLocations() throws {
    let lua = try OwnTracksMessage.decode(
      #"{"batt":-1,"lon":2.29513,"lat":48.85833,"t":"u","tst":1441984413,"_type":"location","tid":"JJ"}"#
    )
    #expect(
      lua
        == .location(
          OwnTracksLocation(
            latitude: 48.85833, longitude: 2.29513, timestamp: 1_441_984_413, trackerID: "JJ",
            trigger: .user)))
    let traccar = try OwnTracksMessage.decode(
      #"{"lon":2.29513,"lat":48.85833,"_type":"location","tst":1497476456, "tid":"JJ"}"#)
    #expect(
      traccar
        == .location(
          OwnTracksLocation(
            latitude: 48.85833, longitude: 2.29513, timestamp: 1_497_476_456, trackerID: "JJ")))
  }

  /// `docs/features/waypoints.md`: the transition published on entering a region (no `acc`).
  @Test func waypointsPageTransition() throws {
    let payload = """
      {
            "_type": "transition",
            "desc": "My favorite coffee shop (Delaville)",
            "event": "enter",
            "lat": 48.87069,
            "lon": 2.34916,
            "rid": "f7676c",
            "tid": "j1",
            "tst": 1707057574,
            "wtst": 1610104395
      }
      """
    let expected = OwnTracksTransition(
      event: .enter, name: "My favorite coffee shop (Delaville)", regionID: "f7676c",
      waypointTimestamp: 1_610_104_395, timestamp: 1_707_057_574, latitude: 48.87069,
      longitude: 2.34916, trackerID: "j1")
    #expect(try OwnTracksMessage.decode(payload) == .transition(expected))
  }

  /// `docs/features/beacons.md`: a beacon region's transition, with `acc`.
  @Test func beaconsPageTransition() throws {
    let payload = """
      {
          "_type": "transition",
          "acc": 65,
          "desc": "Main@WestWing",
          "event": "enter",
          "lat": 2.2222,
          "lon": 1.1111,
          "tid": "jp",
          "tst": 1433342520,
          "wtst": 1432817332
      }
      """
    let expected = OwnTracksTransition(
      event: .enter, name: "Main@WestWing", waypointTimestamp: 1_432_817_332,
      timestamp: 1_433_342_520, latitude: 2.2222, longitude: 1.1111, accuracy: 65,
      trackerID: "jp")
    #expect(try OwnTracksMessage.decode(payload) == .transition(expected))
  }

  /// `docs/features/waypoints.md`: a waypoint whose `rad` and `tst` are strings, with a `wtst`
  /// the format does not define for waypoints (ignored).
  @Test func waypointsPageWaypointWithStringNumbers() throws {
    let payload = """
      {
          "_type": "waypoint",
          "desc": "My favorite coffee shop (Delaville)",
          "lat": 48.87069,
          "lon": 2.34916,
          "rad": "50",
          "tst": "1385997757",
          "rid": "f7676c",
          "wtst": 1610104395
      }
      """
    let expected = OwnTracksWaypoint(
      name: "My favorite coffee shop (Delaville)", latitude: 48.87069, longitude: 2.34916,
      radius: 50, timestamp: 1_385_997_757, regionID: "f7676c")
    #expect(try OwnTracksMessage.decode(payload) == .waypoint(expected))
  }

  /// `docs/features/waypoints.md`: the `setWaypoints` command is another `_type` (reported as
  /// such); the `waypoints` message inside it decodes.
  @Test func waypointsPageSetWaypoints() throws {
    let list = """
      {
          "_type": "waypoints",
          "waypoints": [
              {
                  "_type": "waypoint",
                  "tst": 1708625557,
                  "rid": "my-region-id-1",
                  "desc": "home",
                  "rad": 100,
                  "lat": 30.0,
                  "lon": 40.0
              },
              {
                  "_type": "waypoint",
                  "tst": 1708625558,
                  "rid": "my-region-id-2",
                  "desc": "work",
                  "rad": 100,
                  "lat": 30.1,
                  "lon": 40.1
              }
          ]
      }
      """
    let expected = OwnTracksWaypoints(waypoints: [
      OwnTracksWaypoint(
        name: "home", latitude: 30, longitude: 40, radius: 100, timestamp: 1_708_625_557,
        regionID: "my-region-id-1"),
      OwnTracksWaypoint(
        name: "work", latitude: 30.1, longitude: 40.1, radius: 100, timestamp: 1_708_625_558,
        regionID: "my-region-id-2"),
    ])
    #expect(try OwnTracksMessage.decode(list) == .waypoints(expected))
    let command = #"{"_type": "cmd", "action": "setWaypoints", "waypoints": "# + list + "}"
    #expect(try OwnTracksMessage.decode(command) == .other(type: "cmd"))
  }

  /// `docs/features/beacons.md`: an `.otrw` file of waypoints (a beacon region, `rad` 0).
  @Test func beaconsPageWaypointsFile() throws {
    let payload = """
      {
        "waypoints" : [
          {
            "tst" : 1432817332,
            "lat" : 52.0,
            "_type" : "waypoint",
            "lon" : 6.0,
            "rad" : 0,
            "desc" : "Main@WestWing:DEADBEEF-ABBA-CAFE-AFFE-123456789012:0001"
          }
        ],
        "_type" : "waypoints"
      }
      """
    let expected = OwnTracksWaypoint(
      name: "Main@WestWing:DEADBEEF-ABBA-CAFE-AFFE-123456789012:0001", latitude: 52,
      longitude: 6, radius: 0, timestamp: 1_432_817_332)
    #expect(
      try OwnTracksMessage.decode(payload) == .waypoints(OwnTracksWaypoints(waypoints: [expected])))
  }

  /// `docs/tech/json.md`, `_type=lwt`: `tst` is when the device connected.
  @Test func lastWill() throws {
    let will = OwnTracksMessage.lastWill(OwnTracksLastWill(timestamp: 1_706_856_000))
    #expect(try will.encoded() == #"{"_type":"lwt","tst":1706856000}"#)
    #expect(try OwnTracksMessage.decode(#"{"_type":"lwt","tst":1706856000}"#) == will)
  }

  // MARK: encoding

  /// A fix becomes OwnTracks' units and integers (`docs/tech/json.md`: `vel` in km/h, the others
  /// in whole metres, degrees and seconds), with `_type` first and the rest in order.
  @Test func encodesAFix() throws {
    let fix = Fix(
      latitude: 52.6171, longitude: 5.2461, altitude: -0.4, horizontalAccuracy: 4.6,
      verticalAccuracy: 7.5, speed: 5.1, course: 359.6, time: 1_706_856_298.75)
    let location = try OwnTracksLocation(fix: fix, trackerID: "cl", trigger: .ping)
    #expect(location.accuracy == 5 && location.altitude == 0 && location.verticalAccuracy == 8)
    #expect(location.velocity == 18)  // 5.1 m/s = 18.36 km/h
    #expect(location.course == 0)  // 359.6 rounds to 360, which is 0
    #expect(location.timestamp == 1_706_856_298)  // the second the fix was taken in
    #expect(
      try OwnTracksMessage.location(location).encoded()
        == #"{"_type":"location","acc":5,"alt":0,"cog":0,"lat":52.6171,"lon":5.2461,"#
        + #""t":"p","tid":"cl","tst":1706856298,"vac":8,"vel":18}"#)
  }

  @Test func unknownMeasuresAreLeftOut() throws {
    let fix = Fix(latitude: -33.8568, longitude: 151.2153, horizontalAccuracy: 0.2, time: 10)
    let location = try OwnTracksLocation(fix: fix)
    #expect(location.accuracy == 1)  // never 0: a receiver would take it for exact
    #expect(
      try OwnTracksMessage.location(location).encoded()
        == #"{"_type":"location","acc":1,"lat":-33.8568,"lon":151.2153,"tst":10}"#)
    // vac only with an altitude.
    var noAltitude = fix
    noAltitude.verticalAccuracy = 3
    #expect(try OwnTracksLocation(fix: noAltitude).verticalAccuracy == nil)
  }

  @Test func refusesWhatHasNoPlaceInTheFormat() {
    var fix = Fix(latitude: 52, longitude: 5, horizontalAccuracy: -1, time: 10)
    #expect(throws: FormatError.self) { try OwnTracksLocation(fix: fix) }
    fix.horizontalAccuracy = 5
    fix.time = .nan
    #expect(throws: FormatError.self) { try OwnTracksLocation(fix: fix) }
    let bad = OwnTracksLocation(latitude: .infinity, longitude: 5, timestamp: 10)
    #expect(throws: FormatError.self) { try OwnTracksMessage.location(bad).encoded() }
    let course = OwnTracksLocation(latitude: 1, longitude: 5, course: 360, timestamp: 10)
    #expect(throws: FormatError.self) { try OwnTracksMessage.location(course).encoded() }
    #expect(throws: FormatError.self) { try OwnTracksMessage.other(type: "card").encoded() }
    let half = OwnTracksTransition(
      event: .leave, waypointTimestamp: 1, timestamp: 2, latitude: 1, longitude: nil)
    #expect(throws: FormatError.self) { try OwnTracksMessage.transition(half).encoded() }
  }

  @Test func escapesStrings() throws {
    let waypoint = OwnTracksWaypoint(
      name: "Quote \" back \\ line\nbell\u{07} Zürich", latitude: 47.37, longitude: 8.54,
      radius: 200, timestamp: 1, regionID: "r1")
    let json = try OwnTracksMessage.waypoint(waypoint).encoded()
    #expect(json.contains(#""desc":"Quote \" back \\ line\nbell\u0007 Zürich""#))
    #expect(try OwnTracksMessage.decode(json) == .waypoint(waypoint))
  }

  // MARK: decoding errors

  @Test(
    "malformed messages are errors naming the problem",
    arguments: [
      ("", FormatError.Code.malformed, "not JSON"),
      ("[1,2]", .malformed, "not a JSON object"),
      (#"{"lat":1}"#, .missingField, "_type"),
      (#"{"_type":5}"#, .invalidValue, "_type must be a string"),
      (#"{"_type":"location","lon":5,"tst":1}"#, .missingField, "lat"),
      (#"{"_type":"location","lat":91,"lon":5,"tst":1}"#, .invalidValue, "lat must be"),
      (#"{"_type":"location","lat":1,"lon":"east","tst":1}"#, .invalidValue, "lon must be"),
      (#"{"_type":"location","lat":1,"lon":5}"#, .missingField, "tst"),
      (#"{"_type":"location","lat":1,"lon":5,"tst":1,"acc":-3}"#, .invalidValue, "acc"),
      (#"{"_type":"location","lat":1,"lon":5,"tst":1e300}"#, .invalidValue, "tst"),
      (#"{"_type":"location","lat":1,"lon":5,"tst":1,"tid":7}"#, .invalidValue, "tid"),
      (#"{"_type":"location","lat":1,"lat":2,"lon":5,"tst":1}"#, .malformed, "not JSON"),
      (#"{"_type":"transition","event":"exit","tst":1,"wtst":1}"#, .invalidValue, "event"),
      (#"{"_type":"transition","tst":1,"wtst":1}"#, .missingField, "event"),
      (#"{"_type":"waypoint","tst":1}"#, .missingField, "desc"),
      (#"{"_type":"waypoints"}"#, .missingField, "waypoints"),
      (#"{"_type":"waypoints","waypoints":[{"desc":"a"}]}"#, .missingField, "waypoints[0]"),
      (#"{"_type":"lwt"}"#, .missingField, "tst"),
    ])
  func malformed(payload: String, code: FormatError.Code, fragment: String) {
    let error = #expect(throws: FormatError.self) { try OwnTracksMessage.decode(payload) }
    #expect(error?.code == code, "\(payload)")
    #expect(error?.message.contains(fragment) == true, "\(payload): \(error?.message ?? "")")
  }

  @Test func coordinatesStayOutOfErrors() {
    let error = #expect(throws: FormatError.self) {
      try OwnTracksMessage.decode(#"{"_type":"location","lat":48.8566,"lon":222.2945,"tst":1}"#)
    }
    #expect(error?.description.contains("222") == false)
    #expect(error?.description.contains("48.8") == false)
  }

  @Test func lenientWhereDevicesDiffer() throws {
    // Negative vel, cog and vac: a phone's "invalid"; a fractional integer is rounded; tst down.
    let message = try OwnTracksMessage.decode(
      #"{"_type":"location","lat":1,"lon":2,"tst":100.9,"acc":4.5,"vel":-1,"cog":-1,"#
        + #""alt":12,"vac":-1,"tid":null,"extra":{"nested":[1,2,3]}}"#)
    #expect(
      message
        == .location(
          OwnTracksLocation(latitude: 1, longitude: 2, accuracy: 5, altitude: 12, timestamp: 100)))
    let wrapped = try OwnTracksMessage.decode(
      #"{"_type":"location","lat":1,"lon":2,"tst":1,"cog":360}"#)
    #expect(
      wrapped == .location(OwnTracksLocation(latitude: 1, longitude: 2, course: 0, timestamp: 1)))
    let unknown = try OwnTracksMessage.decode(#"{"_type":"steps","steps":-1}"#)
    #expect(unknown == .other(type: "steps") && unknown.type == "steps")
  }

  @Test func refusesOverlongPayloads() {
    let payload = [UInt8](repeating: 0x20, count: OwnTracksMessage.maximumLength + 1)
    let error = #expect(throws: FormatError.self) { try OwnTracksMessage.decode(payload) }
    #expect(error?.code == .malformed)
  }

  // MARK: round trips

  /// Seeded fixes: fix to message to JSON and back gives the same message, and the fix read
  /// back differs from the original by no more than OwnTracks' units round.
  @Test func seededRoundTrips() throws {
    var random = SplitMix64(seed: 0x07_7AC5)
    for _ in 0..<2000 {
      let fix = Fix(
        latitude: random.uniform(-90...90), longitude: random.uniform(-180...180),
        altitude: random.chance(0.8) ? random.uniform(-400...9000) : nil,
        horizontalAccuracy: random.uniform(0...5000),
        verticalAccuracy: random.chance(0.8) ? random.uniform(0...100) : -1,
        speed: random.chance(0.8) ? random.uniform(0...300) : -1,
        course: random.chance(0.8) ? random.uniform(0...359.99) : -1,
        time: random.uniform(0...4_000_000_000))
      let trigger: OwnTracksTrigger? = random.chance(0.5) ? .ping : nil
      let location = try OwnTracksLocation(fix: fix, trackerID: "r1", trigger: trigger)
      let message = OwnTracksMessage.location(location)
      let decoded = try OwnTracksMessage.decode(try message.encoded())
      #expect(decoded == message)
      let back = location.fix(source: "test")
      #expect(back.latitude == fix.latitude && back.longitude == fix.longitude)
      #expect(abs(back.horizontalAccuracy - max(1, fix.horizontalAccuracy)) <= 0.5)
      #expect(back.time <= fix.time && fix.time - back.time < 1)
      if fix.speed >= 0 { #expect(abs(back.speed - fix.speed) <= 0.5 / 3.6 + 1e-9) }
      if fix.course >= 0 {
        let difference = abs(back.course - fix.course)
        #expect(min(difference, 360 - difference) <= 0.5 + 1e-9)
      }
      #expect((back.altitude == nil) == (fix.altitude == nil))
    }
  }

  @Test func transitionAndWaypointsRoundTrip() throws {
    let messages: [OwnTracksMessage] = [
      .transition(
        OwnTracksTransition(
          event: .leave, name: "home", regionID: "a1b2c3", waypointTimestamp: 1_610_104_395,
          timestamp: 1_707_057_574, latitude: 48.87069, longitude: 2.34916, accuracy: 12,
          trackerID: "j1", trigger: .circularRegion)),
      .waypoints(
        OwnTracksWaypoints(
          waypoints: [
            OwnTracksWaypoint(
              name: "home", latitude: 30, longitude: 40, radius: 100, timestamp: 1),
            OwnTracksWaypoint(name: "beacon only", timestamp: 2, regionID: "x"),
          ], creator: "locationd")),
      .waypoints(OwnTracksWaypoints(waypoints: [])),
    ]
    for message in messages {
      #expect(try OwnTracksMessage.decode(try message.encoded()) == message)
    }
  }
}

/// Region events and regions as OwnTracks' transitions and waypoints.
@Suite struct OwnTracksRegionTests {
  static let home = RegionSpec(
    identifier: "home", latitude: 48.87069, longitude: 2.34916, radius: 49.6,
    notifyOnEntry: true, notifyOnExit: true)

  @Test func waypointOfACircle() throws {
    let waypoint = try #require(
      OwnTracksWaypoint(region: Self.home, created: 1_610_104_395.7, regionID: "f7676c"))
    #expect(
      waypoint
        == OwnTracksWaypoint(
          name: "home", latitude: 48.87069, longitude: 2.34916, radius: 50,
          timestamp: 1_610_104_395, regionID: "f7676c"))
    var beacon = Self.home
    beacon.beacon = BeaconConstraint(uuid: BeaconUUID(high: 1, low: 2))
    #expect(OwnTracksWaypoint(region: beacon, created: 1) == nil)
  }

  @Test func transitionsOfEntriesAndExits() throws {
    let waypoint = try #require(OwnTracksWaypoint(region: Self.home, created: 1_610_104_395))
    let fix = Fix(
      latitude: 48.8707, longitude: 2.3492, horizontalAccuracy: 12.4, time: 1_707_057_574.6)
    let entry = RegionEvent(
      identifier: "home", kind: .entered, notifyOnEntry: true, notifyOnExit: true)
    #expect(
      OwnTracksTransition(event: entry, fix: fix, waypoint: waypoint, trackerID: "j1")
        == OwnTracksTransition(
          event: .enter, name: "home", waypointTimestamp: 1_610_104_395,
          timestamp: 1_707_057_574, latitude: 48.8707, longitude: 2.3492, accuracy: 12,
          trackerID: "j1", trigger: .circularRegion))
    // A kept event says when it happened.
    let exit = RegionEvent(
      identifier: "home", kind: .exited, notifyOnEntry: true, notifyOnExit: true,
      date: 1_707_000_000)
    let leave = try #require(OwnTracksTransition(event: exit, fix: fix, waypoint: waypoint))
    #expect(leave.event == .leave && leave.timestamp == 1_707_000_000)
    let determined = RegionEvent(
      identifier: "home", kind: .determined(.inside), notifyOnEntry: true, notifyOnExit: true)
    #expect(OwnTracksTransition(event: determined, fix: fix, waypoint: waypoint) == nil)
  }
}
