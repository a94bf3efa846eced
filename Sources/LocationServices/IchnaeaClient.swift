import Foundation
import LocationFormats
import LocationModel
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Why an Ichnaea request gave no fix.
package enum IchnaeaError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Refused without a request: one is in flight, or the last began less than the minimum
  /// interval ago.
  case rateLimited
  /// Refused without a request: fewer than two access points of the scan may be sent
  /// (`IchnaeaGeolocate.minimumAccessPoints`).
  case tooFewAccessPoints
  /// The configured URL is not an `http://` or `https://` URL with a host, or the user agent
  /// holds control characters.
  case invalidConfiguration(String)
  /// The curl program is not at the configured path (Debian's `curl` package).
  case curlMissing(String)
  /// The service knows no position for these access points (HTTP 404, "Not found").
  case notFound(String)
  /// The service answered with another error object: its code (the HTTP status) and message.
  case service(code: Int?, message: String)
  /// The request did not complete: curl's exit status and the first line of what it printed.
  case transport(String)
  /// No answer within the time limit.
  case timedOut
  /// An answer that is not the service's JSON, or too large.
  case malformedAnswer(String)

  package var description: String {
    switch self {
    case .rateLimited: "rate limited: a request is in flight or was made too recently"
    case .tooFewAccessPoints: "fewer than two access points may be sent"
    case .invalidConfiguration(let reason): "invalid configuration: \(reason)"
    case .curlMissing(let path): "\(path) is missing: install Debian's curl package"
    case .notFound(let message): "no position known: \(message)"
    case .service(let code, let message):
      "service error \(code.map(String.init) ?? "?"): \(message)"
    case .transport(let reason): "request failed: \(reason)"
    case .timedOut: "no answer in time"
    case .malformedAnswer(let reason): "malformed answer: \(reason)"
    }
  }
}

