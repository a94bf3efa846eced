import Foundation
import LocationProtocol

#if canImport(Glibc)
  import Glibc
#endif

/// `locationctl`'s command line: the control and agent roles of locationd's protocol.
///
/// Exit statuses (also in `--help`): 0 success, 1 the daemon answered with an error (or broke the
/// protocol, or closed the connection), 2 usage error, 3 cannot connect (the message says how to
/// start locationd).
package enum LocationControlCommand {
  /// Exit statuses.
  package enum ExitCode: Int32, Sendable {
    /// Success.
    case success = 0
    /// The daemon answered with an error, broke the protocol or went away.
    case daemonError = 1
    /// Usage error.
    case usage = 2
    /// The daemon's socket could not be reached.
    case cannotConnect = 3
  }

  /// How long to wait for the daemon's answer before giving up, in seconds. Not a wait in the
  /// normal course: the daemon answers control requests at once.
  package static let replyTimeout = 30.0

  /// Runs the tool with the given arguments (without the program name), on the process's
  /// standard input, output and error, with the process's environment.
  ///
  /// - Parameter arguments: The command-line arguments.
  /// - Returns: The process's exit status.
  package static func main(arguments: [String]) -> Int32 {
    run(arguments: arguments, environment: ProcessInfo.processInfo.environment, io: .standard)
  }

  /// Runs the tool with explicit input, output and environment (what tests use).
  ///
  /// - Parameters:
  ///   - arguments: The command-line arguments (without the program name).
  ///   - environment: The environment (for the default socket).
  ///   - io: Where input comes from and output goes.
  /// - Returns: The exit status.
  package static func run(arguments: [String], environment: [String: String], io: ControlIO)
    -> Int32
  {
    let options: ControlOptions
    do {
      options = try ControlOptions.parse(arguments)
    } catch {
      io.error("locationctl: \(error.message)\n")
      return ExitCode.usage.rawValue
    }
    if options.command == .help {
      io.output(ControlOptions.helpText + "\n")
      return ExitCode.success.rawValue
    }
    let path = options.socketPath(environment: environment)
    var exportBounds: (since: Double, until: Double?)?
    if case .export(let request) = options.command {
      do {
        exportBounds = try request.bounds(now: Date().timeIntervalSince1970)
      } catch {
        io.error("locationctl: \(error.message)\n")
        return ExitCode.usage.rawValue
      }
    }
    do {
      let socket = try ControlSocket.connect(path: path)
      if options.command == .agent {
        try runAgent(socket: socket, io: io)
      } else if case .wifiImport(let file) = options.command {
        io.output(try performImport(path: file, options: options, socket: socket))
      } else if case .export(let request) = options.command, let exportBounds {
        try performExport(request, bounds: exportBounds, socket: socket, io: io)
      } else {
        let output = try perform(options, socket: socket)
        io.output(output)
      }
      return ExitCode.success.rawValue
    } catch {
      io.error("locationctl: \(error.message)\n")
      return error.exitStatus
    }
  }

  // MARK: Control requests

  /// The request id `locationctl` uses (one request per connection).
  static let requestID = 1

  /// The message a command sends.
  static func request(for command: ControlOptions.Command) -> DaemonMessage? {
    switch command {
    case .status: return .status(id: requestID)
    case .apps: return .apps(id: requestID)
    case .sources: return .sources(id: requestID)
    case .regions(let app): return .regions(id: requestID, app: app)
    case .services(let enabled): return .services(id: requestID, enabled: enabled)
    case .wifi(let forget): return .wifi(id: requestID, forget: forget)
    case .wifiImport, .export: return nil
    case .authorize(let app, let grant, let approximate):
      let setting: DaemonAuthorizationSetting
      switch grant {
      case .always: setting = .always
      case .whenInUse: setting = .whenInUse
      case .denied: setting = .denied
      case .reset: setting = .reset
      }
      return .authorize(
        id: requestID, app: app, status: setting, accuracy: approximate ? .reduced : .full)
    case .agent, .help: return nil
    }
  }

  /// Says hello in `role` and reads the welcome.
  static func handshake(_ socket: ControlSocket, role: DaemonRole) throws(ControlError) {
    try send(.hello(version: DaemonProtocol.version, role: role), on: socket)
    while true {
      guard let line = try socket.readLine(timeout: replyTimeout) else {
        throw ControlError(
          .protocolViolation, "locationd at \(socket.path) closed the connection after hello")
      }
      switch try decode(line, from: socket) {
      case .some(.welcome): return
      case .some(.error(let error)):
        throw daemonError(error, socket: socket, role: role)
      case .some, .none:
        continue
      }
    }
  }

  /// Sends the request for `options` and returns the text to print.
  static func perform(_ options: ControlOptions, socket: ControlSocket) throws(ControlError)
    -> String
  {
    guard let request = request(for: options.command) else { return "" }
    try handshake(socket, role: .control)
    try send(request, on: socket)
    while true {
      guard let line = try socket.readLine(timeout: replyTimeout) else {
        throw ControlError(
          .protocolViolation, "locationd at \(socket.path) closed the connection before replying")
      }
      switch try decode(line, from: socket) {
      case .some(.reply(let id, let reply)) where id == requestID:
        return try render(reply, line: line, options: options)
      case .some(.error(let error)) where error.id == requestID || error.id == nil:
        throw daemonError(error, socket: socket, role: .control)
      case .some, .none:
        continue
      }
    }
  }

  /// The text for a reply: a table, or with `--json` the reply's payload.
  static func render(_ reply: DaemonReply, line: String, options: ControlOptions)
    throws(ControlError) -> String
  {
    if options.json {
      return try jsonPayload(line: line, command: options.command) + "\n"
    }
    switch (reply, options.command) {
    case (.status(let status), _): return ControlFormatter.status(status)
    case (.apps(let apps), _): return ControlFormatter.apps(apps)
    case (.sources(let sources), _): return ControlFormatter.sources(sources)
    case (.regions(let regions), .regions(let app)):
      return ControlFormatter.regions(regions, app: app)
    case (.regions(let regions), _): return ControlFormatter.regions(regions, app: "")
    case (.wifi(let wifi), _): return ControlFormatter.wifi(wifi)
    case (.history, _): return ""  // export writes pages itself
    case (.done, .authorize(let app, let grant, let approximate)):
      let name = ControlTable.clean(app)
      switch grant {
      case .reset: return "\(name): decision forgotten; the app will be asked again.\n"
      case .denied: return "\(name): denied.\n"
      case .always, .whenInUse:
        return "\(name): \(grant == .always ? "always" : "when in use"), "
          + "\(approximate ? "approximate" : "precise") location.\n"
      }
    case (.done, .services(let enabled)):
      return "Location services \(enabled ? "on" : "off").\n"
    case (.done, _): return ""
    }
  }

  /// The reply's payload as one line of JSON: the member named after the command (`status`,
  /// `apps`, `regions`, `sources`) for listings, else the reply object without `type` and `id`.
  static func jsonPayload(line: String, command: ControlOptions.Command) throws(ControlError)
    -> String
  {
    let value: DaemonJSON
    do {
      value = try DaemonJSON.parse(Array(line.utf8))
    } catch {
      throw ControlError(.protocolViolation, "locationd sent malformed JSON: \(error.message)")
    }
    guard case .object(var members) = value else {
      throw ControlError(.protocolViolation, "locationd's reply is not a JSON object")
    }
    let key: String?
    switch command {
    case .status: key = "status"
    case .apps: key = "apps"
    case .regions: key = "regions"
    case .sources: key = "sources"
    case .wifi, .wifiImport: key = "wifi"
    case .authorize, .services, .agent, .help, .export: key = nil
    }
    if let key, let payload = members[key] { return ControlFormatter.json(payload) }
    members["type"] = nil
    members["id"] = nil
    return ControlFormatter.json(.object(members))
  }

  // MARK: Agent

  /// Registers as the agent and answers requests from the terminal until input ends.
  static func runAgent(socket: ControlSocket, io: ControlIO) throws(ControlError) {
    try handshake(socket, role: .agent)
    io.error(
      "locationctl: answering location requests from locationd at \(socket.path); "
        + "end with Ctrl-D\n")
    var session = AgentSession()
    var input = InputLines(fd: io.input)
    var endReported = false
    func apply(_ actions: [AgentSession.Action]) throws(ControlError) {
      for action in actions {
        switch action {
        case .show(let text): io.output(text)
        case .answer(let id, let decision):
          let status: DaemonAgentDecision
          switch decision.status {
          case .once: status = .once
          case .whenInUse: status = .whenInUse
          case .always: status = .always
          case .denied: status = .denied
          }
          try send(
            .authorizationDecision(
              id: id, status: status, accuracy: decision.approximate ? .reduced : .full),
            on: socket)
        case .finish: return
        }
      }
    }
    while !session.isFinished {
      // Lines already buffered on either side are handled before waiting again.
      if let line = try socket.bufferedLine() {
        switch try decode(line, from: socket) {
        case .some(.authorizationRequest(let id, let app, let always, let purpose)):
          try apply(session.received(.init(id: id, app: app, always: always, purpose: purpose)))
        case .some(.temporaryFullAccuracyRequest(let id, let app, let purposeKey, let purpose)):
          try apply(
            session.received(
              .init(id: id, app: app, always: false, purpose: purpose, purposeKey: purposeKey)))
        case .some(.error(let error)):
          if error.id == nil, error.client == nil {
            throw daemonError(error, socket: socket, role: .agent)
          }
          io.error("locationctl: locationd: \(error.message) (\(error.code.rawValue))\n")
        case .some, .none:
          break
        }
        continue
      }
      if let line = input.next() {
        try apply(session.typed(line))
        continue
      }
      if input.ended, !endReported {
        endReported = true
        try apply(session.endOfInput())
        continue
      }
      // Once input has ended only the socket is watched (typed answers may still be waiting
      // for requests).
      var descriptors = [pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)]
      if !input.ended {
        descriptors.append(pollfd(fd: io.input, events: Int16(POLLIN), revents: 0))
      }
      let count = nfds_t(descriptors.count)
      let ready = retryingInterrupts { poll(&descriptors, count, -1) }
      guard ready >= 0 else {
        throw ControlError(.io, "cannot wait for input: \(ControlSocket.reason(errno))")
      }
      if descriptors[0].revents != 0 {
        guard try socket.fill() else {
          throw ControlError(
            .protocolViolation, "locationd at \(socket.path) closed the connection")
        }
      }
      if descriptors.count > 1, descriptors[1].revents != 0 {
        input.fill()
      }
    }
  }

  // MARK: Helpers

  static func send(_ message: DaemonMessage, on socket: ControlSocket) throws(ControlError) {
    var bytes = DaemonProtocol.encode(message)
    if bytes.last == 0x0A { bytes.removeLast() }
    try socket.send(String(decoding: bytes, as: UTF8.self))
  }

  /// Decodes a line from the daemon; nil for a message type this version does not know (a newer
  /// daemon's), which is skipped.
  static func decode(_ line: String, from socket: ControlSocket) throws(ControlError)
    -> DaemonMessage?
  {
    do {
      return try DaemonProtocol.decode(
        line: Array(line.utf8), limit: ControlSocket.maximumLineLength)
    } catch {
      if error.code == .unknownType { return nil }
      throw ControlError(
        .protocolViolation,
        "locationd at \(socket.path) sent a message this locationctl cannot read: \(error.message)")
    }
  }

  /// The error for an `error` message from the daemon, with advice where there is some.
  static func daemonError(_ error: DaemonErrorMessage, socket: ControlSocket, role: DaemonRole)
    -> ControlError
  {
    var message = "locationd: \(error.message.isEmpty ? error.code.rawValue : error.message)"
    if error.code == .forbidden {
      message +=
        " (the \(role.rawValue) role needs root or the daemon's own user"
        + (socket.path == ControlOptions.systemSocket ? "; try sudo" : "") + ")"
    } else if error.code == .unsupportedVersion {
      message += " (this locationctl speaks protocol version \(DaemonProtocol.version))"
    }
    return ControlError(.daemon(error.code.rawValue), message)
  }
}

