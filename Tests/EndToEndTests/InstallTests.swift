import Foundation
import TestSupport
import Testing

/// `make install`, `make uninstall` and `make dist`, run as a user runs them, into scratch
/// directories: the installed tree, the programs run from it without the Swift toolchain (no
/// toolchain on PATH or LD_LIBRARY_PATH: `ldd` shows system libraries only), the configuration
/// never installed over a file, uninstall removing exactly what install put there, the units
/// passing `systemd-analyze verify`, and the source tarball holding every file of the checkout.
///
/// They need the installable program (`make programs`, which `make test` runs first) and make;
/// skipped with the reason when one is missing, a failure under `CI=true`.
@Suite(
  .enabled(
    if: RealComponents.isCI
      || (FileManager.default.isExecutableFile(atPath: BuiltPrograms.installable)
        && RealComponents.exists(RealComponents.make)),
    Comment(rawValue: BuiltPrograms.installableMissingMessage + " (and make)")),
  .serialized)
struct InstallTests {
  /// An environment without the toolchain: the system's PATH only, no LD_LIBRARY_PATH.
  static func systemEnvironment(home: String) -> [String: String] {
    ["PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"]
  }

  /// Runs `make TARGET VARIABLES...` in the package root, as a user would, without the
  /// toolchain on PATH (installing needs none).
  static func make(_ target: String, _ variables: [String: String], home: String) throws
    -> ProgramResult
  {
    let arguments =
      ["-s", "-C", Paths.root.path, target]
      + variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    return try runProgram(
      RealComponents.make, arguments, environment: systemEnvironment(home: home), limit: 300)
  }