/// An optional fallback for scans the device's own learned access points cannot place: asks an
/// Ichnaea-compatible geolocation service (`IchnaeaGeolocate` describes the protocol) by URL.
/// Off unless the configuration names a URL; the lead wires it in.
///
/// The request goes through Debian's `curl` program, run as a child with `posix_spawn`, rather
/// than through FoundationNetworking, which this target must not link (it would bring libcurl and
/// its TLS stack into locationd's resident memory; only `GeocodingService` links it). curl reads
/// the body on its standard input and writes the answer on its standard output:
/// `curl --disable --silent --show-error --fail-with-body --max-time T --proto =http,https
/// --user-agent UA --header 'Content-Type: application/json' --header 'Expect:'
/// --data-binary @- URL`. The answer is read up to ``maximumAnswerBytes``; curl is killed if it
/// has not finished ``Configuration/timeout`` + ``killGrace`` seconds after it started.
///
/// Requests run one at a time on a queue of the client's own; at most one is in flight and at
/// most one starts per ``Configuration/minimumInterval``. A request beyond that, or a scan with
/// too few access points to send, is refused at once: `completion` is then called before
/// `locate` returns, on the caller's thread. Otherwise it is called on the client's queue.
package final class IchnaeaClient: Sendable {
  /// What the client asks, and how often.
  package struct Configuration: Sendable, Equatable {
    /// The user agent unless one is given.
    package static let defaultUserAgent = "CoreLocation-for-Linux/0.1.0"

    /// The geolocate endpoint, e.g. `https://api.beacondb.net/v1/geolocate` (a key, if the
    /// service needs one, is part of it: `…/v1/geolocate?key=KEY`).
    package var url: String
    /// The `User-Agent` header.
    package var userAgent: String
    /// The fewest seconds between the starts of two requests.
    package var minimumInterval: Double
    /// The longest a request may take, seconds (curl's `--max-time`).
    package var timeout: Double
    /// The curl program.
    package var curlPath: String

    /// Creates a configuration.
    package init(
      url: String, userAgent: String = Configuration.defaultUserAgent,
      minimumInterval: Double = 60, timeout: Double = 10, curlPath: String = "/usr/bin/curl"
    ) {
      self.url = url
      self.userAgent = userAgent
      self.minimumInterval = minimumInterval
      self.timeout = timeout
      self.curlPath = curlPath
    }

    /// Why the configuration cannot be used, or nil when it can: the URL must be `http://` or
    /// `https://` with a host and no spaces or control characters, the user agent must hold no
    /// control characters and not be empty, the interval and timeout must be finite and ≥ 0
    /// (the timeout > 0).
    package var problem: String? {
      let lower = url.lowercased()
      let scheme = ["http://", "https://"].first { lower.hasPrefix($0) }
      guard let scheme else { return "the URL is not http:// or https://" }
      let rest = url.utf8.dropFirst(scheme.utf8.count)
      guard let first = rest.first, first != UInt8(ascii: "/"), first != UInt8(ascii: "?") else {
        return "the URL has no host"
      }
      guard url.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
        return "the URL holds spaces or control characters"
      }
      guard !userAgent.isEmpty, userAgent.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
        return "the user agent is empty or holds control characters"
      }
      guard minimumInterval.isFinite, minimumInterval >= 0 else {
        return "the minimum interval is not a number of seconds ≥ 0"
      }
      guard timeout.isFinite, timeout > 0 else {
        return "the timeout is not a number of seconds > 0"
      }
      return nil
    }
  }

  /// The most bytes of an answer read (64 KiB); a longer one is refused.
  package static let maximumAnswerBytes = 65_536
  /// The most bytes of curl's error output kept.
  static let maximumErrorBytes = 4_096
  /// Seconds beyond the configured timeout before curl is killed.
  package static let killGrace = 5.0

  /// The configuration.
  package let configuration: Configuration
  private let queue = DispatchQueue(label: "corelocation.ichnaea")
  private let state = Mutex(State())

  /// The rate limit's state.
  private struct State {
    /// A request is in flight.
    var inFlight = false
    /// When the last request started.
    var lastStart: ContinuousClock.Instant?
  }

  /// Creates a client.
  /// - Throws: `IchnaeaError.invalidConfiguration` naming the problem (``Configuration/problem``).
  package init(configuration: Configuration) throws(IchnaeaError) {
    if let problem = configuration.problem { throw .invalidConfiguration(problem) }
    self.configuration = configuration
  }

  /// Asks the service where the device is from a scan's access points.
  ///
  /// - Parameters:
  ///   - scan: the scan; hidden and `_nomap` access points and SSIDs are never sent.
  ///   - completion: the fix (quality `.network`, time the scan's, source the URL) or why there
  ///     is none. Called once: at once on the caller's thread for `.tooFewAccessPoints` and
  ///     `.rateLimited`, else on the client's queue when the request ends.
  package func locate(
    _ scan: WifiScan, completion: @escaping @Sendable (Result<Fix, IchnaeaError>) -> Void
  ) {
    guard let body = IchnaeaGeolocate.request(scan) else {
      completion(.failure(.tooFewAccessPoints))
      return
    }
    let now = ContinuousClock.now
    let interval = Duration.seconds(configuration.minimumInterval)
    let admitted = state.withLock { state -> Bool in
      if state.inFlight { return false }
      if let last = state.lastStart, last.duration(to: now) < interval { return false }
      state.inFlight = true
      state.lastStart = now
      return true
    }
    guard admitted else {
      completion(.failure(.rateLimited))
      return
    }
    queue.async { [self] in
      let result = request(body, time: scan.time)
      state.withLock { $0.inFlight = false }
      completion(result)
    }
  }

  /// The arguments curl runs with (the program's path first).
  package var arguments: [String] {
    [
      configuration.curlPath, "--disable", "--silent", "--show-error", "--fail-with-body",
      "--max-time", String(configuration.timeout), "--proto", "=http,https", "--user-agent",
      configuration.userAgent, "--header", "Content-Type: application/json", "--header",
      "Expect:", "--data-binary", "@-", configuration.url,
    ]
  }

  /// Runs one request and reads its answer.
  private func request(_ body: [UInt8], time: Double) -> Result<Fix, IchnaeaError> {
    let run: CurlRun
    do throws(IchnaeaError) {
      run = try CurlRun.start(
        arguments, input: body, limit: Self.maximumAnswerBytes,
        deadline: configuration.timeout + Self.killGrace)
    } catch {
      return .failure(error)
    }
    if run.timedOut || run.exitCode == 28 { return .failure(.timedOut) }
    if run.overflowed {
      return .failure(.malformedAnswer("longer than \(Self.maximumAnswerBytes) bytes"))
    }
    // 0: an answer; 22: an HTTP error status, whose body --fail-with-body still writes.
    guard run.exitCode == 0 || run.exitCode == 22 else {
      return .failure(.transport(run.failure))
    }
    let answer: IchnaeaGeolocate.Answer
    do throws(FormatError) {
      answer = try IchnaeaGeolocate.answer(run.output)
    } catch {
      return .failure(
        run.exitCode == 22 ? .transport(run.failure) : .malformedAnswer(error.message))
    }
    switch answer {
    case .located(let location):
      guard run.exitCode == 0 else { return .failure(.transport(run.failure)) }
      // The URL may carry the service's key (`?key=`): locations name the service without it,
      // since apps receive a location's source.
      return .success(location.fix(time: time, source: configuration.sourceName))
    case .error(let code, let message):
      return .failure(code == 404 ? .notFound(message) : .service(code: code, message: message))
    }
  }
}

/// One run of curl: its output, its error text and how it ended.
private struct CurlRun {
  /// Standard output, at most the limit.
  var output: [UInt8] = []
  /// Standard error, at most `IchnaeaClient.maximumErrorBytes`.
  var errors: [UInt8] = []
  /// More output than the limit came (curl was then killed).
  var overflowed = false
  /// The deadline passed (curl was then killed).
  var timedOut = false
  /// The exit status, or nil when a signal ended it.
  var exitCode: Int32?

  /// The exit status and the first line of the error text, for an error.
  var failure: String {
    let line = String(decoding: errors, as: UTF8.self).split(separator: "\n").first ?? ""
    let status = exitCode.map { "curl exit status \($0)" } ?? "curl ended by a signal"
    return line.isEmpty ? status : "\(status): \(line)"
  }

