import LocationSources
import Testing

/// `SourceURL.parse` and `parseList`: every form the README documents, and every way to get one
/// wrong, with a message that names the problem.
@Suite struct SourceURLTests {
  typealias Options = SourceURL.ReplayOptions

  static let good: [(String, SourceURL)] = [
    ("replay:///tmp/track.gpx", .replay(path: "/tmp/track.gpx", options: Options())),
    ("replay:///tmp/t.gpx?speed=10", .replay(path: "/tmp/t.gpx", options: Options(speed: 10))),
    ("replay:///tmp/t.gpx?speed=0.5", .replay(path: "/tmp/t.gpx", options: Options(speed: 0.5))),
    ("replay:///tmp/t.gpx?instant=1", .replay(path: "/tmp/t.gpx", options: Options(instant: true))),
    ("replay:///tmp/t.gpx?instant", .replay(path: "/tmp/t.gpx", options: Options(instant: true))),
    (
      "replay:///tmp/t.gpx?instant=true",
      .replay(path: "/tmp/t.gpx", options: Options(instant: true))
    ),
    ("replay:///tmp/t.gpx?instant=0", .replay(path: "/tmp/t.gpx", options: Options())),
    ("replay:///tmp/t.gpx?loop=yes", .replay(path: "/tmp/t.gpx", options: Options(loop: true))),
    ("replay:///tmp/t.gpx?loop=off", .replay(path: "/tmp/t.gpx", options: Options())),
    (
      "replay:///tmp/t.gpx?speed=10&loop=1&instant=1",
      .replay(path: "/tmp/t.gpx", options: Options(speed: 10, instant: true, loop: true))
    ),
    ("REPLAY:///tmp/t.gpx", .replay(path: "/tmp/t.gpx", options: Options())),
    ("file:///tmp/t.nmea", .replay(path: "/tmp/t.nmea", options: Options())),
    ("  replay:///tmp/t.gpx \n", .replay(path: "/tmp/t.gpx", options: Options())),
    ("/tmp/track.gpx", .replay(path: "/tmp/track.gpx", options: Options())),
    ("/home/me/my track.nmea", .replay(path: "/home/me/my track.nmea", options: Options())),
    ("replay:///tmp/my%20track.gpx", .replay(path: "/tmp/my track.gpx", options: Options())),
    ("replay:///tmp/caf%C3%A9.gpx", .replay(path: "/tmp/café.gpx", options: Options())),
    ("replay:///tmp/a%3Fb.gpx", .replay(path: "/tmp/a?b.gpx", options: Options())),
    ("replay:///tmp/100%.gpx", .replay(path: "/tmp/100%.gpx", options: Options())),
    ("replay:///tmp/t.gpx?sp%65ed=2", .replay(path: "/tmp/t.gpx", options: Options(speed: 2))),
    ("static:///etc/geolocation", .staticFile(path: "/etc/geolocation")),
    ("Static:///srv/where%20am%20i", .staticFile(path: "/srv/where am i")),
    ("bluez", .bluez(adapter: nil)),
    ("bluez://", .bluez(adapter: nil)),
    ("bluez://hci1", .bluez(adapter: "hci1")),
    ("wifi", .wifi(interface: nil)),
    ("wifi://wlp2s0", .wifi(interface: "wlp2s0")),
    (
      "beacons+replay:///tmp/site.beacons.jsonl?speed=4&loop=1",
      .beaconReplay(path: "/tmp/site.beacons.jsonl", options: Options(speed: 4, loop: true))
    ),
  ]

  @Test(arguments: good)
  func parses(_ text: String, _ expected: SourceURL) throws {
    #expect(try SourceURL.parse(text) == expected)
  }

  /// Bad URLs: the message must contain every fragment.
  static let bad: [(String, [String])] = [
    ("", ["empty source URL"]),
    ("   ", ["empty source URL"]),
    ("bogus://127.0.0.1:2947", ["unknown source scheme 'bogus'", "known: replay, file, static"]),
    ("http://example.com/t.gpx", ["unknown source scheme 'http'"]),
    ("track.gpx", ["'track.gpx' is not a source URL", "replay, file, static"]),
    ("replay:track.gpx", ["not a source URL"]),
    ("replay://tmp/track.gpx", ["replay:// needs an absolute path"]),
    ("replay://", ["replay:// needs an absolute path"]),
    ("file://relative", ["file:// needs an absolute path"]),
    ("static://etc/geolocation", ["static:// needs an absolute path"]),
    ("replay:///t.gpx?speed=0", ["replay speed must be a positive number, not '0'"]),
    ("replay:///t.gpx?speed=-2", ["not '-2'"]),
    ("replay:///t.gpx?speed=fast", ["not 'fast'"]),
    ("replay:///t.gpx?speed=", ["replay speed must be a positive number, not ''"]),
    ("replay:///t.gpx?speed=inf", ["not 'inf'"]),
    ("replay:///t.gpx?speed=nan", ["not 'nan'"]),
    ("replay:///t.gpx?instant=maybe", ["instant must be 1 or 0, not 'maybe'"]),
    ("replay:///t.gpx?loop=2", ["loop must be 1 or 0, not '2'"]),
    ("replay:///t.gpx?rate=2", ["replay:// has no option 'rate'", "speed, instant, loop"]),
    ("static:///etc/geolocation?speed=2", ["static:// has no option 'speed'"]),
    ("bluez://hci0/../x", ["an adapter is named like hci0"]),
    ("bluez://hci0?scan=1", ["bluez:// has no option 'scan'"]),
    ("wifi://wlan0/x", ["an interface is named like wlan0"]),
    ("wifi://wlan0?scan=1", ["wifi:// has no option 'scan'"]),
    ("beacons+replay://site.jsonl", ["beacons+replay:// needs an absolute path"]),
    ("beacons+replay:///s.jsonl?speed=0", ["replay speed must be a positive number"]),
  ]

