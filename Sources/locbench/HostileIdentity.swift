import Foundation

/// `locbench hostile-identity MODE SOCKET SECONDS [ARGUMENT...]`: one process of the hostile uid,
/// run by `HostileAttacker` from a link of its copy of locbench under a name of its choosing, so
/// that the daemon sees the identity that name makes (or refuses it). It speaks protocol v1 as an
/// app and ends within SECONDS (an alarm 5 s later ends it anyway). Modes:
/// - `hello`: says hello and ends with the answer;
/// - `unlinked PATH`: removes PATH, the link it runs from, then says hello (the kernel shows the
///   executable as deleted);
/// - `speak`: says hello on descriptor 3, a connection its parent made (only the process that
///   connected may speak);
/// - `regions COUNT SIZE`: after the welcome, registers and adds COUNT regions with identifiers
///   of SIZE bytes around the honest feed's track (so they are evaluated), at most 256
///   unanswered, until all are answered;
/// - `held COUNT SIZE`: after the welcome, registers, asks for updates (an agent's question) and
///   adds COUNT regions with identifiers of SIZE bytes, then 2 more and a ping, and keeps the
///   connection open to the end, reading (without the ping's reply, it timed out: the daemon had
///   not read the requests yet).
enum HostileIdentity {
  /// The mode name that selects this program in `main.swift`.
  static let mode = "hostile-identity"

  /// The exit status: how the daemon answered.
  enum Outcome: Int32 {
    /// Welcomed (and, for `regions` and `held`, the work done; `held` saw 2 `tooMany`).
    case welcomed = 0
    /// Refused with `forbidden`.
    case forbidden = 10
    /// Refused with `tooMany`.
    case tooMany = 11
    /// Another error first.
    case otherError = 12
    /// Closed, or never connected, without an answer.
    case closed = 13
    /// No answer in time.
    case timedOut = 14
    /// `held`: the requests beyond the cap were not answered with `tooMany`.
    case capNotMet = 15
  }

  /// Runs the mode named by `arguments` (without `hostile-identity`); never returns.
  static func main(_ arguments: [String]) -> Never {
    signal(SIGPIPE, SIG_IGN)
    guard arguments.count >= 3, let seconds = Double(arguments[2]), seconds > 0 else {
      FileHandle.standardError.write(Data("usage: locbench \(mode) MODE SOCKET SECONDS\n".utf8))
      exit(2)
    }
    alarm(UInt32(seconds.rounded(.up)) + 5)
    let deadline = DaemonBenchSystem.now() + UInt64(seconds * 1e9)
    let mode = arguments[0]
    let rest = Array(arguments.dropFirst(3))
    let fd: Int32
    if mode == "speak" {
      fd = 3
    } else {
      if mode == "unlinked", let path = rest.first { unlink(path) }
      guard let connected = try? DaemonBenchSystem.connectUnix(path: arguments[1]) else {
        exit(Outcome.closed.rawValue)
      }
      fd = connected
    }
    _ = try? DaemonBenchSystem.setNonBlocking(fd)
    let count = rest.count >= 2 ? Int(rest[0]) ?? 0 : 0
    let size = rest.count >= 2 ? Int(rest[1]) ?? 16 : 16
    exit(converse(fd: fd, mode: mode, count: count, size: size, deadline: deadline).rawValue)
  }

