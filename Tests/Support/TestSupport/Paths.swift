import Foundation

/// Where the test inputs live, found from this file's path (the package root is four levels up).
package enum Paths {
  /// The package root.
  package static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// `Tests/Fixtures`, the recorded inputs.
  package static let fixtures = root.appendingPathComponent("Tests/Fixtures")

  /// The folder `Tests/Fixtures/<folder>`.
  package static func fixtureFolder(_ folder: String) -> URL {
    fixtures.appendingPathComponent(folder)
  }

  /// A file under `Tests/Fixtures/<folder>/`.
  package static func fixture(_ folder: String, _ name: String) -> String {
    fixtureFolder(folder).appendingPathComponent(name).path
  }

  /// The bytes of `Tests/Fixtures/<folder>/<name>`.
  package static func fixtureBytes(_ folder: String, _ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture(folder, name))))
  }

  /// The text of `Tests/Fixtures/<folder>/<name>` (UTF-8, invalid bytes replaced).
  package static func fixtureText(_ folder: String, _ name: String) throws -> String {
    String(decoding: try fixtureBytes(folder, name), as: UTF8.self)
  }

  /// The folder of gpsd's regression captures, `Tests/Fixtures/gpsd-regress`.
  package static let gpsdRegress = fixtureFolder("gpsd-regress").path

  /// The bundled example track: a real recording, 2 1/2 minutes at 1 Hz.
  package static let ijsselmeer = root.appendingPathComponent(
    "Examples/tracks/ijsselmeer-2018.nmea"
  ).path
}
