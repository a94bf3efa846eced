import Foundation
import Testing

/// The components a test starts or runs (this package's built programs, gpsd, socat, GeoClue, ...)
/// and the one rule for a missing one: outside CI the test is skipped with the reason; under CI
/// (`CI=true`) it runs and fails on what is missing.
package enum RealComponents {
  /// True under CI (`CI=true`): a missing component fails the test instead of skipping it.
  package static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

  /// gpsd (Debian's gpsd).
  package static let gpsd = "/usr/sbin/gpsd"
  /// socat (Debian's socat).
  package static let socat = "/usr/bin/socat"
  /// The `sqlite3` shell (Debian's sqlite3).
  package static let sqlite3 = "/usr/bin/sqlite3"
  /// setpriv, to run a child as another user (Debian's util-linux).
  package static let setpriv = "/usr/bin/setpriv"
  /// curl, which the Ichnaea client runs for its requests (Debian's curl).
  package static let curl = "/usr/bin/curl"
  /// Python 3, for a second app speaking the protocol by hand (Debian's python3).
  package static let python3 = "/usr/bin/python3"
  /// scdoc, which turns the man pages' sources into roff (Debian's scdoc).
  package static let scdoc = "/usr/bin/scdoc"
  /// groff, which checks the rendered man pages (Debian's groff-base).
  package static let groff = "/usr/bin/groff"
  /// nm, which lists the installable program's symbols for its layout's test (Debian's binutils).
  package static let nm = "/usr/bin/nm"
  /// make, for `make install`, `make uninstall` and `make dist` (Debian's make).
  package static let make = "/usr/bin/make"
  /// bash, whose `-n` checks the bash completion (Debian's bash).
  package static let bash = "/bin/bash"
  /// zsh, whose `-n` checks the zsh completion (Debian's zsh).
  package static let zsh = "/usr/bin/zsh"
  /// fish, whose `-n` checks the fish completions and whose `complete -C` runs them (Debian's
  /// fish).
  package static let fish = "/usr/bin/fish"
  /// systemd-analyze, whose `verify` checks the unit files (Debian's systemd).
  package static let systemdAnalyze = "/usr/bin/systemd-analyze"
  /// bash-completion's library, which the bash completion builds on (Debian's bash-completion;
  /// a file, not a program: see `requireFile(_:install:)`).
  package static let bashCompletion = "/usr/share/bash-completion/bash_completion"

  /// Whether an executable is at `path`.
  package static func exists(_ path: String) -> Bool {
    FileManager.default.isExecutableFile(atPath: path)
  }

  /// Whether a test that needs `paths` runs: when they all exist, or under CI (where it then
  /// fails with `require(_:install:)`).
  package static func runnable(_ paths: String...) -> Bool { isCI || paths.allSatisfy(exists) }

  /// Records an issue for each missing component (CI only gets here with one missing).
  /// - Parameter install: what provides them, for the message.
  /// - Returns: true when everything is there.
  package static func require(
    _ paths: String...,
    install: String = "install its Debian package (scripts/setup-debian.sh)"
  ) -> Bool {
    let missing = paths.filter { !exists($0) }
    for path in missing { Issue.record("\(path) is missing: \(install)") }
    return missing.isEmpty
  }

  /// Whether a test that needs the files at `paths` (data, not programs) runs: when they all
  /// exist, or under CI.
  package static func runnable(files paths: String...) -> Bool {
    isCI || paths.allSatisfy { FileManager.default.fileExists(atPath: $0) }
  }

  /// A component is missing or not permitted here: skips the running test with `reason`, or
  /// under CI records it as a failure (the test then returns).
  package static func unavailable(_ reason: String) throws {
    if isCI {
      Issue.record("components unavailable under CI: \(reason)")
      return
    }
    try Test.cancel("skipped: \(reason)")
  }
}
