import Geodesy
import LocationEngine
import LocationModel
import LocationProtocol
import LocationServices
import TestSupport
import Testing

/// The protocol codec: every message round-trips, every error code has a line that produces it,
/// and the line reader enforces the 64 KiB limit.
@Suite struct DaemonProtocolTests {
  static let fullFix = Fix(
    latitude: 52.123_456_789, longitude: -5.1, altitude: 12.5, ellipsoidalAltitude: 55.25,
    horizontalAccuracy: 4.2, verticalAccuracy: 3, speed: 1.5, speedAccuracy: 0.1, course: 359.9,
    courseAccuracy: 2, time: 1_767_225_600.125, quality: .rtkFloat, satellitesUsed: 11, floor: -2,
    isSimulated: true, source: "gpsd://127.0.0.1:2947 \"quoted\"\n")
  static let region = RegionSpec(
    identifier: "home ⌂", latitude: 52.1, longitude: 5.1, radius: 100, hysteresis: 7.5,
    notifyOnEntry: false, notifyOnExit: true)
  static let event = DaemonRegionEvent(
    RegionEvent(identifier: "home", kind: .entered, notifyOnEntry: true, notifyOnExit: false),
    date: 1_700_000_000.5)

  static let messages: [DaemonMessage] = [
    .hello(version: 1, role: .app),
    .hello(version: 7, role: .agent),
    .welcome(
      DaemonWelcome(
        app: "org.example.App", uid: 1000,
        authorization: AuthorizationSnapshot(
          status: .authorizedWhenInUse, accuracy: .reducedAccuracy, servicesEnabled: false),
        regions: [DaemonRegionEntry(group: "monitor:fence", region: region, state: .inside)],
        maximumRegionRadius: 1_000_000, headingAvailable: true, significantChangeAvailable: true)),
    .error(DaemonErrorMessage(code: .tooLarge, message: "too long")),
    .error(DaemonErrorMessage(code: .notFound, message: "no such app", id: 4)),
    .error(DaemonErrorMessage(code: .locationUnknown, message: "", client: 3)),
    .ping(id: 12),
    .register(client: 1),
    .refreshRegions,
    .regionsChanged,
    .regionList([DaemonRegionEntry(group: "monitor:fence ⌂", region: region, state: .outside)]),
    .regionList([]),
    .regionEvents(
      group: "manager",
      events: [
        DaemonRegionEvent(
          RegionEvent(identifier: "home", kind: .entered, notifyOnEntry: true, notifyOnExit: false),
          date: 3, region: region)
      ], sequence: nil),
    .unregister(client: 2),
    .startUpdates(
      client: 1,
      request: UpdateRequest(
        desiredAccuracy: 10, distanceFilter: 5, pausesAutomatically: false, activity: .fitness)),
    .changeRequest(client: 1, request: UpdateRequest(pausesAutomatically: true)),
    .stopUpdates(client: 1),
    .requestLocation(client: 9, request: UpdateRequest(desiredAccuracy: 3000)),
    .startSignificantChanges(client: 1),
    .stopSignificantChanges(client: 1),
    .requestAuthorization(always: true),
    .addRegion(client: 1, group: "manager", region: region, initialState: .outside),
    .removeRegion(group: "monitor:x", identifier: "home"),
    .requestRegionState(client: 1, group: "manager", identifier: "home"),
    .startHeading(client: 1, filter: 1, orientation: .landscapeLeft),
    .changeHeading(client: 1, filter: -1, orientation: .portrait),
    .stopHeading(client: 1),
    .allowDeferred(client: 1, distance: .greatestFiniteMagnitude, timeout: .infinity),
    .disallowDeferred(client: 1),
    .ack(sequence: 9_007_199_254_740_991),
    .startVisits(client: 1),
    .startVisits(client: 0),
    .stopVisits,
    .visit(
      Visit(
        latitude: 52.1, longitude: -5.25, horizontalAccuracy: 31.5, arrival: 1_767_225_600,
        departure: nil), sequence: 4),
    .visit(
      Visit(
        latitude: -33, longitude: 151, horizontalAccuracy: 3000, arrival: nil,
        departure: 1_767_229_200.25), sequence: nil),
    .locations(
      client: 1,
      [
        fullFix,
        Fix(latitude: -90, longitude: 180, horizontalAccuracy: -1, time: 0, quality: .none),
      ]),
    .authorization(AuthorizationSnapshot(status: .denied)),
    .regionEvents(group: "manager", events: [event], sequence: 17),
    .regionEvents(
      group: "monitor:a",
      events: [
        DaemonRegionEvent(
          RegionEvent(
            identifier: "a", kind: .determined(.unknown), notifyOnEntry: true, notifyOnExit: true),
          date: 1),
        DaemonRegionEvent(
          RegionEvent(identifier: "b", kind: .exited, notifyOnEntry: true, notifyOnExit: true),
          date: 2),
      ], sequence: nil),
    .regionStarted(client: 1, group: "manager", region: region),
    .regionFailed(
      client: 1, group: "manager", identifier: "x", failure: .invalid("radius not positive")),
    .regionFailed(client: 1, group: "manager", identifier: "x", failure: .denied),
    .regionState(client: 2, group: "manager", event: event),
    .heading(
      client: 1,
      DeliveredHeading(
        magneticHeading: 10, trueHeading: 12.5, accuracy: 3, x: 1, y: nil, z: -40,
        time: 1_767_225_600, source: "iio-compass", isSimulated: false,
        declination: MagneticDeclination(degrees: 2.5, modelName: "WMM-2025"), limitation: nil)),
    .heading(
      client: 1,
      DeliveredHeading(
        magneticHeading: 10, trueHeading: -1, accuracy: -1, time: 5,
        limitation: .magneticModelUnavailable(
          MagneticModelError(code: .outOfValidRange, message: "2031")))),
    .heading(
      client: 1,
      DeliveredHeading(
        magneticHeading: 0, trueHeading: -1, accuracy: 1, time: 5, limitation: .noLocation)),
    .headingInterference(client: 1, HeadingInterference(measured: 120, expected: nil)),
    .deferredFinished(client: 1, code: nil),
    .deferredFinished(client: 1, code: 15),
    .paused(client: 1),
    .resumed(client: 1),
    .status(id: 1),
    .apps(id: 2),
    .authorize(id: 3, app: "org.x", status: .reset, accuracy: .reduced),
    .regions(id: 4, app: "/usr/bin/app"),
    .sources(id: 5),
    .services(id: 6, enabled: false),
    .reply(id: 1, .done),
    .reply(
      id: 1,
      .status(
        DaemonStatus(
          sources: [
            DaemonSourceStatus(
              url: "gpsd://h:2947", running: true, power: "high", onSeconds: 12.5, users: 2)
          ],
          clients: [DaemonClientInfo(app: "org.x", pid: 42, uid: 1000, managers: 2)],
          apps: ["org.x", "org.y"], servicesEnabled: true,
          history: DaemonHistoryStatus(points: 3, oldest: 1.7e9, newest: 1.7e9 + 2, days: 7.5)))),
    .reply(
      id: 2,
      .apps([
        DaemonAppInfo(
          app: "org.x", authorization: AuthorizationSnapshot(status: .authorizedAlways), regions: 3,
          pendingEvents: 1, connected: true)
      ])),
    .reply(id: 4, .regions([DaemonRegionEntry(group: "manager", region: region, state: .outside)])),
    .reply(
      id: 5,
      .sources([
        DaemonSourceStatus(
          url: "static:///etc/geolocation", running: false, power: "none", onSeconds: 0,
          failure: "gone")
      ])),
    .authorizationRequest(id: 1, app: "org.x", always: false, purpose: nil),
    .authorizationRequest(
      id: 2, app: "org.x", always: true, purpose: "Shows the boat on the chart"),
    .purpose(text: "Shows the boat on the chart"), .purpose(text: ""),
    .requestTemporaryFullAccuracy(id: 3, purposeKey: "Navigation"),
    .temporaryFullAccuracyResult(id: 3, declined: nil),
    .temporaryFullAccuracyResult(id: 4, declined: "the app already has full accuracy"),
    .temporaryFullAccuracyRequest(id: 5, app: "org.x", purposeKey: "Navigation", purpose: nil),
    .temporaryFullAccuracyRequest(
      id: 6, app: "org.x", purposeKey: "Navigation", purpose: "Shows the boat on the chart"),
    .authorization(
      AuthorizationSnapshot(status: .notDetermined, requestInProgress: true)),
    .authorizationDecision(id: 1, status: .once, accuracy: .reduced),
    .startRanging(client: 1, constraint: BeaconConstraint(uuid: beaconUUID)),
    .stopRanging(client: 1, constraint: BeaconConstraint(uuid: beaconUUID, major: 3, minor: 4)),
    .beacons(
      client: 1, constraint: BeaconConstraint(uuid: beaconUUID, major: 3),
      beacons: [
        RangedBeacon(
          uuid: beaconUUID, major: 3, minor: 65_535, proximity: .near, accuracy: 1.5, rssi: -62,
          time: 1_767_225_600.5),
        RangedBeacon(
          uuid: beaconUUID, major: 3, minor: 0, proximity: .unknown, accuracy: -1, rssi: 0,
          time: 1_767_225_600.5),
      ]),
    .rangingFailed(client: 2, constraint: BeaconConstraint(uuid: beaconUUID), reason: .denied),
    .wifi(id: 7, forget: false), .wifi(id: 8, forget: true),
    .wifiImport(
      id: 9,
      accessPoints: [
        DaemonImportedAccessPoint(bssid: "01:23:45:67:89:AB", latitude: 52.1, longitude: 5.1),
        DaemonImportedAccessPoint(
          bssid: "01:23:45:67:89:AC", latitude: -33.9, longitude: 151.2, radius: 80, samples: 12,
          time: 1_767_225_600),
      ]),
    .reply(id: 7, .wifi(DaemonWifiStatus(learning: true, known: 0, mobile: 0))),
    .reply(
      id: 8,
      .wifi(
        DaemonWifiStatus(
          learning: false, known: 1200, mobile: 3, lastLearned: 1_767_225_600.5, forgotten: 4))),
    .addRegion(
      client: 1, group: "manager",
      region: .beacon(identifier: "desk", BeaconConstraint(uuid: beaconUUID, major: 1)),
      initialState: .unknown),
    .history(id: 10, query: DaemonHistoryQuery()),
    .history(
      id: 11,
      query: DaemonHistoryQuery(
        since: 1_767_225_600, until: 1_767_312_000,
        after: DaemonHistoryCursor(time: 1_767_225_700.5, sequence: 42), limit: 3)),
    .reply(id: 10, .history(DaemonHistoryPage(points: []))),
    .reply(
      id: 11,
      .history(
        DaemonHistoryPage(
          points: [
            Fix(
              latitude: 52.1, longitude: 4.9, altitude: 2.5, horizontalAccuracy: 4,
              verticalAccuracy: 6, speed: 1.5, course: 90, time: 1_767_225_600.25),
            Fix(latitude: -33.9, longitude: 151.2, horizontalAccuracy: 12, time: 1_767_225_601),
          ], next: DaemonHistoryCursor(time: 1_767_225_601, sequence: 7)))),
  ]

