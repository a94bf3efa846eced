import Foundation
import TestSupport
import Testing

/// The unit files in `dist/systemd`: their shape, the flags they pass to locationd, and
/// `systemd-analyze verify` (skipped when it is not installed, a failure under `CI=true`;
/// `InstallTests` verifies the installed units too).
@Suite struct SystemdUnitTests {
  static let systemUnit = Paths.root.appendingPathComponent("dist/systemd/locationd.service").path
  static let userUnit = Paths.root.appendingPathComponent("dist/systemd/user/locationd.service")
    .path

  /// A unit file as sections of (key, value) pairs, in order.
  struct Unit {
    var sections: [String: [(key: String, value: String)]] = [:]
    var order: [String] = []

    func values(_ section: String, _ key: String) -> [String] {
      (sections[section] ?? []).filter { $0.key == key }.map(\.value)
    }

    /// Parses systemd's unit syntax: `[Section]` headers, `Key=Value` lines, `#`/`;` comments.
    static func parse(path: String) throws -> Unit {
      let text = try String(contentsOfFile: path, encoding: .utf8)
      var unit = Unit()
      var current: String?
      for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false)
        .enumerated()
      {
        let line = raw.trimmingCharacters(in: .whitespaces)
        if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
        if line.hasPrefix("["), line.hasSuffix("]") {
          let name = String(line.dropFirst().dropLast())
          current = name
          unit.order.append(name)
          unit.sections[name, default: []] = []
          continue
        }
        guard let section = current, let equals = line.firstIndex(of: "=") else {
          throw UnitError(message: "\(path):\(number + 1): not a Key=Value line in a section")
        }
        let key = line[..<equals].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        unit.sections[section, default: []].append((key, value))
      }
      return unit
    }
  }

  struct UnitError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
  }

  @Test(arguments: [
    (systemUnit, "/usr/local/bin/locationd", ["--system", "--foreground"]),
    (userUnit, "%h/.local/bin/locationd", ["--foreground"]),
  ])
  func unitShape(path: String, program: String, flags: [String]) throws {
    let unit = try Unit.parse(path: path)
    #expect(unit.order == ["Unit", "Service", "Install"])
    #expect(unit.values("Unit", "Description").count == 1)
    let exec = unit.values("Service", "ExecStart")
    try #require(exec.count == 1)
    let words = exec[0].split(separator: " ").map(String.init)
    #expect(words.first == program)
    #expect(Array(words.dropFirst()) == flags)
    #expect(unit.values("Service", "RuntimeDirectory") == ["locationd"])
    #expect(unit.values("Service", "Restart") == ["on-failure"])
    #expect(unit.values("Install", "WantedBy").count == 1)
  }

  @Test func systemUnitRunsConfinedWithSerialAccess() throws {
    let unit = try Unit.parse(path: Self.systemUnit)
    #expect(unit.values("Service", "StateDirectory") == ["locationd"])
    #expect(unit.values("Service", "DynamicUser") == ["yes"])
    // The system user that sysusers.d's corelocation.conf creates (else a dynamic one).
    #expect(unit.values("Service", "User") == ["locationd"])
    #expect(unit.values("Service", "Group") == ["locationd"])
    let sysusers = try String(
      contentsOf: Paths.root.appendingPathComponent("dist/sysusers/corelocation.conf"),
      encoding: .utf8)
    #expect(sysusers.contains("\nu locationd - "))
    #expect(unit.values("Service", "SupplementaryGroups") == ["dialout"])
    // Other users' clients are identified by /proc/PID/exe: that takes CAP_SYS_PTRACE.
    #expect(unit.values("Service", "AmbientCapabilities") == ["CAP_SYS_PTRACE"])
    #expect(unit.values("Service", "CapabilityBoundingSet") == ["CAP_SYS_PTRACE"])
    #expect(unit.values("Service", "ProtectSystem") == ["strict"])
    #expect(unit.values("Service", "NoNewPrivileges") == ["yes"])
    // The socket (AF_UNIX) and gpsd on localhost stay reachable.
    let families = unit.values("Service", "RestrictAddressFamilies").joined(separator: " ")
    #expect(families.contains("AF_UNIX") && families.contains("AF_INET"))
    #expect(unit.values("Service", "IPAddressAllow").contains("localhost"))
    #expect(unit.values("Service", "PrivateDevices").isEmpty, "serial devices must stay visible")
    #expect(
      unit.values("Service", "PrivateNetwork").isEmpty, "gpsd on localhost must stay reachable")
    #expect(unit.values("Install", "WantedBy") == ["multi-user.target"])
  }

  @Test func userUnitKeepsItsSocketPrivate() throws {
    let unit = try Unit.parse(path: Self.userUnit)
    #expect(unit.values("Service", "RuntimeDirectoryMode") == ["0700"])
    #expect(unit.values("Install", "WantedBy") == ["default.target"])
  }

  @Test(
    .enabled(
      if: DaemonE2E.available(), Comment(rawValue: BuiltPrograms.missingMessage("locationd"))))
  func flagsExistInLocationdsUsage() throws {
    guard let locationd = BuiltPrograms.locationd else {
      throw TestFailure(BuiltPrograms.missingMessage("locationd"))
    }
    let result = try runProgram(locationd, ["--help"], environment: [:])
    let usage = result.stdout + result.stderr
    for flag in ["--system", "--foreground", "--socket", "--store"] {
      #expect(usage.contains(flag), "locationd --help does not mention \(flag)")
    }
  }

  @Test(arguments: [systemUnit, userUnit])
  func documentationNamesThePages(path: String) throws {
    let unit = try Unit.parse(path: path)
    let pages = unit.values("Unit", "Documentation").flatMap { $0.split(separator: " ") }
    #expect(pages == ["man:locationd(8)", "man:locationd.conf(5)"])
    for page in ["locationd.8", "locationd.conf.5"] {
      #expect(
        FileManager.default.fileExists(
          atPath: Paths.root.appendingPathComponent("docs/man/\(page).scd").path))
    }
  }

  /// `systemd-analyze verify` on copies whose ExecStart points at an existing executable (verify
  /// insists that the program exists). The man pages the units name are not installed here
  /// (`--man=no`); `InstallTests` verifies the installed units with them.
  @Test(
    .enabled(
      if: RealComponents.runnable(RealComponents.systemdAnalyze),
      "systemd-analyze is not installed (Debian's systemd; scripts/setup-debian.sh installs it)"))
  func systemdAnalyzeVerifies() throws {
    guard RealComponents.require(RealComponents.systemdAnalyze) else { return }
    let analyze = RealComponents.systemdAnalyze
    let program = BuiltPrograms.locationd ?? "/bin/true"
    let scratch = NSTemporaryDirectory() + "locationd-units-" + UUID().uuidString
    let home = scratch + "/home"
    try FileManager.default.createDirectory(
      atPath: home + "/.local/bin", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: scratch + "/runtime", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    try FileManager.default.createSymbolicLink(
      atPath: home + "/.local/bin/locationd", withDestinationPath: program)

    let system = try String(contentsOfFile: Self.systemUnit, encoding: .utf8)
      .replacingOccurrences(of: "/usr/local/bin/locationd", with: program)
    try system.write(toFile: scratch + "/locationd.service", atomically: true, encoding: .utf8)
    let user = try String(contentsOfFile: Self.userUnit, encoding: .utf8)
    try FileManager.default.createDirectory(
      atPath: scratch + "/user", withIntermediateDirectories: true)
    try user.write(toFile: scratch + "/user/locationd.service", atomically: true, encoding: .utf8)

    let environment = [
      "HOME": home, "XDG_RUNTIME_DIR": scratch + "/runtime", "PATH": "/usr/bin:/bin",
    ]
    let systemResult = try runProgram(
      analyze, ["verify", "--man=no", scratch + "/locationd.service"], environment: environment)
    #expect(systemResult.status == 0, "\(systemResult.stdout)\(systemResult.stderr)")
    let userResult = try runProgram(
      analyze, ["--user", "verify", "--man=no", scratch + "/user/locationd.service"],
      environment: environment)
    #expect(userResult.status == 0, "\(userResult.stdout)\(userResult.stderr)")
  }

}