/// Where `locationctl` reads and writes: standard input by file descriptor (the agent polls it
/// together with the socket), output and errors as text.
package struct ControlIO: Sendable {
  /// The file descriptor answers are read from (the agent).
  package var input: Int32
  /// Writes to standard output.
  package var output: @Sendable (String) -> Void
  /// Writes to standard error.
  package var error: @Sendable (String) -> Void

  /// Creates an I/O set.
  ///
  /// - Parameters:
  ///   - input: The file descriptor to read answers from.
  ///   - output: Receives standard output text.
  ///   - error: Receives standard error text.
  package init(
    input: Int32, output: @escaping @Sendable (String) -> Void,
    error: @escaping @Sendable (String) -> Void
  ) {
    self.input = input
    self.output = output
    self.error = error
  }

  /// The process's standard input, output and error (written unbuffered, so a question without
  /// a newline shows at once).
  package static let standard = ControlIO(
    input: STDIN_FILENO,
    output: { FileHandle.standardOutput.write(Data($0.utf8)) },
    error: { FileHandle.standardError.write(Data($0.utf8)) })
}

/// Lines read from a file descriptor as they become available.
struct InputLines {
  let fd: Int32
  private var buffer: [UInt8] = []
  /// The descriptor reached end of file (or failed).
  private(set) var ended = false

  init(fd: Int32) { self.fd = fd }

  /// The next complete line, or the unterminated rest once input ended.
  mutating func next() -> String? {
    if let newline = buffer.firstIndex(of: 0x0A) {
      let line = String(decoding: buffer[..<newline], as: UTF8.self)
      buffer.removeSubrange(...newline)
      return line
    }
    if ended, !buffer.isEmpty {
      let line = String(decoding: buffer, as: UTF8.self)
      buffer.removeAll()
      return line
    }
    return nil
  }

  /// Reads what is available (one `read`), after `poll` said the descriptor is readable.
  mutating func fill() {
    var chunk = [UInt8](repeating: 0, count: 4096)
    let count = chunk.withUnsafeMutableBytes { raw in
      retryingInterrupts { read(fd, raw.baseAddress, raw.count) }
    }
    if count <= 0 {
      ended = true
    } else {
      buffer.append(contentsOf: chunk[..<count])
    }
  }
}
