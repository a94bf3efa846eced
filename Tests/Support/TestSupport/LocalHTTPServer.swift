import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A small HTTP/1.1 server on a free loopback port, for tests of HTTP clients: each request is
/// answered by a closure, one connection at a time, and recorded. It stops when `stop()` is
/// called (or the object goes away).
package final class LocalHTTPServer: Sendable {
  /// A request as the server read it.
  package struct Request: Sendable {
    /// The method (`GET`).
    package var method: String
    /// The path, without the query.
    package var path: String
    /// The query items, decoded.
    package var query: [String: String]
    /// The headers, names in lower case.
    package var headers: [String: String]
    /// The body (`Content-Length` bytes), as UTF-8; empty when there is none.
    package var body: String = ""
  }

  /// How the server answers.
  package enum Response: Sendable {
    /// A status and a body (`Content-Type: application/json`).
    case answer(status: Int, body: String)
    /// Closes the connection without answering.
    case hangUp
  }

  /// The port the server listens on (127.0.0.1).
  package let port: Int
  private let listener: Int32
  private let log = RequestLog()
  private let stopped = DispatchSemaphore(value: 0)
  private let isStopped = Mutex(false)

  /// Starts a server; returns once it listens.
  ///
  /// - Parameter respond: The answer to each request.
  package init(respond: @escaping @Sendable (Request) -> Response) throws {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EIO) }
    var yes: Int32 = 1
    setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(descriptor, 16) == 0 else {
      close(descriptor)
      throw POSIXError(.EADDRINUSE)
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(descriptor, $0, &length)
      }
    }
    listener = descriptor
    port = Int(UInt16(bigEndian: address.sin_port))
    let thread = Thread { [log, stopped] in
      while true {
        let connection = accept(descriptor, nil, nil)
        if connection < 0 {
          if errno == EINTR { continue }
          break
        }
        if let request = Self.read(connection) {
          log.requests.withLock { $0.append(request) }
          Self.write(respond(request), to: connection)
        }
        close(connection)
      }
      stopped.signal()
    }
    thread.start()
  }

  deinit {
    stop()
  }

  /// The requests received so far, oldest first.
  package var requests: [Request] { log.requests.withLock { $0 } }

  private final class RequestLog: Sendable {
    let requests = Mutex<[Request]>([])
  }

  /// The base URL (`http://127.0.0.1:PORT/`).
  package var url: URL {
    URL(string: "http://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/")
  }

  /// Waits until a connection to the port succeeds, polling until `deadline` (monotonic
  /// seconds).
  ///
  /// - Returns: Whether the server accepted a connection in time.
  package func waitUntilReady(timeout: Double = 10) -> Bool {
    Loopback.waitUntilAccepting(port: port, timeout: timeout)
  }

  /// Stops listening and waits for the accept loop to end.
  package func stop() {
    let first = isStopped.withLock { stopped in
      defer { stopped = true }
      return !stopped
    }
    guard first else { return }
    // Shut down first (a pending or later accept then fails), and close only once the accept loop
    // has ended: closed earlier, the descriptor's number could be reused by another test's
    // listener before the loop calls accept again, and the loop would serve that test's requests.
    shutdown(listener, Int32(SHUT_RDWR))
    _ = stopped.wait(timeout: .now() + 10)
    close(listener)
  }

  private static func read(_ connection: Int32) -> Request? {
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(
      connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    var headEnd: Int?
    var wanted = 0
    while bytes.count < 65_536 {
      if let headEnd, bytes.count >= headEnd + wanted { break }
      let count = recv(connection, &buffer, buffer.count, 0)
      if count <= 0 { break }
      bytes += buffer[0..<count]
      if headEnd == nil, let end = Self.endOfHead(bytes) {
        headEnd = end
        wanted = Self.contentLength(bytes[..<end])
      }
    }
    let head = bytes[..<(headEnd ?? bytes.count)]
    let body = headEnd.map { String(decoding: bytes[$0...].prefix(wanted), as: UTF8.self) } ?? ""
    let text = String(decoding: head, as: UTF8.self)
    let lines = text.components(separatedBy: "\r\n")
    let parts = lines.first?.split(separator: " ") ?? []
    guard parts.count >= 2 else { return nil }
    let target = URLComponents(string: String(parts[1]))
    var query: [String: String] = [:]
    for item in target?.queryItems ?? [] { query[item.name] = item.value ?? "" }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
        .trimmingCharacters(in: .whitespaces)
    }
    return Request(
      method: String(parts[0]), path: target?.path ?? "", query: query, headers: headers,
      body: body)
  }

  /// The offset just past the blank line that ends a request's head, if it has arrived.
  private static func endOfHead(_ bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for index in 0...(bytes.count - 4)
    where bytes[index..<index + 4].elementsEqual([13, 10, 13, 10]) {
      return index + 4
    }
    return nil
  }

  /// The `Content-Length` of a request's head (0 when absent).
  private static func contentLength(_ head: ArraySlice<UInt8>) -> Int {
    for line in String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n") {
      guard let colon = line.firstIndex(of: ":"),
        line[..<colon].lowercased() == "content-length"
      else { continue }
      return Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)) ?? 0
    }
    return 0
  }

  private static func write(_ response: Response, to connection: Int32) {
    guard case .answer(let status, let body) = response else { return }
    let data = Array(body.utf8)
    let head =
      "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Error")\r\nContent-Type: application/json\r\n"
      + "Content-Length: \(data.count)\r\nConnection: close\r\n\r\n"
    let all = Array(head.utf8) + data
    var sent = 0
    while sent < all.count {
      let count = all[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
      if count <= 0 { break }
      sent += count
    }
  }
}