  static let beaconUUID = BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)

  @Test(arguments: [
    #"{"type":"startRanging","client":1,"constraint":{"uuid":"not-a-uuid"}}"#,
    #"{"type":"startRanging","client":1,"constraint":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","minor":2}}"#,
    #"{"type":"startRanging","client":1,"constraint":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":65536}}"#,
    #"{"type":"startRanging","client":1,"constraint":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":-1}}"#,
    #"{"type":"startRanging","client":1}"#,
  ])
  func malformedConstraintsAreRefused(_ line: String) {
    #expect(throws: DaemonProtocolError.self) {
      _ = try DaemonProtocol.decode(line: Array((line + "\n").utf8))
    }
  }

  @Test(arguments: messages) func roundTrip(_ message: DaemonMessage) throws {
    let line = DaemonProtocol.encode(message)
    #expect(line.last == UInt8(ascii: "\n"))
    #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false, "one line")
    let decoded = try DaemonProtocol.decode(line: line)
    #expect(decoded == message)
  }

  @Test func everyTypeIsCovered() {
    #expect(Set(Self.messages.map(\.kind)) == Set(DaemonMessage.Kind.allCases))
    #expect(DaemonMessage.Kind.allCases.count == 59)
  }

  /// A `history` page at its largest stays far within a client's line limit, and bounds that
  /// are not finite or a limit that is not positive are refused.
  @Test func historyPagesAreBoundedAndQueriesChecked() throws {
    let point = Fix(
      latitude: -89.123456789012, longitude: -179.12345678901, altitude: -12_345.678901234,
      horizontalAccuracy: 12_345.678901234, verticalAccuracy: 12_345.678901234,
      speed: 123.45678901234, course: 359.12345678901, time: 1_767_225_600.123456)
    let line = DaemonProtocol.encode(
      .reply(
        id: 1,
        .history(
          DaemonHistoryPage(
            points: Array(repeating: point, count: DaemonHistoryQuery.maximumPoints),
            next: DaemonHistoryCursor(time: 1_767_225_600.123456, sequence: .max >> 11)))))
    #expect(line.count < 512 * 1024)
    for bad in [
      #"{"type":"history","id":1,"since":"NaN"}"#, #"{"type":"history","id":1,"until":"Infinity"}"#,
      #"{"type":"history","id":1,"limit":0}"#,
      #"{"type":"history","id":1,"after":{"time":"-Infinity","sequence":1}}"#,
      #"{"type":"history","id":1,"after":{"time":5}}"#,
    ] {
      #expect(throws: DaemonProtocolError.self, "\(bad)") {
        _ = try DaemonProtocol.decode(line: Array(bad.utf8))
      }
    }
  }

  @Test func typeComesFirstAndOptionalsAreNull() {
    let text = String(
      decoding: DaemonProtocol.encode(
        .locations(
          client: 1,
          [
            Fix(latitude: 1, longitude: 2, horizontalAccuracy: 3, time: 4)
          ])), as: UTF8.self)
    #expect(text.hasPrefix(#"{"type":"locations","client":1,"locations":[{"latitude":1,"#))
    #expect(text.contains(#""altitude":null"#))
    #expect(text.contains(#""quality":"autonomous""#))
  }

  @Test func nonFiniteNumbersTravelAsStrings() throws {
    let message = DaemonMessage.allowDeferred(client: 1, distance: -.infinity, timeout: .nan)
    let text = String(decoding: DaemonProtocol.encode(message), as: UTF8.self)
    #expect(text.contains(#""distance":"-Infinity""#))
    guard
      case .allowDeferred(_, let distance, let timeout) = try DaemonProtocol.decode(
        line: Array(text.utf8))
    else {
      Issue.record("wrong type")
      return
    }
    #expect(distance == -.infinity)
    #expect(timeout.isNaN)
  }

  @Test func decoderAcceptsDocumentedExamplesAndIgnoresUnknownMembers() throws {
    let lines = [
      #"{"type":"hello","version":1,"role":"app","app":"i.am.lying"}"#,
      #"{"type":"startUpdates","client":1,"request":{"desiredAccuracy":-1,"distanceFilter":-1,"pausesAutomatically":true,"activity":"other"}}"#,
      #"{"type":"addRegion","client":1,"group":"manager","region":{"identifier":"home","latitude":52.1,"longitude":5.1,"radius":100,"hysteresis":5,"notifyOnEntry":true,"notifyOnExit":true},"initialState":"unknown"}"#,
      "{\"type\":\"ack\",\"sequence\":17,\"future\":[1,{\"a\":null}]}\r\n",
      #"  {"type" : "status" , "id" : 1.0e0 }  "#,
    ]
    let decoded = try lines.map { line throws(DaemonProtocolError) in
      try DaemonProtocol.decode(line: Array(line.utf8))
    }
    #expect(decoded[0] == .hello(version: 1, role: .app))
    #expect(
      decoded[1] == .startUpdates(client: 1, request: UpdateRequest(pausesAutomatically: true)))
    #expect(
      decoded[2]
        == .addRegion(
          client: 1, group: "manager",
          region: RegionSpec(identifier: "home", latitude: 52.1, longitude: 5.1, radius: 100),
          initialState: .unknown))
    #expect(decoded[3] == .ack(sequence: 17))
    #expect(decoded[4] == .status(id: 1))
  }

  static let failures: [(String, DaemonErrorCode)] = [
    ("", .malformed),
    ("not json", .malformed),
    ("[1,2]", .malformed),
    (#"{"type":"hello","version":1,"role":"app"} x"#, .malformed),
    (#"{"type":"hello","version":1,"role":"app""#, .malformed),
    (#"{"type":"hello","version":1.5,"role":"app"}"#, .malformed),
    (#"{"type":"hello","version":"1","role":"app"}"#, .malformed),
    (#"{"type":"hello","version":1,"role":"root"}"#, .malformed),
    (#"{"type":"hello","version":1,"version":2,"role":"app"}"#, .malformed),
    (#"{"type":"ack","sequence":1e300}"#, .malformed),
    (#"{"type":"register","client":01}"#, .malformed),
    (#"{"type":"removeRegion","group":"everything","identifier":"x"}"#, .malformed),
    (#"{"type":"removeRegion","group":"monitor:","identifier":"x"}"#, .malformed),
    (#"{"type":"startHeading","client":1,"orientation":4294967296}"#, .malformed),
    ("{\"type\":\"register\",\"client\":1,\"s\":\"\u{1}\"}", .malformed),
    (#"{"type":"register","client":1,"s":"\ud800"}"#, .malformed),
    (#"{"type":"register","client":1,"s":"\x"}"#, .malformed),
    (String(repeating: "[", count: 100) + String(repeating: "]", count: 100), .malformed),
    (#"{"type":"launchMissiles"}"#, .unknownType),
    (#"{"version":1}"#, .missingField),
    (#"{"type":null}"#, .missingField),
    (#"{"type":"hello","role":"app"}"#, .missingField),
    (#"{"type":"register"}"#, .missingField),
    (#"{"type":"register","client":null}"#, .missingField),
    (
      #"{"type":"addRegion","client":1,"group":"manager","region":{"identifier":"x"}}"#,
      .missingField
    ),
    (#"{"type":"authorize","id":3,"app":"x"}"#, .missingField),
    (#"{"type":5}"#, .malformed),
  ]

  @Test(arguments: failures) func decodeErrors(_ line: String, _ code: DaemonErrorCode) {
    #expect {
      try DaemonProtocol.decode(line: Array(line.utf8))
    } throws: { error in
      (error as? DaemonProtocolError)?.code == code
    }
  }

  @Test func invalidUTF8IsMalformed() {
    let line: [UInt8] =
      Array(#"{"type":"register","client":1,"s":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
    #expect(throws: DaemonProtocolError.self) { try DaemonProtocol.decode(line: line) }
  }

  @Test func oversizedLineIsTooLarge() {
    let line = Array(repeating: UInt8(ascii: " "), count: DaemonLineReader.defaultLimit + 1)
    #expect {
      try DaemonProtocol.decode(line: line)
    } throws: { error in
      (error as? DaemonProtocolError)?.code == .tooLarge
    }
  }

  @Test func errorsCarryTheRequestID() {
    #expect {
      try DaemonProtocol.decode(line: Array(#"{"type":"regions","id":7}"#.utf8))
    } throws: { error in
      let error = error as? DaemonProtocolError
      return error?.code == .missingField && error?.id == 7
    }
  }

  @Test func errorMessagesNameTheField() {
    #expect {
      try DaemonProtocol.decode(
        line: Array(#"{"type":"locations","client":1,"locations":[{"latitude":"north"}]}"#.utf8))
    } throws: { error in
      (error as? DaemonProtocolError)?.message.contains("locations[0].latitude") == true
    }
  }

  @Test func groupNames() {
    #expect(DaemonProtocol.isValidGroup("manager"))
    #expect(DaemonProtocol.isValidGroup("monitor:a"))
    #expect(!DaemonProtocol.isValidGroup("monitor:"))
    #expect(!DaemonProtocol.isValidGroup("Manager"))
  }

  // MARK: Line reader

  @Test func readerSplitsLinesAcrossChunks() {
    var reader = DaemonLineReader(limit: 16)
    reader.append(Array("ab".utf8))
    #expect(reader.next() == nil)
    reader.append(Array("c\r\nde\n\nf".utf8))
    #expect(reader.next() == .line(Array("abc".utf8)))
    #expect(reader.next() == .line(Array("de".utf8)))
    #expect(reader.next() == .line([]))
    #expect(reader.next() == nil)
    #expect(reader.pendingByteCount == 1)
    #expect(reader.finish() == .truncated(1))
    #expect(reader.finish() == nil)
  }

  @Test func readerAcceptsExactlyTheLimit() {
    var reader = DaemonLineReader(limit: 4)
    reader.append(Array("abcd\r\nabcde\n".utf8))
    #expect(reader.next() == .line(Array("abcd".utf8)))
    #expect(reader.next() == .tooLarge)
    #expect(reader.next() == nil)
  }

  @Test func readerReportsAnEndlessLineOnceAndKeepsMemoryBounded() {
    var reader = DaemonLineReader(limit: 8)
    var reports = 0
    for _ in 0..<1000 {
      reader.append(Array(repeating: UInt8(ascii: "x"), count: 5))
      while let item = reader.next() {
        #expect(item == .tooLarge)
        reports += 1
      }
      #expect(reader.pendingByteCount <= 10)
    }
    #expect(reports == 1)
    reader.append(Array("x\nok\n".utf8))
    #expect(reader.next() == .line(Array("ok".utf8)))
    #expect(reader.finish() == nil)
  }

  /// Seeded mutations of every valid line (flipped, dropped, duplicated and inserted bytes,
  /// truncations): the decoder returns or throws, never traps, and what it returns re-encodes.
  @Test func mutatedLinesNeverTrap() {
    var generator = SplitMix64(seed: 0x5EED)
    let lines = Self.messages.map { Array(DaemonProtocol.encode($0).dropLast()) }
    let interesting =
      Array(#"{}[]",:0123456789.eE+-\u"truefalsenull"#.utf8) + [0, 0xFF, 0xC3, 0x80]
    var decoded = 0
    for _ in 0..<20_000 {
      var line = lines[Int(generator.next() % UInt64(lines.count))]
      for _ in 0..<(1 + generator.next() % 4) {
        guard !line.isEmpty else { break }
        let position = Int(generator.next() % UInt64(line.count))
        switch generator.next() % 5 {
        case 0: line[position] ^= UInt8(truncatingIfNeeded: 1 << (generator.next() % 8))
        case 1: line.remove(at: position)
        case 2: line.insert(line[position], at: position)
        case 3:
          line.insert(
            interesting[Int(generator.next() % UInt64(interesting.count))], at: position)
        default: line.removeLast(line.count - position)
        }
      }
      if let message = try? DaemonProtocol.decode(line: line) {
        decoded += 1
        _ = DaemonProtocol.encode(message)
      }
    }
    #expect(decoded > 0)
  }
}

/// A welcome listing thousands of regions is longer than the 64 KiB a peer may send the daemon;
/// a client reading the daemon passes a larger limit.
@Suite struct DaemonProtocolLongLineTests {
  @Test func aLongWelcomeDecodesWithTheClientsLimitOnly() throws {
    let regions = (0..<2000).map {
      DaemonRegionEntry(
        group: "manager",
        region: RegionSpec(
          identifier: "region \($0)", latitude: 52, longitude: 5 + Double($0) / 1000, radius: 50),
        state: .outside)
    }
    let welcome = DaemonMessage.welcome(
      DaemonWelcome(
        app: "org.example.App", uid: 1000,
        authorization: AuthorizationSnapshot(status: .authorizedWhenInUse),
        regions: regions, maximumRegionRadius: 1_000_000, headingAvailable: false,
        significantChangeAvailable: true))
    let line = DaemonProtocol.encode(welcome)
    #expect(line.count > DaemonLineReader.defaultLimit)
    #expect(throws: DaemonProtocolError.self) { try DaemonProtocol.decode(line: line) }
    let decoded = try DaemonProtocol.decode(line: line, limit: 16 << 20)
    #expect(decoded == welcome)
  }
}

/// The daemon encodes a fix once for all the managers that receive it.
@Suite struct DaemonProtocolSharedFixesTests {
  @Test func locationsAroundEncodedFixesAreTheSameBytes() throws {
    let fixes = [
      Fix(
        latitude: 52.1, longitude: 5.1, altitude: 3.5, horizontalAccuracy: 4.2, speed: 1.5,
        course: 270, time: 1_767_225_601.25, quality: .autonomous, source: "gpsd://x"),
      Fix(latitude: -33.9, longitude: 151.2, horizontalAccuracy: -1, time: 1_767_225_602),
    ]
    for client in [1, 42, 100_000] {
      let shared = DaemonProtocol.encodeLocations(
        client: client, fixesJSON: DaemonProtocol.encodeFixes(fixes))
      #expect(shared == DaemonProtocol.encode(.locations(client: client, fixes)))
      #expect(try DaemonProtocol.decode(line: shared) == .locations(client: client, fixes))
    }
  }
}