  private static func converse(
    fd: Int32, mode: String, count: Int, size: Int, deadline: UInt64
  ) -> Outcome {
    let clients = DaemonBenchClients()
    let connection = clients.add(fd)
    clients.send(connection, line: #"{"type":"hello","version":1,"role":"app"}"#)
    var welcomed = false
    var answered = 0
    var tooMany = 0
    var pinged = false
    var refusal: Outcome?
    let handler: (Int, UnsafeRawBufferPointer, UInt64) -> Void = { _, line, _ in
      let type = HostileLine.field("type", in: line)
      if !welcomed {
        if type == "welcome" {
          welcomed = true
        } else if type == "error" {
          switch HostileLine.field("code", in: line) {
          case "forbidden": refusal = .forbidden
          case "tooMany": refusal = .tooMany
          default: refusal = .otherError
          }
        }
      } else if type == "regionStarted" || type == "regionFailed" {
        answered += 1
      } else if type == "error" && HostileLine.field("code", in: line) == "tooMany" {
        tooMany += 1
      } else if type == "reply" && HostileLine.number("id", in: line) == 9 {
        pinged = true
      }
    }
    func pump(until done: () -> Bool) -> Outcome? {
      while !done() {
        if let refusal { return refusal }
        if !clients.isOpen(connection) { return .closed }
        if DaemonBenchSystem.now() > deadline { return .timedOut }
        clients.pump(timeoutMilliseconds: 20, handler: handler)
      }
      return nil
    }
    if let outcome = pump(until: { welcomed }) { return outcome }
    switch mode {
    case "regions":
      clients.send(connection, line: #"{"type":"register","client":1}"#)
      var sent = 0
      while answered < count {
        while sent < count && sent - answered < 256 && clients.pendingBytes(connection) < 1 << 18 {
          clients.send(connection, line: region(sent, size: size, nearTrack: true))
          sent += 1
        }
        if let outcome = pump(until: { answered >= min(count, sent) || sent - answered < 128 }) {
          return outcome == .timedOut ? .welcomed : outcome
        }
      }
      return .welcomed
    case "held":
      clients.send(connection, line: #"{"type":"register","client":1}"#)
      clients.send(
        connection,
        line: #"{"type":"startUpdates","client":1,"request":{"desiredAccuracy":-1}}"#)
      var sent = 0
      while sent < count + 2 {
        if clients.pendingBytes(connection) < 1 << 18 {
          clients.send(connection, line: region(sent, size: size, nearTrack: false))
          sent += 1
        } else if let outcome = pump(until: { clients.pendingBytes(connection) < 1 << 18 }) {
          return outcome
        }
      }
      // A ping after them: its reply says the daemon has read every request (it serves a uid
      // over `requests-per-uid` later, not never). Held to the end: the daemon keeps the
      // requests while the connection is open.
      clients.send(connection, line: #"{"type":"ping","id":9}"#)
      let outcome = pump(until: { false })
      if outcome == .timedOut {
        guard pinged else { return .timedOut }
        return tooMany == 2 ? .welcomed : .capNotMet
      }
      return outcome ?? .welcomed
    default:
      return .welcomed
    }
  }

  /// An `addRegion` whose identifier is `size` bytes: near the honest feed's track (inside or
  /// outside; the daemon determines each state, an event kept for the app) or far north of it.
  static func region(_ index: Int, size: Int, nearTrack: Bool) -> String {
    let prefix = "r\(index)-"
    let identifier = prefix + String(repeating: "x", count: max(0, size - prefix.utf8.count))
    // A fixed scatter (Weyl sequences of the golden ratio and the square root of 2).
    let u = (Double(index) * 0.618_033_988_75).truncatingRemainder(dividingBy: 1)
    let v = (Double(index) * 0.414_213_562_37).truncatingRemainder(dividingBy: 1)
    let latitude = DaemonBenchFeed.latitude + (nearTrack ? u * 0.02 - 0.01 : 1 + u)
    let longitude = DaemonBenchFeed.longitude + (nearTrack ? v * 0.03 - 0.01 : v)
    let radius = 100 + index % 900
    return
      #"{"type":"addRegion","client":1,"group":"manager","region":{"identifier":"\#(identifier)","#
      + #""latitude":\#(latitude),"longitude":\#(longitude),"radius":\#(radius)}}"#
  }
}

/// Fields of a received line, found by bytes (the attacker reads many lines and never needs a
/// whole JSON parse).
enum HostileLine {
  /// The string value of `"key":"..."` in `line` (no escapes), or nil.
  static func field(_ key: String, in line: UnsafeRawBufferPointer) -> String? {
    let needle = Array("\"\(key)\":\"".utf8)
    guard let start = DaemonBenchLine.end(of: needle, in: line) else { return nil }
    var end = start
    while end < line.count && line[end] != UInt8(ascii: "\"") { end += 1 }
    return String(decoding: line[start..<end], as: UTF8.self)
  }

  /// The number after `"key":` in `line`, or nil.
  static func number(_ key: String, in line: UnsafeRawBufferPointer) -> Double? {
    guard let start = DaemonBenchLine.end(of: Array("\"\(key)\":".utf8), in: line) else {
      return nil
    }
    return DaemonBenchLine.number(in: line, at: start)?.0
  }
}
