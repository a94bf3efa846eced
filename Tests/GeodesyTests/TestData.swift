import Foundation
import TestSupport

/// Reads the project's reference data (`<package root>/Tests/Fixtures`).
enum TestData {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The test data folder, found from this file's path.
  static var directory: URL { Paths.fixtures }

  /// The text of a file under the shared test data folder.
  static func text(_ relativePath: String) throws -> String {
    let url = directory.appendingPathComponent(relativePath)
    guard let data = FileManager.default.contents(atPath: url.path) else {
      throw Failure(description: "cannot read \(url.path)")
    }
    return String(decoding: data, as: UTF8.self)
  }
}
