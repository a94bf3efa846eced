import Foundation

/// A temporary directory for one test, removed (with everything in it) afterwards.
package func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
  let path = try makeTestDirectory()
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try body(path)
}

/// `withTemporaryDirectory` for an asynchronous body.
package func withTemporaryDirectoryAsync<R>(_ body: (String) async throws -> R) async throws -> R {
  let path = try makeTestDirectory()
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try await body(path)
}

private func makeTestDirectory() throws -> String {
  let path = NSTemporaryDirectory() + "CoreLocationTests-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}
