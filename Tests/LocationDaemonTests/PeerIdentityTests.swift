import Testing

@testable import LocationDaemon

/// The identity rule on the facts the kernel gives (`docs/security.md`, "Principals"); the real
/// processes behind each case are in EndToEndTests' `DaemonTrustTests`.
@Suite struct PeerIdentityTests {
  static func facts(
    _ executable: PeerFacts.Executable = .path("/usr/bin/maps"), sameMount: Bool? = true,
    flatpak: String? = nil, label: String? = nil, arguments: [String] = [],
    cwd: String? = "/home/u", alive: Bool = true
  ) -> PeerFacts {
    PeerFacts(
      executable: executable, sameMountNamespace: sameMount, flatpakInfo: flatpak,
      securityLabel: label, arguments: arguments, workingDirectory: cwd, alive: alive)
  }

  static func resolve(
    _ facts: PeerFacts, configured: [String: String] = [:],
    files: Set<String> = ["/home/u/a.py", "/home/u/b.py", "/opt/tool.js"]
  ) -> Result<PeerIdentity.Principal, PeerIdentity.Refusal> {
    PeerIdentity.resolve(
      facts, configuredID: { configured[$0] }, fileExists: { files.contains($0) })
  }

  @Test func anUnconfinedProcessIsItsExecutableOrItsConfiguredID() {
    #expect(Self.resolve(Self.facts()) == .success(.unconfined(app: "/usr/bin/maps")))
    #expect(
      Self.resolve(Self.facts(), configured: ["/usr/bin/maps": "org.example.Maps"])
        == .success(.unconfined(app: "org.example.Maps")))
  }

  @Test func aFlatpakAppIsItsApplicationName() {
    let info = "[Application]\nname=org.example.App\nruntime=runtime/org.gnome.Platform\n"
    // In its own mount namespace, as every Flatpak app is.
    #expect(
      Self.resolve(Self.facts(sameMount: false, flatpak: info))
        == .success(.flatpak(app: "org.example.App")))
    #expect(
      Self.resolve(Self.facts(flatpak: "[Instance]\nname=x.y\n")).isRefusal,
      "no [Application] name")
    #expect(Self.resolve(Self.facts(flatpak: "[Application]\nname=bad/../id\n")).isRefusal)
    #expect(Self.resolve(Self.facts(flatpak: "[Application]\nname=single\n")).isRefusal)
  }

  @Test(arguments: [
    ("snap.maps.maps (enforce)", "snap.maps.maps"),
    ("/usr/bin/foo (enforce)", "/usr/bin/foo"),
    ("system_u:system_r:maps_t:s0", "maps_t"),
  ])
  func anEnforcingLabelConfines(label: String, profile: String) {
    #expect(Self.resolve(Self.facts(label: label)) == .success(.labelled(app: profile)))
  }

  @Test(arguments: [
    "unconfined", "snap.maps.maps (complain)", "unconfined_u:unconfined_r:unconfined_t:s0",
    "snap.x (enforce)\u{202E}",
  ])
  func anUnconfiningLabelIsNoConfinement(label: String) {
    #expect(Self.resolve(Self.facts(label: label)) == .success(.unconfined(app: "/usr/bin/maps")))
  }

  @Test func whatCannotBeTrustedIsRefused() {
    #expect(Self.resolve(Self.facts(sameMount: false)).isRefusal, "another mount namespace")
    #expect(Self.resolve(Self.facts(sameMount: nil)).isRefusal, "mount namespace unknown")
    #expect(Self.resolve(Self.facts(.deleted("/usr/bin/maps (deleted)"))).isRefusal)
    #expect(Self.resolve(Self.facts(.truncated)).isRefusal)
    #expect(Self.resolve(Self.facts(.unreadable)).isRefusal)
    #expect(Self.resolve(Self.facts(alive: false)).isRefusal, "the pid went away meanwhile")
  }

  /// Bidirectional overrides and isolates (U+202E, U+2066...U+2069), zero-width and control
  /// characters would show a prompt one name and be another (F10).
  @Test(arguments: ["\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}", "\u{200B}", "\n"])
  func namesWithFormatOrControlCharactersAreRefused(character: String) {
    let path = "/home/u/maps" + character + "cod.exe"
    #expect(Self.resolve(Self.facts(.path(path))).isRefusal)
    #expect(
      PeerIdentity.displayable(path).contains("\\u{"), "escaped when it has to be shown at all")
  }

  @Test func anInterpreterIsItsScript() {
    let python = Self.facts(.path("/usr/bin/python3.11"), arguments: ["python3", "-u", "a.py"])
    #expect(Self.resolve(python) == .success(.unconfined(app: "/home/u/a.py")))
    let other = Self.facts(.path("/usr/bin/python3.11"), arguments: ["python3", "/home/u/b.py"])
    #expect(Self.resolve(other) == .success(.unconfined(app: "/home/u/b.py")))
    let node = Self.facts(
      .path("/usr/bin/node"), arguments: ["node", "../../opt/./tool.js"], cwd: "/home/u")
    #expect(Self.resolve(node) == .success(.unconfined(app: "/opt/tool.js")))
    #expect(
      Self.resolve(python, configured: ["/home/u/a.py": "org.example.A"])
        == .success(.unconfined(app: "org.example.A")))
  }

  @Test func anInterpreterWithoutAScriptNeedsAnAppSection() {
    let inline = Self.facts(.path("/usr/bin/python3"), arguments: ["python3", "-c", "print(1)"])
    #expect(Self.resolve(inline).isRefusal)
    let shell = Self.facts(.path("/usr/bin/bash"), arguments: ["bash"])
    #expect(Self.resolve(shell).isRefusal)
    #expect(
      Self.resolve(inline, configured: ["/usr/bin/python3": "org.example.Python"])
        == .success(.unconfined(app: "org.example.Python")))
  }

  @Test(arguments: [
    ("python3", true), ("python3.11", true), ("python", true), ("node", true), ("sh", true),
    ("java", true), ("maps", false), ("python3x", false), ("shx", false), ("3", false),
  ])
  func interpreterNames(name: String, interpreter: Bool) {
    #expect(PeerIdentity.isInterpreter(name) == interpreter)
  }
}

extension Result {
  fileprivate var isRefusal: Bool {
    if case .failure = self { return true }
    return false
  }
}
