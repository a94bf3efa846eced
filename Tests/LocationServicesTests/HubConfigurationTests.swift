import Foundation
import LocationModel
import LocationServices
import LocationSources
import TestSupport
import Testing

/// `HubConfiguration.fromEnvironment`: sources from the environment, configuration files and
/// discovery (files injected, nothing read from this machine), the app id, the store and the
/// policy.
@Suite struct HubConfigurationTests {
  typealias Options = SourceURL.ReplayOptions

  /// A configuration read with only the given files present.
  func configuration(
    _ environment: [String: String], files: [String: String] = [:], existing: Set<String> = [],
    answering: [SourceURL] = []
  ) -> HubConfiguration {
    HubConfiguration.fromEnvironment(
      environment, fileExists: { existing.contains($0) || files[$0] != nil },
      readFile: { files[$0] }, probe: { answering.contains($0) })
  }

  static let home = ["HOME": "/home/me"]

  // MARK: Sources

  @Test func singleURLFromTheEnvironment() {
    let sources = configuration(["CORELOCATION_SOURCE": "replay:///t.gpx?speed=5"]).sources
    #expect(sources.urls == [.replay(path: "/t.gpx", options: Options(speed: 5))])
  }

  @Test func listFromTheEnvironmentWinsOverFiles() {
    let sources = configuration(
      ["CORELOCATION_SOURCE": "static:///a, /b.nmea", "HOME": "/home/me"],
      files: ["/home/me/.config/corelocation/sources": "replay:///ignored.gpx"],
      existing: ["/etc/geolocation"]
    ).sources
    #expect(
      sources.urls == [.staticFile(path: "/a"), .replay(path: "/b.nmea", options: Options())])
  }

  @Test(arguments: [
    ("bogus://localhost", "unknown source scheme 'bogus'"),
    ("replay://relative.gpx", "needs an absolute path"),
    ("replay:///t.gpx?speed=0", "replay speed must be a positive number"),
    ("/a.gpx,,nonsense", "'nonsense' is not a source URL"),
  ])
  func badEnvironmentURLIsUnavailableNamingTheVariable(_ value: String, _ problem: String) {
    let message = configuration(["CORELOCATION_SOURCE": value], existing: ["/etc/geolocation"])
      .sources.unavailableMessage
    #expect(message?.hasPrefix("CORELOCATION_SOURCE: ") == true, "\(message ?? "nil")")
    #expect(message?.contains(problem) == true, "\(message ?? "nil")")
  }

  @Test(arguments: ["", "  ", "\t"])
  func blankEnvironmentIsIgnored(_ value: String) {
    let sources = configuration(
      ["CORELOCATION_SOURCE": value, "HOME": "/home/me"], existing: ["/etc/geolocation"]
    ).sources
    #expect(sources.urls == [.staticFile(path: "/etc/geolocation")])
  }

  @Test func userConfigurationFileWithComments() {
    let text = """
      # My sources
      replay:///home/me/ride.gpx?speed=10   # the Sunday ride

         # static:///etc/geolocation
      static:///home/me/geolocation
      """
    let sources = configuration(
      Self.home, files: ["/home/me/.config/corelocation/sources": text],
      existing: ["/etc/geolocation"]
    ).sources
    #expect(
      sources.urls == [
        .replay(path: "/home/me/ride.gpx", options: Options(speed: 10)),
        .staticFile(path: "/home/me/geolocation"),
      ])
  }

  @Test func badLineNamesFileAndLine() {
    let file = "/home/me/.config/corelocation/sources"
    let text = "# sources\nreplay:///ok.gpx\n\nbogus://system\nstatic:///etc/geolocation\n"
    let message = configuration(Self.home, files: [file: text]).sources.unavailableMessage
    #expect(message?.hasPrefix(file + ":4: ") == true, "\(message ?? "nil")")
    #expect(message?.contains("unknown source scheme 'bogus'") == true)
  }

  @Test func xdgConfigHomeIsUsedWhenAbsolute() {
    let sources = configuration(
      ["HOME": "/home/me", "XDG_CONFIG_HOME": "/cfg"],
      files: [
        "/cfg/corelocation/sources": "static:///from-xdg",
        "/home/me/.config/corelocation/sources": "static:///from-home",
      ]
    ).sources
    #expect(sources.urls == [.staticFile(path: "/from-xdg")])
  }

  @Test func relativeXDGConfigHomeIsIgnored() {
    let sources = configuration(
      ["HOME": "/home/me", "XDG_CONFIG_HOME": "cfg"],
      files: [
        "cfg/corelocation/sources": "static:///from-relative",
        "/home/me/.config/corelocation/sources": "static:///from-home",
      ]
    ).sources
    #expect(sources.urls == [.staticFile(path: "/from-home")])
  }

  @Test func systemConfigurationFileWhenTheUserHasNone() {
    let sources = configuration(
      Self.home,
      files: [
        "/home/me/.config/corelocation/sources": "# nothing here yet\n\n",
        "/etc/corelocation/sources": "static:///srv/geolocation\n",
      ],
      existing: ["/etc/geolocation"]
    ).sources
    #expect(sources.urls == [.staticFile(path: "/srv/geolocation")])
  }

  @Test func configurationFileWithWindowsLineEndings() {
    let sources = configuration(
      Self.home,
      files: [
        "/home/me/.config/corelocation/sources":
          "# sources\r\nreplay:///a.gpx\r\nstatic:///etc/geolocation\r\n"
      ]
    ).sources
    #expect(
      sources.urls == [
        .replay(path: "/a.gpx", options: Options()), .staticFile(path: "/etc/geolocation"),
      ])
  }

  @Test func discoversEtcGeolocation() {
    let sources = configuration(Self.home, existing: ["/etc/geolocation"]).sources
    #expect(sources.urls == [.staticFile(path: "/etc/geolocation")])
  }

  @Test func nothingConfiguredSaysWhatToDo() {
    let message = configuration(Self.home).sources.unavailableMessage
    #expect(message == HubConfiguration.noSourceMessage)
    for hint in ["CORELOCATION_SOURCE", "~/.config/corelocation/sources", "/etc/geolocation"] {
      #expect(HubConfiguration.noSourceMessage.contains(hint))
    }
  }

  @Test func noHomeStillWorks() {
    let message = configuration([:]).sources.unavailableMessage
    #expect(message == HubConfiguration.noSourceMessage)
  }

  // MARK: App, store, policy

  @Test func appIdentifierFromTheEnvironment() {
    #expect(configuration(["CORELOCATION_APP_ID": "org.example.map"]).app == "org.example.map")
  }

  @Test(arguments: [[:], ["CORELOCATION_APP_ID": ""]])
  func appIdentifierDefaultsToTheExecutable(_ environment: [String: String]) {
    let app = configuration(environment).app
    #expect(app == HubConfiguration.executablePath())
    #expect(app.hasPrefix("/"))
  }

  @Test(
    arguments: [
      (["CORELOCATION_STORE": ":memory:"], nil),
      (["CORELOCATION_STORE": "/var/tmp/s.sqlite"], "/var/tmp/s.sqlite"),
      (["HOME": "/home/me"], "/home/me/.local/state/corelocation/store.sqlite"),
      (
        ["HOME": "/home/me", "CORELOCATION_STORE": ""],
        "/home/me/.local/state/corelocation/store.sqlite"
      ),
      (["HOME": "/home/me", "XDG_STATE_HOME": "/state"], "/state/corelocation/store.sqlite"),
    ] as [([String: String], String?)])
  func storePath(_ environment: [String: String], _ expected: String?) {
    #expect(configuration(environment).storePath == expected)
  }

  @Test(
    arguments: [
      (nil, AuthorizationPolicy.grant), ("grant", .grant), ("deny", .deny), ("DENY", .deny),
      ("denied", .deny), ("", .grant),
    ] as [(String?, AuthorizationPolicy)])
  func policy(_ value: String?, _ expected: AuthorizationPolicy) {
    var environment: [String: String] = [:]
    environment["CORELOCATION_AUTHORIZATION"] = value
    #expect(configuration(environment).policy == expected)
  }

  @Test func theWifiFallbackIsOffUnlessAURLIsGiven() {
    #expect(configuration(Self.home).wifiFallback == nil)
    var environment = Self.home
    environment["CORELOCATION_WIFI_FALLBACK_AGENT"] = "Test/1"
    #expect(configuration(environment).wifiFallback == nil, "an agent alone turns nothing on")
    environment["CORELOCATION_WIFI_FALLBACK_URL"] = "https://example.org/v1/geolocate"
    #expect(configuration(environment).wifiFallback?.userAgent == "Test/1")
  }

  @Test func wifiLearningIsOnUnlessSaidOff() {
    #expect(configuration(Self.home).wifiLearning)
    for value in ["off", "0", "NO", "false"] {
      var environment = Self.home
      environment["CORELOCATION_WIFI_LEARNING"] = value
      #expect(!configuration(environment).wifiLearning)
    }
    var on = Self.home
    on["CORELOCATION_WIFI_LEARNING"] = "on"
    #expect(configuration(on).wifiLearning)
  }

  @Test func discoveryOffersEverythingThatAnswers() {
    let gpsd = SourceURL.gpsd(.tcp(host: "127.0.0.1", port: 2947))
    let all = configuration(Self.home, existing: ["/etc/geolocation"], answering: [gpsd, .geoclue])
    #expect(all.sources.urls == [gpsd, .geoclue, .staticFile(path: "/etc/geolocation")])
    let onlyGeoClue = configuration(Self.home, answering: [.geoclue])
    #expect(onlyGeoClue.sources.urls == [.geoclue])
    let withRadio = configuration(Self.home, answering: [.geoclue, .bluez(adapter: nil)])
    #expect(withRadio.sources.urls == [.geoclue, .bluez(adapter: nil)])
    let withWifi = configuration(Self.home, answering: [.wifi(interface: nil)])
    #expect(withWifi.sources.urls == [.wifi(interface: nil)])
    let nothing = configuration(Self.home)
    #expect(nothing.sources.unavailableMessage?.contains("Start gpsd or GeoClue") == true)
  }

  @Test func gpsdProbeSeesALoopbackListener() throws {
    // A real listening socket on a free loopback port answers the probe; a closed port does not.
    let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #expect(server >= 0)
    defer { close(server) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(server, pointer, length) == 0 && listen(server, 1) == 0
          && getsockname(server, pointer, &length) == 0
      }
    }
    #expect(bound)
    let port = Int(UInt16(bigEndian: address.sin_port))
    #expect(SourceDiscovery.isAvailable(.gpsd(.tcp(host: "127.0.0.1", port: port))))
    close(server)
    #expect(!SourceDiscovery.isAvailable(.gpsd(.tcp(host: "127.0.0.1", port: port))))
  }
}
