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
  /// Python 3, for a second app speaking the protocol by hand (Debian's python3).
  package static let python3 = "/usr/bin/python3"

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
