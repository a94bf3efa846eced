import Foundation
import Geodesy
import TestSupport

@testable import LocationStore

/// The bytes of the file at `path`.
func contents(_ path: String) throws -> Data {
  try Data(contentsOf: URL(fileURLWithPath: path))
}

/// Runs raw SQL on the file at `path` through a connection of its own (for building bad files).
func executeRaw(_ sql: String, at path: String) throws {
  let connection = try Connection.open(path: path, flags: 0x2 | 0x4)  // READWRITE | CREATE
  try connection.execute(sql)
}

/// A region with the given key and a position derived from `index`.
func region(
  _ identifier: String, app: String = "org.example.app", group: String = "manager",
  index: Int = 0
) -> StoredRegion {
  StoredRegion(
    app: app, group: group, identifier: identifier,
    latitude: -60 + Double(index % 12_000) / 100, longitude: -170 + Double(index % 34_000) / 100,
    radius: 50 + Double(index % 1_000), hysteresis: 5, notifyOnEntry: index % 2 == 0,
    notifyOnExit: index % 3 != 0, state: index % 3, stateTime: index % 5 == 0 ? nil : 1.7e9,
    extra: index % 7 == 0 ? #"{"kind":"circle"}"# : nil, created: 1.6e9 + Double(index))
}
