import Foundation

/// Where the test inputs live, found from this file's path (the package root is four levels up).
package enum Paths {
  /// The package root.
  package static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// A file under `Tests/Fixtures/<folder>/`.
  package static func fixture(_ folder: String, _ name: String) -> String {
    root.appendingPathComponent("Tests/Fixtures").appendingPathComponent(folder)
      .appendingPathComponent(name).path
  }

  /// The bundled example track: a real recording, 2 1/2 minutes at 1 Hz.
  package static let ijsselmeer = root.appendingPathComponent(
    "Examples/tracks/ijsselmeer-2018.nmea"
  ).path
}

/// A temporary directory for one test, removed afterwards.
package func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
  let path = NSTemporaryDirectory() + "CoreLocationTests-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try body(path)
}
