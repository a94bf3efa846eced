import LocationModel
import LocationProtocol

/// One delivery's fixes encoded for an app's managers, and the `locations` lines built from them
/// for the first few manager numbers asked for.
struct EncodedLocations {
  /// The fixes as delivered by the hub (before any reduction).
  let fixes: [Fix]
  /// Whether they were encoded reduced.
  let reduced: Bool
  /// The encoded array of fixes.
  let json: [UInt8]
  /// Lines built so far, by manager number.
  private var lines: [(client: Int, line: [UInt8])] = []
  /// Manager numbers whose lines are kept (a connection's managers are numbered from 1; a
  /// number past the first few is built each time).
  static let keptLines = 8

  init(fixes: [Fix], reduced: Bool, json: [UInt8]) {
    self.fixes = fixes
    self.reduced = reduced
    self.json = json
  }

  /// The line for manager `client`.
  mutating func line(client: Int) -> [UInt8] {
    if let kept = lines.first(where: { $0.client == client }) { return kept.line }
    let line = DaemonProtocol.encodeLocations(client: client, fixesJSON: json)
    if lines.count < Self.keptLines { lines.append((client, line)) }
    return line
  }
}
