/// The rows of `locbench hostile`: no attacker (the baseline), then one attack of
/// `docs/security.md`'s table each, made by the hostile uid at full speed for the whole row.
///
/// What each does is `HostileAttacker`'s (the connections) and `HostileIdentity`'s (the processes
/// that are new identities); the bench prepares what the attack needs from root's side
/// (`needsReducedAccuracy`, `needsAgent`).
enum HostileAttack: String, CaseIterable {
  case baseline
  case roles
  case identity
  case probe
  case connections
  case pings
  case held
  case identities
  case denied
  case lines

  /// The attack of `docs/security.md` it makes.
  var label: String {
    switch self {
    case .baseline: return "-"
    case .roles: return "F1"
    case .identity: return "F2"
    case .probe: return "F3"
    case .connections: return "F5"
    case .pings, .held: return "F6"
    case .identities: return "F7"
    case .denied: return "F9"
    case .lines: return "F8/F10"
    }
  }

  /// What the hostile uid does, for the usage text and the report.
  var summary: String {
    switch self {
    case .baseline:
      return "no attacker: the honest client alone"
    case .roles:
      return "32 connections saying hello as control or agent, or as an app sending control "
        + "requests, reconnecting at once"
    case .identity:
      return "a hello flood on 16 connections; 4 processes at a time with faked identities: a "
        + "copy named 'X (deleted)', a copy deleted before hello, a socket handed to another "
        + "process"
    case .probe:
      return "an app with approximate accuracy on 8 connections asking for region states, "
        + "regions, headings and single locations in a loop"
    case .connections:
      return "300 idle connections (over the 256 a uid may hold) reopened as soon as closed, "
        + "plus 8 connect-and-close loops"
    case .pings:
      return "256 connections sending pings and never reading, reopened when closed"
    case .held:
      return "16 new identities at once, each sending 257 requests of 60 kB behind startUpdates "
        + "while root's agent leaves the prompt open, replaced as they end (max-held-requests "
        + "counts the uid's apps together: beyond it, tooMany and closed after 3 strikes)"
    case .identities:
      return "new identities by renaming (4 processes at a time), each adding regions with "
        + "1 kB identifiers up to max-regions, until max-apps-per-uid and beyond"
    case .denied:
      return "a denied app on 8 connections asking for updates, headings, single locations and "
        + "region states in a loop"
    case .lines:
      return "16 connections sending lines over 64 KiB, malformed JSON, bad UTF-8, deep nesting, "
        + "requests before hello and cut lines; processes named with bidirectional overrides "
        + "and control characters"
    }
  }

  /// Whether root authorizes the hostile uid's own program with approximate accuracy first.
  var needsReducedAccuracy: Bool { self == .probe }

  /// Whether root denies the hostile uid's own program first.
  var needsDenial: Bool { self == .denied }

  /// Whether an agent of root's is connected and never answers (a prompt left open). The hostile
  /// uid cannot be an agent on the system daemon, so requests are held only while an agent of
  /// root or of the control group has a question open.
  var needsAgent: Bool { self == .held }

  /// Connections the attacker keeps open (reopened when closed), and whether it reads them.
  var connections: (count: Int, reads: Bool) {
    switch self {
    case .baseline, .held, .identities: return (0, true)
    case .roles: return (32, true)
    case .identity, .lines: return (16, true)
    case .probe, .denied: return (8, true)
    case .connections: return (308, true)
    case .pings: return (256, false)
    }
  }

  /// Processes (new identities) the attacker runs at once.
  var processes: Int {
    switch self {
    case .baseline, .roles, .probe, .connections, .pings, .denied: return 0
    case .identity, .identities: return 4
    case .lines: return 2
    case .held: return 16
    }
  }
}
