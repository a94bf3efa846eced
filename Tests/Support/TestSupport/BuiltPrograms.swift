import Foundation

/// The programs this package builds (`whereami`, `locationd`, `locationctl`), found for the tests
/// that run them.
package enum BuiltPrograms {
  /// Where a program is looked for, in order: beside the test runner (the build directory the
  /// tests run from), in and beside the test bundle, then `.build/debug` under the package root.
  package static func candidates(_ name: String) -> [String] {
    var directories: [URL] = []
    if let first = CommandLine.arguments.first, first.hasPrefix("/") {
      directories.append(URL(fileURLWithPath: first).deletingLastPathComponent())
    }
    directories.append(URL(fileURLWithPath: Bundle.main.bundlePath))
    directories.append(URL(fileURLWithPath: Bundle.main.bundlePath).deletingLastPathComponent())
    directories.append(Paths.root.appendingPathComponent(".build/debug"))
    var seen = Set<String>()
    return directories.map { $0.standardizedFileURL.appendingPathComponent(name).path }
      .filter { seen.insert($0).inserted }
  }

  /// The built program `name`, if there is one.
  package static func path(_ name: String) -> String? {
    candidates(name).first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// Why a test that needs `name` cannot run: where it was looked for and how to build it.
  package static func missingMessage(_ name: String) -> String {
    "\(name) is not built (looked in \(candidates(name).joined(separator: ", "))); "
      + "run `swift build --product \(name)` first"
  }

  /// The built `whereami`, if there is one.
  package static let whereami = path("whereami")
  /// The built `locationd`, if there is one; `CORELOCATION_TEST_LOCATIOND` names another build
  /// (to run the end-to-end tests against an older daemon, such as the one before a fix).
  package static let locationd =
    ProcessInfo.processInfo.environment["CORELOCATION_TEST_LOCATIOND"].flatMap {
      $0.isEmpty ? nil : $0
    } ?? path("locationd")
  /// The built `locationctl`, if there is one.
  package static let locationctl = path("locationctl")

  /// What `make install` installs: the three programs in one executable, optimized and linked
  /// statically (`make programs`, which `make test` runs before the tests).
  package static let installable = Paths.root.appendingPathComponent(
    ".build/release/corelocation-multicall"
  ).path

  /// Why a test that installs cannot run.
  package static let installableMissingMessage =
    "\(installable) is not built; run `make programs` (make test does) first"
}
