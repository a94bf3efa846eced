#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Opens stream endpoints: blocking calls (name lookup, connect with a timeout, `open`), made on
/// a worker thread, that hand back a non-blocking, close-on-exec file descriptor.
enum StreamOpener {
  /// How long a TCP connect may take before it fails, seconds.
  static let connectTimeout = 10

  /// Opens an endpoint.
  /// - Parameter endpoint: what to open.
  /// - Returns: a non-blocking descriptor the caller owns, or why it could not be opened.
  static func open(_ endpoint: StreamEndpoint) -> Result<Int32, StreamOpenError> {
    switch endpoint {
    case .tcp(let host, let port): return connectTCP(host: host, port: port)
    case .unix(let path): return connectUnix(path: path)
    case .serial(let path, let baud): return SerialPort.open(path: path, baud: baud)
    }
  }

  /// Closes a descriptor, ignoring `EINTR` (Linux closes the descriptor even then).
  static func close(_ fd: Int32) {
    _ = Glibc.close(fd)
  }

  // MARK: TCP

  static func connectTCP(host: String, port: Int) -> Result<Int32, StreamOpenError> {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
      let reason = gai_strerror(status).map { String(cString: $0) } ?? "error \(status)"
      return .failure(StreamOpenError("cannot resolve \(host): \(reason.lowercased())"))
    }
    defer { freeaddrinfo(first) }
    var lastError = StreamOpenError("no address for \(host)")
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let info = entry {
      entry = info.pointee.ai_next
      let fd = socket(
        info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
        info.pointee.ai_protocol)
      guard fd >= 0 else {
        lastError = .errno("socket")
        continue
      }
      // Linux bounds a blocking connect by the send timeout (socket(7), SO_SNDTIMEO).
      var timeout = timeval(tv_sec: connectTimeout, tv_usec: 0)
      _ = setsockopt(
        fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
      var result: Int32
      repeat {
        result = Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen)
      } while result != 0 && errno == EINTR
      if result == 0 {
        var none = timeval(tv_sec: 0, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        enableKeepAlive(fd)
        return makeNonBlocking(fd)
      }
      let code = errno
      lastError =
        code == EINPROGRESS || code == EAGAIN
        ? StreamOpenError("connect: timed out after \(connectTimeout) s")
        : .errno("connect", code)
      close(fd)
    }
    return .failure(lastError)
  }

  /// TCP keepalive (tcp(7)): probes after 30 s of silence, every 10 s, 3 unanswered probes
  /// end the connection (`ETIMEDOUT`), so that a peer that vanished without closing (a
  /// network gone, a host powered off) is noticed within about a minute and reconnected.
  static func enableKeepAlive(_ fd: Int32) {
    func set(_ level: Int32, _ option: Int32, _ value: Int32) {
      var value = value
      _ = setsockopt(fd, level, option, &value, socklen_t(MemoryLayout<Int32>.size))
    }
    set(SOL_SOCKET, SO_KEEPALIVE, 1)
    set(Int32(IPPROTO_TCP), TCP_KEEPIDLE, 30)
    set(Int32(IPPROTO_TCP), TCP_KEEPINTVL, 10)
    set(Int32(IPPROTO_TCP), TCP_KEEPCNT, 3)
  }

  // MARK: Unix

  static func connectUnix(path: String) -> Result<Int32, StreamOpenError> {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    let bytes = Array(path.utf8)
    guard bytes.count < capacity else {
      return .failure(
        StreamOpenError(
          "socket path is longer than \(capacity - 1) bytes", isPermanent: true))
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return .failure(.errno("socket")) }
    var result: Int32
    repeat {
      result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
    } while result != 0 && errno == EINTR
    guard result == 0 else {
      let error = StreamOpenError.errno("connect", errno)
      close(fd)
      return .failure(error)
    }
    return makeNonBlocking(fd)
  }

  // MARK: Descriptors

  static func makeNonBlocking(_ fd: Int32) -> Result<Int32, StreamOpenError> {
    let flags = fcntl(fd, F_GETFL)
    guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
      let error = StreamOpenError.errno("fcntl", errno)
      close(fd)
      return .failure(error)
    }
    return .success(fd)
  }

  /// Writes all of `bytes` to a freshly opened descriptor (a short command such as gpsd's
  /// `?WATCH`); sockets use `MSG_NOSIGNAL` so that a closed peer gives `EPIPE`, not `SIGPIPE`.
  /// - Returns: nil on success, else the error.
  static func writeAll(_ fd: Int32, _ bytes: [UInt8], isSocket: Bool) -> StreamOpenError? {
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { raw -> Int in
        let base = raw.baseAddress.map { $0 + offset }
        let count = raw.count - offset
        return isSocket
          ? send(fd, base, count, Int32(MSG_NOSIGNAL)) : Glibc.write(fd, base, count)
      }
      if written > 0 {
        offset += written
        continue
      }
      let code = errno
      // A new connection's send buffer holds a short command at once; EAGAIN here would mean a
      // peer that reads nothing, reported like any other write error.
      if written < 0 && code == EINTR { continue }
      return .errno("write", code)
    }
    return nil
  }
}