  /// Every file and symbolic link under `directory`, as paths relative to it, sorted.
  static func tree(_ directory: String) throws -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
    var paths: [String] = []
    while let path = enumerator.nextObject() as? String {
      let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + path)
      if attributes[.type] as? FileAttributeType != .typeDirectory { paths.append(path) }
    }
    return paths.sorted()
  }

  static func installedFiles(prefix: String) -> [String] {
    let files = [
      "etc/corelocation/locationd.conf",
      "\(prefix)/bin/locationctl", "\(prefix)/bin/locationd", "\(prefix)/bin/whereami",
      "\(prefix)/lib/systemd/system/locationd.service",
      "\(prefix)/lib/systemd/user/locationd.service",
      "\(prefix)/lib/sysusers.d/corelocation.conf",
      "\(prefix)/share/bash-completion/completions/locationctl",
      "\(prefix)/share/bash-completion/completions/locationd",
      "\(prefix)/share/bash-completion/completions/whereami",
      "\(prefix)/share/corelocation/gazetteer.clgz",
      "\(prefix)/share/doc/corelocation/README.gazetteer.md",
      "\(prefix)/share/doc/corelocation/locationd.conf.example",
      "\(prefix)/share/fish/vendor_completions.d/locationctl.fish",
      "\(prefix)/share/fish/vendor_completions.d/locationd.fish",
      "\(prefix)/share/fish/vendor_completions.d/whereami.fish",
      "\(prefix)/share/man/man1/locationctl.1", "\(prefix)/share/man/man1/whereami.1",
      "\(prefix)/share/man/man5/locationd.conf.5",
      "\(prefix)/share/man/man7/corelocation-sources.7",
      "\(prefix)/share/man/man8/locationd.8",
      "\(prefix)/share/zsh/site-functions/_corelocation",
    ]
    return files.sorted()
  }

  static func requireComponents() throws {
    guard FileManager.default.isExecutableFile(atPath: BuiltPrograms.installable) else {
      throw TestFailure(BuiltPrograms.installableMissingMessage)
    }
    guard RealComponents.require(RealComponents.make) else {
      throw TestFailure("make is missing")
    }
  }

  static func posixPermissions(_ path: String) throws -> Int {
    try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1
  }

  static func inode(_ path: String) throws -> UInt64 {
    try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64 ?? 0
  }

  // MARK: The tree

  @Test func installsTheTreeIntoDestdir() throws {
    try Self.requireComponents()
    try withTemporaryDirectory { scratch in
      let destination = scratch + "/dest"
      let result = try Self.make("install", ["DESTDIR": destination], home: scratch)
      try #require(result.status == 0, "make install: \(result.stderr)")
      #expect(try Self.tree(destination) == Self.installedFiles(prefix: "usr/local"))

      let bin = destination + "/usr/local/bin/"
      // One executable under three names, stripped, executable by everyone.
      let inodes = try ["whereami", "locationd", "locationctl"].map { try Self.inode(bin + $0) }
      #expect(Set(inodes).count == 1, "the three programs are hard links of one file")
      #expect(try Self.posixPermissions(bin + "whereami") == 0o755)
      let symbols = try runProgram("/usr/bin/nm", [bin + "whereami"])
      #expect(symbols.stderr.contains("no symbols"), "whereami is not stripped")
      for file in Self.installedFiles(prefix: "usr/local") where !file.contains("/bin/") {
        let path = destination + "/" + file
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == nil {
          #expect(try Self.posixPermissions(path) == 0o644, "\(file)")
        }
      }
      // bash-completion looks a command's completion up by its name: two links to one file.
      let completions = destination + "/usr/local/share/bash-completion/completions/"
      for name in ["locationd", "locationctl"] {
        #expect(
          try FileManager.default.destinationOfSymbolicLink(atPath: completions + name)
            == "whereami")
      }
      // The units start the installed program; the example configuration is the shipped one.
      let system = try String(
        contentsOfFile: destination + "/usr/local/lib/systemd/system/locationd.service",
        encoding: .utf8)
      #expect(system.contains("\nExecStart=/usr/local/bin/locationd --system --foreground\n"))
      let user = try String(
        contentsOfFile: destination + "/usr/local/lib/systemd/user/locationd.service",
        encoding: .utf8)
      #expect(user.contains("\nExecStart=/usr/local/bin/locationd --foreground\n"))
      let example = Paths.root.appendingPathComponent("dist/config/locationd.conf").path
      #expect(
        FileManager.default.contentsEqual(
          atPath: destination + "/etc/corelocation/locationd.conf", andPath: example))
    }
  }

  @Test func prefixAndDirectoriesAreHonoured() throws {
    try Self.requireComponents()
    try withTemporaryDirectory { scratch in
      let destination = scratch + "/dest"
      let result = try Self.make(
        "install", ["DESTDIR": destination, "PREFIX": "/opt/corelocation"], home: scratch)
      try #require(result.status == 0, "make install: \(result.stderr)")
      #expect(try Self.tree(destination) == Self.installedFiles(prefix: "opt/corelocation"))
      let unit = try String(
        contentsOfFile: destination + "/opt/corelocation/lib/systemd/system/locationd.service",
        encoding: .utf8)
      #expect(unit.contains("\nExecStart=/opt/corelocation/bin/locationd --system --foreground\n"))
    }
  }

  // MARK: Uninstall and the configuration file

  @Test func uninstallRemovesExactlyWhatInstallPut() throws {
    try Self.requireComponents()
    try withTemporaryDirectory { scratch in
      let destination = scratch + "/dest"
      // Files of others in the same directories stay.
      let others = [
        "etc/corelocation/sources", "usr/local/bin/gpsd-helper",
        "usr/local/share/man/man1/other.1",
      ]
      for file in others {
        let path = destination + "/" + file
        try FileManager.default.createDirectory(
          atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try "someone else's\n".write(toFile: path, atomically: true, encoding: .utf8)
      }
      let install = try Self.make("install", ["DESTDIR": destination], home: scratch)
      try #require(install.status == 0, "make install: \(install.stderr)")
      let uninstall = try Self.make("uninstall", ["DESTDIR": destination], home: scratch)
      #expect(uninstall.status == 0, "make uninstall: \(uninstall.stderr)")
      #expect(try Self.tree(destination) == others.sorted())
      // The project's own directories went with their files.
      for directory in ["usr/local/share/corelocation", "usr/local/share/doc/corelocation"] {
        #expect(!FileManager.default.fileExists(atPath: destination + "/" + directory))
      }
    }
  }

  @Test func theConfigurationIsNeverInstalledOverAFile() throws {
    try Self.requireComponents()
    try withTemporaryDirectory { scratch in
      let destination = scratch + "/dest"
      let config = destination + "/etc/corelocation/locationd.conf"
      try FileManager.default.createDirectory(
        atPath: destination + "/etc/corelocation", withIntermediateDirectories: true)
      let mine = "source = gpsd://127.0.0.1:2947\npolicy = grant\n"
      try mine.write(toFile: config, atomically: true, encoding: .utf8)

      let install = try Self.make("install", ["DESTDIR": destination], home: scratch)
      try #require(install.status == 0, "make install: \(install.stderr)")
      #expect(try String(contentsOfFile: config, encoding: .utf8) == mine)
      #expect(install.stdout.contains("kept \(config)"))
      let uninstall = try Self.make("uninstall", ["DESTDIR": destination], home: scratch)
      #expect(uninstall.status == 0)
      #expect(try String(contentsOfFile: config, encoding: .utf8) == mine)
      #expect(try Self.tree(destination) == ["etc/corelocation/locationd.conf"])
    }
  }

  @Test func anEditedExampleOutlivesUninstall() throws {
    try Self.requireComponents()
    try withTemporaryDirectory { scratch in
      let destination = scratch + "/dest"
      let config = destination + "/etc/corelocation/locationd.conf"
      let install = try Self.make("install", ["DESTDIR": destination], home: scratch)
      try #require(install.status == 0, "make install: \(install.stderr)")
      let edited = try String(contentsOfFile: config, encoding: .utf8) + "policy = grant\n"
      try edited.write(toFile: config, atomically: true, encoding: .utf8)
      let again = try Self.make("install", ["DESTDIR": destination], home: scratch)
      #expect(again.status == 0)
      #expect(try String(contentsOfFile: config, encoding: .utf8) == edited)
      let uninstall = try Self.make("uninstall", ["DESTDIR": destination], home: scratch)
      #expect(uninstall.status == 0)
      #expect(uninstall.stdout.contains("kept \(config)"))
      #expect(try Self.tree(destination) == ["etc/corelocation/locationd.conf"])
    }
  }

  // MARK: The installed programs

  /// The shared libraries of the Swift toolchain; none may be needed by an installed program.
  static let toolchainLibraries = [
    "libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime",
    "libXCTest", "libTesting",
  ]

  /// A program linked against the toolchain's libraries (what a plain `swift build -c release`
  /// leaves after `make`) is refused, and nothing is installed. This test process stands for it.
  @Test func aProgramThatNeedsTheToolchainIsNotInstalled() throws {
    try Self.requireComponents()
    let dynamic = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    try withTemporaryDirectory { scratch in
      let destination = scratch + "/dest"
      let result = try Self.make(
        "install", ["DESTDIR": destination, "PROGRAM": dynamic], home: scratch)
      #expect(result.status != 0)
      #expect(result.stderr.contains("needs the Swift toolchain's libraries"), "\(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: destination), "nothing installed")
    }
  }

  @Test func installedProgramsNeedOnlySystemLibraries() throws {
    try Self.requireComponents()
    try withTemporaryDirectory { scratch in
      let destination = scratch + "/dest"
      let result = try Self.make("install", ["DESTDIR": destination], home: scratch)
      try #require(result.status == 0, "make install: \(result.stderr)")
      let ldd = try runProgram(
        "/usr/bin/ldd", [destination + "/usr/local/bin/whereami"],
        environment: Self.systemEnvironment(home: scratch))
      #expect(ldd.status == 0, "ldd: \(ldd.stderr)")
      #expect(!ldd.stdout.contains("not found"), "\(ldd.stdout)")
      for line in ldd.lines {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let name = words.first, !name.hasPrefix("linux-vdso") else { continue }
        let path = words.count >= 3 && words[1] == "=>" ? words[2] : name
        #expect(
          path.hasPrefix("/lib/") || path.hasPrefix("/lib64/") || path.hasPrefix("/usr/lib/"),
          "\(name) comes from \(path), not the system's libraries")
        #expect(
          !Self.toolchainLibraries.contains { name.hasPrefix($0) },
          "\(name) is the Swift toolchain's")
      }
    }
  }

  @Test func installedProgramsRunWithoutTheToolchain() throws {
    try Self.requireComponents()
    try withTemporaryDirectory { scratch in
      let destination = scratch + "/dest"
      let result = try Self.make("install", ["DESTDIR": destination], home: scratch)
      try #require(result.status == 0, "make install: \(result.stderr)")
      let bin = destination + "/usr/local/bin/"
      var environment = Self.systemEnvironment(home: scratch)
      environment["XDG_RUNTIME_DIR"] = scratch
      environment["XDG_STATE_HOME"] = scratch + "/state"
      environment["XDG_CONFIG_HOME"] = scratch + "/config"
      environment["CORELOCATION_DAEMON"] = "off"

      let version = try runProgram(bin + "whereami", ["--version"], environment: environment)
      #expect(version.stdout.hasPrefix("whereami ") && version.status == 0)
      for program in ["locationd", "locationctl"] {
        let help = try runProgram(bin + program, ["--help"], environment: environment)
        #expect(help.status == 0 && help.stdout.hasPrefix("USAGE: \(program)"), "\(program)")
      }
      // A location from a static source, and a place from the installed gazetteer.
      let position = scratch + "/geolocation"
      try "52.3702\n4.8952\n2\n50\n".write(toFile: position, atomically: true, encoding: .utf8)
      let location = try runProgram(
        bin + "whereami", ["--source", "static://" + position], environment: environment)
      #expect(location.status == 0, "\(location.stderr)")
      #expect(location.lines == ["52.370200 4.895200"])
      let place = try runProgram(
        bin + "whereami", ["--geocode", "Zürich"], environment: environment)
      #expect(place.status == 0, "\(place.stderr)")
      #expect(place.lines.first?.contains("Zürich, Zurich, Switzerland") == true, "\(place.stdout)")

      // The installed daemon serves the installed control tool and whereami.
      let directory = try LocationdProcess.makeDirectory()
      let socket = LocationdProcess.socket(directory)
      var daemonEnvironment = Self.systemEnvironment(home: directory)
      daemonEnvironment["XDG_RUNTIME_DIR"] = directory
      daemonEnvironment["XDG_STATE_HOME"] = directory + "/state"
      daemonEnvironment["XDG_CONFIG_HOME"] = directory + "/config"
      let daemon = try LocationdProcess(
        LocationdProcess.arguments(directory, sources: ["static://" + position], policy: "grant"),
        environment: daemonEnvironment, directory: directory, program: bin + "locationd")
      defer { daemon.stop() }
      let status = try runProgram(
        bin + "locationctl", ["--socket", socket, "status"], environment: environment)
      #expect(status.status == 0, "\(status.stderr)")
      environment["CORELOCATION_DAEMON"] = "required"
      environment["CORELOCATION_DAEMON_SOCKET"] = socket
      let client = try runProgram(bin + "whereami", ["--timeout", "30"], environment: environment)
      #expect(client.status == 0, "\(client.stderr)")
      #expect(client.lines == ["52.370200 4.895200"])
      let apps = try runProgram(
        bin + "locationctl", ["--socket", socket, "apps"], environment: environment)
      #expect(apps.stdout.contains(bin + "whereami"), "the daemon knows whereami by its path")
    }
  }

  // MARK: systemd

  /// `systemd-analyze verify` on the installed units, installed under a prefix of their own so
  /// that their ExecStart names an installed program and their Documentation= the installed man
  /// pages (verify runs `man` on them).
  @Test(
    .enabled(
      if: RealComponents.runnable(RealComponents.systemdAnalyze),
      "systemd-analyze is not installed (Debian's systemd; scripts/setup-debian.sh installs it)"))
  func installedUnitsVerify() throws {
    try Self.requireComponents()
    guard RealComponents.require(RealComponents.systemdAnalyze) else { return }
    try withTemporaryDirectory { scratch in
      let prefix = scratch + "/prefix"
      let result = try Self.make(
        "install", ["PREFIX": prefix, "SYSCONFDIR": scratch + "/etc"], home: scratch)
      try #require(result.status == 0, "make install: \(result.stderr)")
      var environment = Self.systemEnvironment(home: scratch)
      environment["MANPATH"] = prefix + "/share/man"
      environment["XDG_RUNTIME_DIR"] = scratch
      let system = try runProgram(
        RealComponents.systemdAnalyze,
        ["verify", prefix + "/lib/systemd/system/locationd.service"], environment: environment)
      #expect(system.status == 0, "\(system.stdout)\(system.stderr)")
      let user = try runProgram(
        RealComponents.systemdAnalyze,
        ["--user", "verify", prefix + "/lib/systemd/user/locationd.service"],
        environment: environment)
      #expect(user.status == 0, "\(user.stdout)\(user.stderr)")
    }
  }

  // MARK: The source tarball

  /// Whether the package is a git checkout (an unpacked tarball is not: its `make dist` packs the
  /// tree as it is, and there is no list of tracked files to compare with).
  static let isGitCheckout =
    RealComponents.exists("/usr/bin/git")
    && FileManager.default.fileExists(atPath: Paths.root.appendingPathComponent(".git").path)

  @Test(.enabled(if: isGitCheckout, "not a git checkout: no list of tracked files to compare"))
  func distHoldsEveryFileOfTheCheckout() throws {
    try Self.requireComponents()
    let git = "/usr/bin/git"
    try withTemporaryDirectory { scratch in
      let result = try Self.make("dist", ["DISTDIR": scratch], home: scratch)
      try #require(result.status == 0, "make dist: \(result.stderr)")
      let tarball = try #require(result.lines.last)
      #expect(tarball.hasPrefix(scratch + "/corelocation-") && tarball.hasSuffix(".tar.gz"))
      let name = ((tarball as NSString).lastPathComponent as NSString).deletingPathExtension
        .replacingOccurrences(of: ".tar", with: "")
      let listing = try runProgram("/bin/tar", ["-tzf", tarball])
      try #require(listing.status == 0, "\(listing.stderr)")
      let packed = Set(
        listing.lines.filter { !$0.hasSuffix("/") }.map { String($0.dropFirst(name.count + 1)) })
      let tracked = try runProgram(git, ["-C", Paths.root.path, "ls-files"])
      for file in tracked.lines
      where FileManager.default.fileExists(
        atPath: Paths.root.appendingPathComponent(file).path)
      {
        #expect(packed.contains(file), "the tarball lacks \(file)")
      }
      // What building and testing reads.
      for file in [
        "Makefile", "Package.swift", ".swift-format", "scripts/setup-debian.sh",
        "Data/gazetteer/gazetteer.clgz", "Examples/tracks/ijsselmeer-2018.nmea",
        "docs/man/whereami.1.scd", "debian/rules", "debian/control",
      ] {
        #expect(packed.contains(file), "the tarball lacks \(file)")
      }
      #expect(!packed.contains { $0.hasPrefix(".build/") })
    }
  }
}