  @Test(arguments: bad)
  func rejects(_ text: String, _ fragments: [String]) {
    #expect {
      try SourceURL.parse(text)
    } throws: { error in
      guard let error = error as? SourceError else { return false }
      return error.code == .configuration && error.isPermanent
        && fragments.allSatisfy { error.message.contains($0) }
    }
  }

  @Test func parseListSplitsOnCommasAndSkipsBlanks() throws {
    let list = try SourceURL.parseList(
      " replay:///a.gpx?speed=2 , ,static:///etc/geolocation,/b.nmea,")
    #expect(
      list == [
        .replay(path: "/a.gpx", options: Options(speed: 2)),
        .staticFile(path: "/etc/geolocation"),
        .replay(path: "/b.nmea", options: Options()),
      ])
  }

  @Test(arguments: ["", " ", ",", " , ,"])
  func parseListOfNothingFails(_ text: String) {
    #expect {
      try SourceURL.parseList(text)
    } throws: { error in
      (error as? SourceError)?.message == "no source URL in '\(text)'"
    }
  }

  @Test func parseListReportsTheBadMember() {
    #expect {
      try SourceURL.parseList("replay:///a.gpx,bogus://x")
    } throws: { error in
      (error as? SourceError)?.message.contains("unknown source scheme 'bogus'") == true
    }
  }

  @Test(arguments: [
    (SourceURL.replay(path: "/a.gpx", options: Options()), "replay:///a.gpx"),
    (.replay(path: "/a.gpx", options: Options(speed: 10)), "replay:///a.gpx?speed=10.0"),
    (
      .replay(path: "/a.gpx", options: Options(speed: 2, instant: true, loop: true)),
      "replay:///a.gpx?speed=2.0&instant=1&loop=1"
    ),
    (.staticFile(path: "/etc/geolocation"), "static:///etc/geolocation"),
  ])
  func canonicalText(_ url: SourceURL, _ text: String) throws {
    #expect(url.text == text)
    #expect(try SourceURL.parse(url.text) == url)
  }

  /// The canonical text parses back to the same URL, also for paths with characters that are
  /// special in URLs (`?`, `%`, `&`).
  @Test(arguments: ["/tmp/a?b.gpx", "/tmp/100%41.gpx", "/tmp/x&y.gpx", "/tmp/my track.gpx"])
  func canonicalTextRoundTripsSpecialPaths(_ path: String) throws {
    for url in [
      SourceURL.replay(path: path, options: Options(speed: 3)), .staticFile(path: path),
    ] {
      #expect(try SourceURL.parse(url.text) == url, "text: \(url.text)")
    }
  }

  @Test func factoryMakesTheRightSource() throws {
    let replay = SourceFactory.make(
      .replay(path: "/tmp/none.gpx", options: Options(speed: 4, loop: true)))
    #expect(replay is ReplaySource)
    #expect(replay.descriptor.url == "replay:///tmp/none.gpx?speed=4.0&loop=1")
    #expect(replay.descriptor.nominalAccuracy == .infinity)
    #expect(replay.descriptor.power == .none)
    let fixed = SourceFactory.make(.staticFile(path: "/nonexistent/geolocation"))
    #expect(fixed is StaticSource)
    #expect(fixed.descriptor.url == "static:///nonexistent/geolocation")
    #expect(fixed.descriptor.producesLocation && !fixed.descriptor.producesHeading)
    let radio = SourceFactory.make(.bluez(adapter: "hci1"))
    #expect(radio is BlueZSource)
    #expect(radio.descriptor.url == "bluez://hci1")
    #expect(radio.descriptor.producesBeacons && !radio.descriptor.producesLocation)
    let scanner = SourceFactory.make(.wifi(interface: "wlan0"))
    #expect(scanner is WifiSource)
    #expect(scanner.descriptor.url == "wifi://wlan0")
    #expect(scanner.descriptor.producesScans && scanner.descriptor.power == .low)
    let recording = SourceFactory.make(.beaconReplay(path: "/tmp/s.jsonl", options: Options()))
    #expect(recording is BeaconReplaySource)
    #expect(recording.descriptor.url == "beacons+replay:///tmp/s.jsonl")
    #expect(
      try SourceURL.parse(recording.descriptor.url)
        == .beaconReplay(path: "/tmp/s.jsonl", options: Options()))
  }

  @Test func canonicalTextsParseBack() throws {
    for url: SourceURL in [
      .bluez(adapter: nil), .bluez(adapter: "hci0"), .wifi(interface: nil),
      .wifi(interface: "wlan0"),
      .beaconReplay(path: "/tmp/a b.jsonl", options: Options(speed: 2, instant: true)),
    ] {
      #expect(try SourceURL.parse(url.text) == url)
    }
  }
}
