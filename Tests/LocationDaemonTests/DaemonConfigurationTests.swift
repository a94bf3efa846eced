import LocationDaemon
import LocationServices
import LocationSources
import TestSupport
import Testing

/// `locationd`'s command line and configuration file.
@Suite struct DaemonConfigurationTests {
  static let environment = [
    "HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1000", "XDG_STATE_HOME": "/var/state",
  ]

  func parse(
    _ arguments: [String], files: [String: String] = [:],
    owner: (uid: UInt32, mode: UInt32) = (0, 0o100644)
  ) throws(DaemonConfigurationError) -> DaemonConfiguration {
    try DaemonConfiguration.fromCommandLine(
      arguments, environment: Self.environment, readFile: { files[$0] },
      fileOwner: { _ in owner }, daemonUID: 0)
  }

  /// The file is trusted only when root or the daemon's user owns it and nobody else may write it
  /// (issue 14, F10); a character device (`/dev/null`) reads as an empty file.
  @Test(arguments: [
    (UInt32(0), UInt32(0o100644), true), (0, 0o100600, true), (1000, 0o100644, false),
    (0, 0o100664, false), (0, 0o100646, false), (0, 0o020666, true),
  ])
  func onlyATrustedFileIsRead(uid: UInt32, mode: UInt32, trusted: Bool) {
    let files = ["/etc/corelocation/locationd.conf": "policy = grant\n"]
    let result = Result { () throws(DaemonConfigurationError) in
      try parse(["--system"], files: files, owner: (uid, mode))
    }
    switch result {
    case .success(let configuration):
      #expect(trusted)
      #expect(configuration.policy == .grant)
    case .failure(let error):
      #expect(!trusted)
      #expect(error.message.contains("not trusted"))
    }
  }

