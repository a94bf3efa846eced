/// Who a peer is, from the facts the kernel keeps (`PeerFacts`), by the rules of
/// `docs/security.md` ("Principals"):
///
/// - **Flatpak.** A process whose root holds `/.flatpak-info` (`[Application] name=ID`, written by
///   Flatpak when it builds the sandbox) is the confined app `ID`.
/// - **AppArmor and SELinux.** A process labelled by an enforcing profile (`SO_PEERSEC`: AppArmor's
///   `PROFILE (enforce)`, Snap's `snap.NAME.APP (enforce)`; an SELinux context whose type is not
///   an unconfined one) is the confined app named by its profile.
/// - **Unconfined.** Anything else is identified by its executable's path (or the configured id
///   of an `[app]` section listing it): bookkeeping, not a boundary, since the processes of one
///   user can ptrace each other. Still refused: a peer in another mount namespace (its paths are
///   not ours), an executable the kernel marks ` (deleted)` (or whose name ends so), a path cut
///   short, and a path with control or format characters (bidirectional overrides and isolates
///   among them), which would show one name in a prompt or a log and be another.
/// - **Interpreters.** `python3 tool.py` and `python3 other.py` are not one app: the identity of an
///   interpreter (`interpreters`) is its script, the first argument that is not an option and
///   names an existing file; with no script, only an `[app]` section listing the interpreter
///   itself names it (then every script it runs is that one app).
/// - **Roles.** A confined app never gets the control or agent role.
enum PeerIdentity {
  /// What a peer is.
  enum Principal: Sendable, Equatable {
    /// An unconfined process, by its executable's or its script's path (or a configured id).
    case unconfined(app: String)
    /// A Flatpak app.
    case flatpak(app: String)
    /// An app confined by an AppArmor or SELinux profile.
    case labelled(app: String)

    /// The app identifier (before a system daemon adds `@UID`).
    var app: String {
      switch self {
      case .unconfined(let app), .flatpak(let app), .labelled(let app): return app
      }
    }

    /// Whether the kernel confines it.
    var isConfined: Bool {
      switch self {
      case .unconfined: return false
      case .flatpak, .labelled: return true
      }
    }
  }

  /// Why a peer cannot be identified.
  struct Refusal: Error, Sendable, Equatable {
    /// A sentence for the peer and the log (already free of control characters).
    var reason: String
  }

