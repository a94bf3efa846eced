import Foundation

// What the attacker's connections say: on opening (by variant, which cycles), on each line the
// daemon sends, and each turn (the floods, kept at most 64 KiB ahead of the socket).
extension HostileAttacker {
  private static let hello = Array(#"{"type":"hello","version":1,"role":"app"}"#.utf8) + [10]

  /// 64 KiB of pings.
  private static let pings: [UInt8] = {
    var bytes: [UInt8] = []
    var id = 0
    while bytes.count < 65_536 - 32 {
      bytes += Array(#"{"type":"ping","id":\#(id)}"#.utf8) + [10]
      id += 1
    }
    return bytes
  }()

  /// What an app with approximate accuracy asks for, again and again: a region's state (which
  /// it may not learn), a region (which it may not monitor), headings and single locations.
  private static let probes: [UInt8] = {
    let lines = [
      #"{"type":"requestRegionState","client":1,"group":"manager","identifier":"home"}"#,
      #"{"type":"addRegion","client":1,"group":"manager","region":{"identifier":"home","latitude":52,"longitude":5.001,"radius":100}}"#,
      #"{"type":"startHeading","client":1,"filter":1,"orientation":1}"#,
      #"{"type":"stopHeading","client":1}"#,
      #"{"type":"requestLocation","client":1,"request":{"desiredAccuracy":-1}}"#,
    ]
    return Array(String(repeating: lines.joined(separator: "\n") + "\n", count: 16).utf8)
  }()

  /// Bad lines, by variant of the `lines` attack; each closes the connection (an oversized line
  /// at once, the others after three strikes).
  private static let badLines: [[UInt8]] = {
    let threeTimes = { (line: [UInt8]) in line + [10] + line + [10] + line + [10] }
    let oversized =
      Array(#"{"type":"ping","id":1,"pad":""#.utf8) + [UInt8](repeating: 0x61, count: 70_000)
      + Array(#""}"#.utf8) + [10]
    let nested =
      Array(#"{"type":"ping","id":1,"x":"#.utf8) + [UInt8](repeating: 0x5B, count: 40)
      + [UInt8](repeating: 0x5D, count: 40) + [0x7D]
    return [
      hello + oversized,
      hello + threeTimes(Array("{not json".utf8)),
      hello + threeTimes(Array(#"{"type":"ping","id":1,"x":""#.utf8) + [0xFF, 0xFE, 0x22, 0x7D]),
      hello + threeTimes(nested),
      hello + threeTimes(Array(#"{"type":"teleport","id":1}"#.utf8)),
      hello + threeTimes(Array(#"{"type":"startUpdates"}"#.utf8)),
      threeTimes(Array(#"{"type":"status","id":1}"#.utf8)),
      // A line cut short: the connection is closed right after it.
      hello + Array(#"{"type":"ping","id""#.utf8),
    ]
  }()

  /// A new connection of `slot` doing `variant`.
  func opened(_ index: Int, slot: Int, variant: Int) {
    switch attack {
    case .baseline, .held, .identities:
      break
    case .roles:
      switch variant % 3 {
      case 0: clients.send(index, line: #"{"type":"hello","version":1,"role":"control"}"#)
      case 1: clients.send(index, line: #"{"type":"hello","version":1,"role":"agent"}"#)
      default:
        let app = executable + "@\(getuid())"
        clients.send(
          index,
          Self.hello
            + Array(
              (#"{"type":"authorize","id":1,"app":"\#(app)","status":"always"}"# + "\n"
                + #"{"type":"apps","id":2}"# + "\n"
                + #"{"type":"services","id":3,"enabled":false}"# + "\n").utf8))
      }
    case .identity:
      clients.send(index, Self.hello)
    case .probe, .denied:
      clients.send(
        index,
        Self.hello
          + Array(
            (#"{"type":"register","client":1}"# + "\n"
              + #"{"type":"startUpdates","client":1,"request":{"desiredAccuracy":-1}}"# + "\n")
              .utf8))
    case .connections:
      // Beyond the idle ones: connect and close at once, over and over.
      if slot >= 300 {
        clients.close(index)
        count("connections closed at once (storm)")
      }
    case .pings:
      clients.send(index, Self.hello)
    case .lines:
      let bad = Self.badLines[variant % Self.badLines.count]
      clients.send(index, bad)
      if variant % Self.badLines.count == Self.badLines.count - 1 { clients.close(index) }
    }
  }

  /// A line the daemon sent on connection `index`.
  func received(_ index: Int, _ line: UnsafeRawBufferPointer) {
    let type = HostileLine.field("type", in: line) ?? "?"
    if type == "error" {
      count("error \(HostileLine.field("code", in: line) ?? "?")")
    } else {
      count(type)
    }
    guard let (_, variant) = connectionSlots[index] else { return }
    switch attack {
    case .roles:
      if type == "welcome" && variant % 3 != 2 { count("BREACH: control or agent role granted") }
      if type == "reply" { count("BREACH: a control request answered for an app") }
    case .identity:
      // A hello flood: welcomed, closed (after the pump), connected again.
      if type == "welcome" { closing.append(index) }
    case .probe:
      if type == "regionState" { count("BREACH: a region state told to an approximate app") }
      if type == "regionStarted" { count("BREACH: a region monitored for an approximate app") }
      if type == "locations", let accuracy = HostileLine.number("horizontalAccuracy", in: line),
        accuracy < 3000
      {
        count("BREACH: a precise location told to an approximate app")
      }
    case .denied:
      if type == "locations" { count("BREACH: a location told to a denied app") }
      if type == "heading" { count("BREACH: a heading told to a denied app") }
      if type == "regionState" { count("BREACH: a region state told to a denied app") }
      if type == "regionStarted" { count("BREACH: a region monitored for a denied app") }
    case .baseline, .connections, .pings, .held, .identities, .lines:
      break
    }
  }

  /// Keeps the floods going: at most 64 KiB (pings) or 16 KiB (probes) waiting per connection.
  func refill() {
    let flood: [UInt8]
    let ahead: Int
    switch attack {
    case .pings:
      (flood, ahead) = (Self.pings, 65_536)
    case .probe, .denied:
      (flood, ahead) = (Self.probes, 16_384)
    case .baseline, .roles, .identity, .connections, .held, .identities, .lines:
      return
    }
    for case let index? in slots where clients.isOpen(index) && clients.pendingBytes(index) < ahead
    {
      clients.send(index, flood)
      count("bytes sent", flood.count)
    }
  }
}