  /// A system daemon starts no program: a launch line in its file is an error (F10).
  @Test func aSystemDaemonsFileMayNameNoLaunchCommand() {
    let text = "[app org.example.Maps@1000]\nexecutable = /usr/bin/maps\nlaunch = /bin/true\n"
    let files = ["/etc/corelocation/locationd.conf": text]
    #expect(throws: DaemonConfigurationError.self) { try parse(["--system"], files: files) }
    let user = ["/u/locationd.conf": text]
    #expect(
      (try? parse(["--config", "/u/locationd.conf"], files: user))?.apps.first?.launch != nil)
  }

  /// A system daemon keys apps by user as well; a user daemon serves one user.
  @Test func systemDaemonKeysAppsByUser() {
    var configuration = DaemonConfiguration(socketPath: "/s", storePath: "/d")
    configuration.apps = [.init(id: "org.example.Maps", executables: ["/usr/bin/maps"])]
    #expect(configuration.appID(forExecutable: "/usr/bin/maps", uid: 1000) == "org.example.Maps")
    #expect(configuration.appID(forExecutable: "/usr/bin/other", uid: 1000) == "/usr/bin/other")
    configuration.system = true
    #expect(
      configuration.appID(forExecutable: "/usr/bin/maps", uid: 1000) == "org.example.Maps@1000")
    #expect(configuration.appID(forExecutable: "/usr/bin/maps", uid: 0) == "org.example.Maps@0")
  }

  @Test func userDefaults() throws {
    let configuration = try parse([])
    #expect(configuration.socketPath == "/run/user/1000/locationd/socket")
    #expect(configuration.storePath == "/var/state/corelocation/locationd.sqlite")
    #expect(configuration.policy == .deny)
    #expect(configuration.sources.isEmpty)
    #expect(configuration.configPath == nil, "no file at the default path is fine")
    #expect(!configuration.system)
  }

  @Test func systemDefaults() throws {
    let configuration = try parse(["--system", "--foreground"])
    #expect(configuration.socketPath == "/run/locationd/socket")
    #expect(configuration.storePath == "/var/lib/locationd/store.sqlite")
    #expect(configuration.system)
    #expect(configuration.foreground)
  }

  @Test func fileThenFlags() throws {
    let file = """
      # locationd
      policy = grant
      source = gpsd://127.0.0.1:2947
      source = static:///etc/geolocation   # fallback
      queue-limit = 4096
      strikes = 5
      max-regions = 500
      max-ranged-constraints = 12
      wifi-learning = off
      wifi-fallback-url = https://example.org/v1/geolocate?key=k
      wifi-fallback-user-agent = Test/1

      [app org.example.Maps]
      executable = /usr/bin/maps
      executable = /opt/maps/bin/maps
      launch = /usr/bin/maps --background
      """
    let configuration = try parse(
      ["--config", "/c", "--socket", "/tmp/s", "--source", "geoclue"], files: ["/c": file])
    #expect(configuration.configPath == "/c")
    #expect(configuration.policy == .grant)
    #expect(configuration.socketPath == "/tmp/s")
    #expect(configuration.sources == [.geoclue], "--source replaces the file's sources")
    #expect(configuration.queueLimit == 4096)
    #expect(configuration.strikes == 5)
    #expect(configuration.maximumRegions == 500)
    #expect(configuration.maximumRangedConstraints == 12)
    #expect(!configuration.wifiLearning)
    #expect(configuration.wifiFallback?.url == "https://example.org/v1/geolocate?key=k")
    #expect(configuration.wifiFallback?.userAgent == "Test/1")
    #expect(configuration.appID(forExecutable: "/opt/maps/bin/maps") == "org.example.Maps")
    #expect(configuration.appID(forExecutable: "/usr/bin/other") == "/usr/bin/other")
    #expect(configuration.app(id: "org.example.Maps")?.launch == "/usr/bin/maps --background")
    let flags = try parse(["--config", "/c", "--policy", "deny"], files: ["/c": file])
    #expect(flags.policy == .deny)
    #expect(flags.sources.count == 2)
  }

  static let badFiles: [(String, String)] = [
    ("policy = maybe", "/c:1"),
    ("\n\nsource = ftp://x", "/c:3"),
    ("strikes = 0", "/c:1"),
    ("[app]", "/c:1"),
    ("[app x]\nexecutable = relative/path", "/c:2"),
    ("[app x]\ncolour = blue", "/c:2"),
    ("nonsense", "/c:1"),
    ("[app x", "/c:1"),
  ]

  @Test(arguments: badFiles) func badFilesNameTheLine(_ file: String, _ place: String) {
    #expect {
      try parse(["--config", "/c"], files: ["/c": file])
    } throws: { error in
      (error as? DaemonConfigurationError)?.message.hasPrefix(place + ":") == true
    }
  }

  @Test(arguments: [
    ["--bogus"], ["--socket"], ["--policy", "sometimes"], ["--source", "ftp://x"],
    ["--config", "/missing"],
  ])
  func badCommandLines(_ arguments: [String]) {
    #expect(throws: DaemonConfigurationError.self) { try parse(arguments) }
  }

  @Test func helpIsNotAnError() {
    #expect {
      try parse(["--help"])
    } throws: { error in
      (error as? DaemonConfigurationError)?.isHelp == true
    }
  }

  @Test func helpNamesEveryOptionAndExitStatus() {
    for word in [
      "--system", "--socket", "--store", "--config", "--source", "--policy", "--foreground", "-f",
      "--help", "-h", "0 stopped", "1 the store", "2 usage", "3 another daemon",
    ] {
      #expect(DaemonConfiguration.helpText.contains(word), "help lacks \(word)")
    }
    #expect(throws: DaemonConfigurationError(message: DaemonConfiguration.helpText, isHelp: true)) {
      try parse(["--help"])
    }
  }

  // MARK: The installed example (dist/config/locationd.conf)

  static let exampleText =
    DaemonConfiguration.readTextFile(
      Paths.root.appendingPathComponent("dist/config/locationd.conf").path) ?? ""

  /// Every key the file format has, for the example and the man page.
  static let keys = [
    "source", "policy", "socket", "store", "queue-limit", "strikes", "max-connections",
    "max-connections-per-uid", "hello-timeout", "max-regions", "max-ranged-constraints",
    "max-held-requests", "wifi-learning", "wifi-fallback-url", "wifi-fallback-user-agent",
    "max-apps-per-uid", "max-pending-events", "pending-event-days", "control-group", "executable",
    "launch", "history", "history-days", "history-interval",
  ]

  /// The example sets nothing: installed as /etc/corelocation/locationd.conf, the system daemon
  /// runs as it would without it.
  @Test func beaconAndWifiDefaults() throws {
    let defaults = try parse([])
    #expect(defaults.maximumRangedConstraints == 1000)
    #expect(defaults.wifiLearning)
    #expect(defaults.wifiFallback == nil, "the fallback service is off by default")
  }

  /// Track history (issue 18): off by default; its keys belong to the main part of the file.
  @Test func historyKeys() throws {
    let defaults = try parse([])
    #expect(!defaults.history.enabled && defaults.history.retentionDays == 30)
    #expect(defaults.history.minimumInterval == 1)
    let on = try parse(
      [],
      files: [
        "/home/u/.config/corelocation/locationd.conf":
          "history = yes\nhistory-days = 7\nhistory-interval = 0.5\n"
      ])
    #expect(
      on.history.enabled && on.history.retentionDays == 7 && on.history.minimumInterval == 0.5)
    for bad in [
      "history = maybe", "history-days = 0", "history-days = -3", "history-days = nan",
      "history-interval = x", "[publish]\nhistory = yes", "[app a.b]\nhistory = yes",
    ] {
      #expect(throws: DaemonConfigurationError.self, "\(bad)") {
        try parse([], files: ["/home/u/.config/corelocation/locationd.conf": bad])
      }
    }
  }

  @Test func theExampleChangesNothing() throws {
    try #require(!Self.exampleText.isEmpty, "dist/config/locationd.conf is missing")
    let system = try parse(["--system"])
    let withExample = try parse(
      ["--system"], files: ["/etc/corelocation/locationd.conf": Self.exampleText])
    var expected = system
    expected.configPath = "/etc/corelocation/locationd.conf"
    #expect(withExample == expected)
  }

  /// Each setting of the example, once its `#` is removed, reads as the default it claims.
  @Test func theExampleShowsTheDefaults() throws {
    let uncommented = Self.exampleText.split(separator: "\n", omittingEmptySubsequences: false)
      .map { line in
        line.hasPrefix("#") && line.dropFirst().first.map { $0.isLetter || $0 == "[" } == true
          ? String(line.dropFirst()) : String(line)
      }
      .joined(separator: "\n")
    // As a user daemon's file: the example's launch line is for user daemons only.
    let system = try parse(["--system"])
    let user = try parse([])
    let configuration = try parse(
      ["--config", "/etc/corelocation/locationd.conf"],
      files: ["/etc/corelocation/locationd.conf": uncommented])
    #expect(configuration.policy == user.policy)
    #expect(configuration.socketPath == system.socketPath)
    #expect(configuration.storePath == system.storePath)
    #expect(configuration.queueLimit == user.queueLimit)
    #expect(configuration.strikes == user.strikes)
    #expect(configuration.maximumConnections == user.maximumConnections)
    #expect(configuration.maximumConnectionsPerUID == user.maximumConnectionsPerUID)
    #expect(configuration.helloTimeout == user.helloTimeout)
    #expect(configuration.maximumRegions == user.maximumRegions)
    #expect(configuration.maximumHeldRequests == user.maximumHeldRequests)
    #expect(configuration.maximumAppsPerUID == user.maximumAppsPerUID)
    #expect(configuration.maximumPendingEvents == user.maximumPendingEvents)
    #expect(configuration.pendingEventDays == user.pendingEventDays)
    #expect(configuration.controlGroup == "locationd")
    #expect(configuration.history == user.history)
    #expect(!configuration.sources.isEmpty)
    #expect(configuration.apps.map(\.id) == ["org.example.Maps"])
  }

  /// Every key of the format is in the example and in locationd.conf(5).
  @Test(arguments: keys)
  func everyKeyIsDocumented(key: String) throws {
    let page = try String(
      contentsOf: Paths.root.appendingPathComponent("docs/man/locationd.conf.5.scd"),
      encoding: .utf8)
    let inExample = Self.exampleText.contains("\n#\(key) = ")
    let inPage = page.contains("\n*\(key) =*")
    #expect(inExample, "the example configuration lacks \(key)")
    #expect(inPage, "locationd.conf(5) lacks \(key)")
  }
}