  /// Executable names that run scripts.
  static let interpreters: Set<String> = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "python", "python2", "python3",
    "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl", "ruby", "lua", "luajit", "php",
    "java", "tclsh", "wish", "Rscript", "guile", "osh", "julia", "swift",
  ]

  /// Whether an executable name is an interpreter's (`python3.11` counts as `python3`).
  static func isInterpreter(_ name: String) -> Bool {
    if interpreters.contains(name) { return true }
    let base = name.prefix { !$0.isNumber && $0 != "." }
    let rest = name.dropFirst(base.count)
    return !rest.isEmpty && rest.allSatisfy { $0.isNumber || $0 == "." }
      && interpreters.contains(String(base))
  }

  /// Resolves a peer's principal.
  /// - Parameters:
  ///   - facts: What the kernel says about it.
  ///   - configuredID: The `[app]` section's identifier for a path, if any.
  ///   - fileExists: Whether a path names an existing regular file.
  static func resolve(
    _ facts: PeerFacts, configuredID: (String) -> String?, fileExists: (String) -> Bool
  ) -> Result<Principal, Refusal> {
    guard facts.alive else {
      return .failure(Refusal(reason: "the process went away while it was identified"))
    }
    if let info = facts.flatpakInfo {
      guard let app = flatpakApp(info) else {
        return .failure(Refusal(reason: "its /.flatpak-info names no valid application"))
      }
      return .success(.flatpak(app: app))
    }
    if let label = facts.securityLabel, let profile = confiningProfile(label) {
      return .success(.labelled(app: profile))
    }
    guard facts.sameMountNamespace == true else {
      return .failure(
        Refusal(
          reason: "it runs in another mount namespace, where paths are not the daemon's; "
            + "run it in the host's or in a Flatpak sandbox"))
    }
    let path: String
    switch facts.executable {
    case .path(let found): path = found
    case .deleted:
      return .failure(
        Refusal(reason: "its executable was deleted (or is named like a deleted one)"))
    case .truncated: return .failure(Refusal(reason: "its executable's path is too long"))
    case .unreadable: return .failure(Refusal(reason: "its executable cannot be read"))
    }
    guard isPrintable(path) else {
      return .failure(
        Refusal(reason: "its executable's path has control or format characters"))
    }
    let name = String(path.split(separator: "/").last ?? "")
    guard isInterpreter(name) else { return .success(.unconfined(app: configuredID(path) ?? path)) }
    if let configured = configuredID(path) { return .success(.unconfined(app: configured)) }
    guard let script = script(facts, fileExists: fileExists) else {
      return .failure(
        Refusal(
          reason: "it is the interpreter \(name) with no script file; name the app with an "
            + "[app] section listing \(path)"))
    }
    guard isPrintable(script) else {
      return .failure(Refusal(reason: "its script's path has control or format characters"))
    }
    return .success(.unconfined(app: configuredID(script) ?? script))
  }

  /// The script an interpreter runs: the first argument after the interpreter's own that does
  /// not start with `-` and names an existing file (relative paths from the working directory).
  static func script(_ facts: PeerFacts, fileExists: (String) -> Bool) -> String? {
    for argument in facts.arguments.dropFirst() where !argument.hasPrefix("-") && !argument.isEmpty
    {
      var path = argument
      if !path.hasPrefix("/") {
        guard let directory = facts.workingDirectory else { return nil }
        path = directory + "/" + path
      }
      let script = normalized(path)
      return fileExists(script) ? script : nil
    }
    return nil
  }

  /// A path without `.` components, empty components and `..` (lexically).
  static func normalized(_ path: String) -> String {
    var parts: [Substring] = []
    for part in path.split(separator: "/") {
      switch part {
      case ".": continue
      case "..": if !parts.isEmpty { parts.removeLast() }
      default: parts.append(part)  // a path component
      }
    }
    return "/" + parts.joined(separator: "/")
  }

  /// The application id in a `/.flatpak-info` (`[Application]`, `name=`), when it is a valid
  /// reverse-DNS id (letters, digits, `_`, `-`, dots between elements; Flatpak's rule).
  static func flatpakApp(_ info: String) -> String? {
    var section = ""
    for raw in info.split(separator: "\n", omittingEmptySubsequences: true) {
      let line = raw.trimmingCharacters(in: " \t\r")
      if line.hasPrefix("[") {
        section = line
        continue
      }
      guard section == "[Application]", line.hasPrefix("name=") else { continue }
      let name = String(line.dropFirst("name=".count))
      let elements = name.split(separator: ".", omittingEmptySubsequences: false)
      guard elements.count >= 2, name.utf8.count <= 255,
        elements.allSatisfy({ element in
          !element.isEmpty
            && element.unicodeScalars.allSatisfy {
              ($0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil))
                || $0 == "_" || $0 == "-"
            }
        })
      else { return nil }
      return name
    }
    return nil
  }

  /// The profile that confines a process with this label, or nil when it is unconfined (no
  /// enforcing profile).
  static func confiningProfile(_ label: String) -> String? {
    let trimmed = label.trimmingCharacters(in: " \n\0")
    guard !trimmed.isEmpty, trimmed != "unconfined", isPrintable(trimmed) else { return nil }
    // AppArmor: `PROFILE (MODE)`; only `enforce` confines (`complain` only logs).
    if trimmed.hasSuffix(")"), let open = trimmed.lastIndex(of: "(") {
      let mode = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
      let profile = trimmed[..<open].trimmingCharacters(in: " ")
      return mode == "enforce" && !profile.isEmpty && profile != "unconfined" ? profile : nil
    }
    // SELinux: `user:role:type:level`; the unconfined types confine nothing.
    let fields = trimmed.split(separator: ":")
    if fields.count >= 3 {
      let type = fields[2]
      return type.hasPrefix("unconfined") || type == "initrc_t" ? nil : String(type)
    }
    return nil
  }

  /// Whether a name has no control, format (bidirectional marks and isolates among them),
  /// line or paragraph separator characters.
  static func isPrintable(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { scalar in
      switch scalar.properties.generalCategory {
      case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse,
        .unassigned:
        return false
      case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
        .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber,
        .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
        .initialPunctuation, .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol,
        .modifierSymbol, .otherSymbol, .spaceSeparator:
        return true
      @unknown default:  // a category added to Unicode later: not shown as it is
        return false
      }
    }
  }

  /// A name as it may be shown in a log or a prompt: control and format characters escaped
  /// (`\u{202E}`).
  static func displayable(_ text: String) -> String {
    var shown = ""
    for scalar in text.unicodeScalars {
      if isPrintable(String(scalar)) {
        shown.unicodeScalars.append(scalar)
      } else {
        shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      }
    }
    return shown
  }
}

extension StringProtocol {
  /// The text without these characters at either end.
  fileprivate func trimmingCharacters(in characters: String) -> String {
    let set = Set(characters)
    let start = firstIndex { !set.contains($0) } ?? endIndex
    let end = lastIndex { !set.contains($0) }.map { index(after: $0) } ?? start
    return String(self[start..<Swift.max(start, end)])
  }
}
