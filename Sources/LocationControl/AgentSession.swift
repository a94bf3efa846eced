/// The conversation of `locationctl agent`, without any I/O: authorization requests from the
/// daemon and lines typed by the user go in, prompts and decisions come out.
///
/// Our rules (Apple's dialog is the model, the keys are ours):
/// - Requests are asked one at a time, in the order they arrive.
/// - First question: `APP wants your location (when in use|always). [o]nce, [w]hile in use,
///   [a]lways, [d]eny? `. Full words are accepted too (`once`, `while`, `when-in-use`, `always`,
///   `deny`, `no`), in any case.
/// - Unless denied, second question: `[p]recise or [a]pproximate? ` (also `precise`, `exact`,
///   `approximate`, `approx`, `reduced`). An empty answer to either question repeats it.
/// - An answer that means nothing repeats the question with a hint; nothing is guessed.
/// - Lines typed while no request waits are kept and answer the next requests in order, so
///   `printf 'w\np\n' | locationctl agent` answers one request and ends.
/// - At the end of input the agent ends once no typed answer is left, even if a request is still
///   unanswered: that request is left to the daemon (its configured policy decides).
/// - A temporary full accuracy request (an app with approximate location asks for the precise one
///   while it is in use) is one question: `APP asks for your precise location while it is in use
///   (purpose key "KEY"): "REASON". [a]llow or [d]on't allow? ` (also `allow`, `yes`, `y`, `don't
///   allow`, `deny`, `no`, `n`).
package struct AgentSession: Sendable {
  /// An authorization request from the daemon.
  package struct Request: Equatable, Sendable {
    /// The daemon's request number, echoed in the decision.
    package var id: Int
    /// The app asking.
    package var app: String
    /// Whether the app asked for always (else when in use).
    package var always: Bool
    /// The reason the app gave (`CLLocationManager.purpose`), if any.
    package var purpose: String?
    /// Set when the app asks for temporary full accuracy: the purpose key it named.
    package var purposeKey: String?

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - id: The daemon's request number.
    ///   - app: The app identifier.
    ///   - always: Whether the app asked for always.
    ///   - purpose: The reason the app gave, if any.
    ///   - purposeKey: For a temporary full accuracy request, the purpose key.
    package init(
      id: Int, app: String, always: Bool, purpose: String? = nil, purposeKey: String? = nil
    ) {
      self.id = id
      self.app = app
      self.always = always
      self.purpose = purpose
      self.purposeKey = purposeKey
    }
  }

  /// The user's answer to a request.
  package struct Decision: Equatable, Sendable {
    /// What the user allowed.
    package enum Status: String, Equatable, Sendable {
      /// Allowed once: when in use until the app's last connection closes.
      case once
      /// Allowed while the app is in use.
      case whenInUse
      /// Allowed always.
      case always
      /// Denied.
      case denied
    }

    /// What the user allowed.
    package var status: Status
    /// Reduced accuracy (approximate location); false for a denial.
    package var approximate: Bool

    /// Creates a decision.
    ///
    /// - Parameters:
    ///   - status: What the user allowed.
    ///   - approximate: Whether the location is approximate.
    package init(_ status: Status, approximate: Bool = false) {
      self.status = status
      self.approximate = approximate
    }
  }

  /// What the agent must do next, in order.
  package enum Action: Equatable, Sendable {
    /// Print this text to the terminal (a question ends without a newline).
    case show(String)
    /// Send this decision to the daemon.
    case answer(id: Int, Decision)
    /// End: input is over.
    case finish
  }

  private enum Stage: Equatable, Sendable {
    case idle
    case askingStatus(Request)
    case askingTemporary(Request)
    case askingAccuracy(Request, Decision.Status)
  }

  private var stage = Stage.idle
  private var waiting: [Request] = []
  private var typed: [String] = []
  private var inputEnded = false
  private var finished = false

  /// Creates an idle session.
  package init() {}

  /// Whether the session has ended (after `.finish`).
  package var isFinished: Bool { finished }

  /// The first question for a request.
  ///
  /// - Parameter request: The request.
  /// - Returns: The question, without a newline.
  package static func statusQuestion(_ request: Request) -> String {
    "\(ControlTable.clean(request.app)) wants your location "
      + "(\(request.always ? "always" : "when in use"))"
      + (request.purpose.map { ": \"\(ControlTable.clean($0))\"" } ?? "") + ". "
      + "[o]nce, [w]hile in use, [a]lways, [d]eny? "
  }

  /// The second question.
  package static let accuracyQuestion = "[p]recise or [a]pproximate? "

  /// The question for a temporary full accuracy request.
  ///
  /// - Parameter request: The request (with its purpose key).
  /// - Returns: The question, without a newline.
  package static func temporaryQuestion(_ request: Request) -> String {
    "\(ControlTable.clean(request.app)) asks for your precise location while it is in use "
      + "(purpose key \"\(ControlTable.clean(request.purposeKey ?? ""))\")"
      + (request.purpose.map { ": \"\(ControlTable.clean($0))\"" } ?? "") + ". "
      + "[a]llow or [d]on't allow? "
  }

  /// A request arrived from the daemon.
  ///
  /// - Parameter request: The request.
  /// - Returns: What to do.
  package mutating func received(_ request: Request) -> [Action] {
    guard !finished else { return [] }
    waiting.append(request)
    return advance()
  }

  /// The user typed a line (without its newline).
  ///
  /// - Parameter line: The line.
  /// - Returns: What to do.
  package mutating func typed(_ line: String) -> [Action] {
    guard !finished else { return [] }
    typed.append(line)
    return advance()
  }

  /// Standard input ended.
  ///
  /// - Returns: What to do (ends with `.finish`).
  package mutating func endOfInput() -> [Action] {
    guard !finished else { return [] }
    inputEnded = true
    return advance()
  }

  private mutating func advance() -> [Action] {
    var actions: [Action] = []
    while !finished {
      switch stage {
      case .idle:
        if !waiting.isEmpty {
          let request = waiting.removeFirst()
          if request.purposeKey != nil {
            stage = .askingTemporary(request)
            actions.append(.show(Self.temporaryQuestion(request)))
          } else {
            stage = .askingStatus(request)
            actions.append(.show(Self.statusQuestion(request)))
          }
          continue
        }
        if inputEnded && typed.isEmpty {
          finished = true
          actions.append(.finish)
        }
        return actions
      case .askingStatus(let request):
        guard let line = nextLine() else { return finishIfEnded(actions) }
        switch Self.status(line) {
        case .none:
          if !line.trimmingSpaces.isEmpty {
            actions.append(
              .show("Please answer o (once), w (while in use), a (always) or d (deny).\n"))
          }
          actions.append(.show(Self.statusQuestion(request)))
        case .some(.denied):
          stage = .idle
          actions.append(.answer(id: request.id, Decision(.denied)))
          actions.append(.show("Denied \(ControlTable.clean(request.app)).\n"))
        case .some(let status):
          stage = .askingAccuracy(request, status)
          actions.append(.show(Self.accuracyQuestion))
        }
      case .askingTemporary(let request):
        guard let line = nextLine() else { return finishIfEnded(actions) }
        switch Self.allows(line) {
        case .none:
          if !line.trimmingSpaces.isEmpty {
            actions.append(.show("Please answer a (allow) or d (don't allow).\n"))
          }
          actions.append(.show(Self.temporaryQuestion(request)))
        case .some(let allowed):
          stage = .idle
          actions.append(
            .answer(id: request.id, allowed ? Decision(.whenInUse) : Decision(.denied)))
          actions.append(
            .show(
              allowed
                ? "Allowed \(ControlTable.clean(request.app)) precise location while in use.\n"
                : "\(ControlTable.clean(request.app)) keeps approximate location.\n"))
        }
      case .askingAccuracy(let request, let status):
        guard let line = nextLine() else { return finishIfEnded(actions) }
        switch Self.approximate(line) {
        case .none:
          if !line.trimmingSpaces.isEmpty {
            actions.append(.show("Please answer p (precise) or a (approximate).\n"))
          }
          actions.append(.show(Self.accuracyQuestion))
        case .some(let approximate):
          stage = .idle
          actions.append(.answer(id: request.id, Decision(status, approximate: approximate)))
          actions.append(.show(Self.summary(request, status, approximate: approximate)))
        }
      }
    }
    return actions
  }

  private mutating func nextLine() -> String? {
    typed.isEmpty ? nil : typed.removeFirst()
  }

  private mutating func finishIfEnded(_ actions: [Action]) -> [Action] {
    guard inputEnded else { return actions }
    finished = true
    return actions + [.show("\n"), .finish]
  }

  private static func summary(
    _ request: Request, _ status: Decision.Status, approximate: Bool
  ) -> String {
    let how: String
    switch status {
    case .once: how = "once"
    case .whenInUse: how = "while in use"
    case .always: how = "always"
    case .denied: how = "never"
    }
    return "Allowed \(ControlTable.clean(request.app)) \(how), "
      + "\(approximate ? "approximate" : "precise") location.\n"
  }

  /// The status an answer to the first question names, if any.
  static func status(_ line: String) -> Decision.Status? {
    switch line.trimmingSpaces.lowercased() {
    case "o", "once", "allow once": return .once
    case "w", "while", "while in use", "when in use", "when-in-use", "wheninuse":
      return .whenInUse
    case "a", "always": return .always
    case "d", "deny", "denied", "n", "no", "never", "don't allow": return .denied
    default: return nil
    }
  }

  /// Whether an answer to the temporary full accuracy question allows it; nil when it means
  /// nothing.
  static func allows(_ line: String) -> Bool? {
    switch line.trimmingSpaces.lowercased() {
    case "a", "allow", "y", "yes": return true
    case "d", "don't allow", "dont allow", "deny", "n", "no": return false
    default: return nil
    }
  }

  /// Whether an answer to the second question means approximate; nil when it means nothing.
  static func approximate(_ line: String) -> Bool? {
    switch line.trimmingSpaces.lowercased() {
    case "p", "precise", "exact", "full": return false
    case "a", "approximate", "approx", "reduced": return true
    default: return nil
    }
  }
}

extension String {
  /// The string without leading and trailing spaces, tabs and carriage returns.
  var trimmingSpaces: String {
    let blanks: Set<Character> = [" ", "\t", "\r"]
    var text = Substring(self)
    while let first = text.first, blanks.contains(first) { text.removeFirst() }
    while let last = text.last, blanks.contains(last) { text.removeLast() }
    return String(text)
  }
}
