import Foundation

/// A temporary directory for one test, removed (with everything in it) afterwards.
package func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
  let path = NSTemporaryDirectory() + "CoreLocationTests-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try body(path)
}
