import Foundation

/// Root's control connections to the daemon under test (protocol v1, `docs/protocol.md`, "Control
/// role"): a decision for the hostile uid's program, and the census of what that uid holds.
enum HostileBenchControl {
  /// What one uid holds in the daemon (`apps` of the control role).
  struct Census {
    /// App identities.
    var identities = 0
    /// Regions over all of them, and the most of one.
    var regions = 0
    var mostRegions = 0
    /// Events kept for them, and the most for one.
    var pendingEvents = 0
    var mostPendingEvents = 0

    /// Whether each stays within its cap (`HostileBench.caps`).
    var withinCaps: Bool {
      identities <= HostileBench.caps.apps && mostRegions <= HostileBench.caps.regions
        && mostPendingEvents <= HostileBench.caps.pendingEvents
    }
  }

  /// Says hello as control on `socket`, sends `requests` (lines with ids below 999), then a ping
  /// with id 999, and returns every object the daemon sent until the ping's reply.
  static func converse(_ socket: String, _ requests: [String], seconds: Double) throws
    -> [[String: Any]]
  {
    let clients = DaemonBenchClients()
    defer { clients.closeAll() }
    let connection = clients.add(try DaemonBenchSystem.connectUnix(path: socket))
    let lines =
      [#"{"type":"hello","version":1,"role":"control"}"#] + requests
      + [#"{"type":"ping","id":999}"#]
    clients.send(connection, Array(lines.joined(separator: "\n").utf8) + [10])
    var answers: [[String: Any]] = []
    var done = false
    try DaemonBench.wait(
      clients, seconds: seconds, what: "the control role's answers",
      handler: { _, line, _ in
        guard
          let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
        else { return }
        answers.append(object)
        if object["type"] as? String == "reply" && object["id"] as? Int == 999 { done = true }
      }, until: { done || !clients.isOpen(connection) })
    guard done else {
      throw DaemonBenchSystem.Failure(
        description: "the control connection was closed: \(answers.last ?? [:])")
    }
    return answers
  }

  /// Decides for `app`: `status` (`whenInUse`, `denied`...) with `accuracy` (`full`, `reduced`).
  static func authorize(_ app: String, status: String, accuracy: String, socket: String) throws {
    let request =
      #"{"type":"authorize","id":1,"app":"\#(app)","status":"\#(status)","accuracy":"\#(accuracy)"}"#
    let answers = try converse(socket, [request], seconds: 20)
    guard answers.contains(where: { $0["type"] as? String == "reply" && $0["id"] as? Int == 1 })
    else {
      throw DaemonBenchSystem.Failure(
        description: "authorize \(app) was not answered: \(answers.last ?? [:])")
    }
  }

  /// What the apps of `uid` hold.
  static func census(uid: UInt32, socket: String) throws -> Census {
    let answers = try converse(socket, [#"{"type":"apps","id":1}"#], seconds: 60)
    guard
      let reply = answers.first(where: { $0["type"] as? String == "reply" && $0["id"] as? Int == 1 }
      ),
      let apps = reply["apps"] as? [[String: Any]]
    else {
      throw DaemonBenchSystem.Failure(description: "apps was not answered: \(answers.last ?? [:])")
    }
    var census = Census()
    for app in apps where (app["app"] as? String)?.hasSuffix("@\(uid)") == true {
      census.identities += 1
      let regions = app["regions"] as? Int ?? 0
      let events = app["pendingEvents"] as? Int ?? 0
      census.regions += regions
      census.mostRegions = max(census.mostRegions, regions)
      census.pendingEvents += events
      census.mostPendingEvents = max(census.mostPendingEvents, events)
    }
    return census
  }
}