  /// Starts `arguments[0]` with `input` on its standard input, reads its output up to `limit`
  /// bytes and its error text until both end or `deadline` seconds pass, then reaps it (killing
  /// it first when the limit or the deadline was passed).
  /// - Throws: `.curlMissing` when the program is not executable, `.transport` when it cannot
  ///   be started.
  static func start(_ arguments: [String], input: [UInt8], limit: Int, deadline: Double)
    throws(IchnaeaError) -> CurlRun
  {
    let program = arguments[0]
    guard access(program, X_OK) == 0 else { throw .curlMissing(program) }
    // Socket pairs rather than pipes: close-on-exec from the start (SOCK_CLOEXEC) so no other
    // child inherits them, and the body is sent with MSG_NOSIGNAL, so a curl that exits early
    // gives EPIPE rather than a SIGPIPE that would end this process.
    var stdin: [Int32] = [-1, -1]
    var stdout: [Int32] = [-1, -1]
    var stderr: [Int32] = [-1, -1]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &stdin) == 0 else { throw .transport("no socket pair") }
    guard socketpair(AF_UNIX, type, 0, &stdout) == 0 else {
      closeAll(stdin)
      throw .transport("no socket pair")
    }
    guard socketpair(AF_UNIX, type, 0, &stderr) == 0 else {
      closeAll(stdin + stdout)
      throw .transport("no socket pair")
    }
    let pid: pid_t
    do throws(IchnaeaError) {
      pid = try spawn(arguments, stdin: stdin[1], stdout: stdout[1], stderr: stderr[1])
    } catch {
      closeAll(stdin + stdout + stderr)
      throw error
    }
    closeAll([stdin[1], stdout[1], stderr[1]])

    var sent = 0
    while sent < input.count {
      let count = input[sent...].withUnsafeBytes {
        send(stdin[0], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if count < 0, errno == EINTR { continue }
      if count <= 0 { break }
      sent += count
    }
    close(stdin[0])

    var run = CurlRun()
    run.read(output: stdout[0], errors: stderr[0], limit: limit, deadline: deadline)
    closeAll([stdout[0], stderr[0]])
    if run.timedOut || run.overflowed { kill(pid, SIGKILL) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    // WIFEXITED / WEXITSTATUS (<sys/wait.h>) are macros Swift does not import.
    run.exitCode = status & 0x7f == 0 ? (status >> 8) & 0xff : nil
    return run
  }

  /// Reads both descriptors until both end, the output passes `limit` or `deadline` seconds pass.
  private mutating func read(output: Int32, errors: Int32, limit: Int, deadline: Double) {
    let end = ContinuousClock.now + .seconds(deadline)
    var open = [output, errors]
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while !open.isEmpty {
      let left = ContinuousClock.now.duration(to: end)
      guard left > .zero else {
        timedOut = true
        return
      }
      let parts = left.components
      let milliseconds = Int32(
        min(parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
      var descriptors = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
      if ready < 0, errno == EINTR { continue }
      guard ready > 0 else { continue }
      for descriptor in descriptors where descriptor.revents != 0 {
        let count = Glibc.read(descriptor.fd, &buffer, buffer.count)
        if count < 0, errno == EINTR { continue }
        guard count > 0 else {
          open.removeAll { $0 == descriptor.fd }
          continue
        }
        if descriptor.fd == output {
          self.output += buffer[0..<count]
          if self.output.count > limit {
            overflowed = true
            return
          }
        } else if self.errors.count < IchnaeaClient.maximumErrorBytes {
          self.errors += buffer[0..<min(count, IchnaeaClient.maximumErrorBytes - self.errors.count)]
        }
      }
    }
  }

  /// Starts the program with the three descriptors as its standard input, output and error
  /// (`ChildSpawn`: no other descriptor of this process, default signal handlers). The
  /// environment is passed on: curl honours the user's proxy variables.
  private static func spawn(_ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32)
    throws(IchnaeaError) -> pid_t
  {
    switch ChildSpawn.spawn(
      arguments, environment: ProcessInfo.processInfo.environment, input: .descriptor(stdin),
      output: .descriptor(stdout), error: .descriptor(stderr))
    {
    case .success(let pid): return pid
    case .failure(let error):
      if error.code == ENOENT { throw .curlMissing(arguments[0]) }
      throw .transport("curl could not start: \(error.message)")
    }
  }

  /// Closes descriptors.
  private static func closeAll(_ descriptors: [Int32]) {
    for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
  }
}

extension IchnaeaClient {
  /// A client for a configured fallback, or nil (logged) when the configuration is invalid: a bad
  /// setting turns the optional service off rather than stopping the program.
  package static func fallback(_ configuration: Configuration) -> IchnaeaClient? {
    do {
      return try IchnaeaClient(configuration: configuration)
    } catch {
      HubLog.write(.info, "wifi", "fallback service off: \(error)")
      return nil
    }
  }
}

extension IchnaeaClient.Configuration {
  /// The source name of the service's locations: its URL without query or fragment (where a key
  /// is), so that no app receives the key.
  package var sourceName: String {
    String(url.prefix { $0 != "?" && $0 != "#" })
  }
}
