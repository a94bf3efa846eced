import Foundation

/// The POSIX calls `locbench daemon` makes: sockets, a monotonic clock, child processes and
/// `/proc` readings. Each call that fails throws a `DaemonBenchSystem.Failure` naming the call and
/// `errno`.
enum DaemonBenchSystem {
  /// A failed system call or a setup step that did not finish in time.
  struct Failure: Error, CustomStringConvertible {
    /// What failed, with the reason.
    var description: String
  }

  /// Nanoseconds on `CLOCK_MONOTONIC`.
  static func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
  }

  /// Throws when `result` is negative, naming `call` and `errno`.
  @discardableResult
  static func check(_ result: Int32, _ call: String) throws -> Int32 {
    if result < 0 { throw Failure(description: "\(call): \(String(cString: strerror(errno)))") }
    return result
  }

  // MARK: Sockets

  private static let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)

  private static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port)).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
  }

  /// A listening TCP socket on 127.0.0.1 and a port the kernel picks; returns it and the port.
  static func listenLoopback() throws -> (fd: Int32, port: Int) {
    let fd = try check(socket(AF_INET, streamType, 0), "socket")
    var address = loopback(port: 0)
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    do {
      try check(bound, "bind 127.0.0.1")
      try check(listen(fd, 64), "listen")
    } catch {
      close(fd)
      throw error
    }
    var actual = sockaddr_in()
    var actualLength = length
    _ = withUnsafeMutablePointer(to: &actual) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
    }
    return (fd, Int(UInt16(bigEndian: actual.sin_port)))
  }

  /// A loopback port free now (bound once and released), for a server we start.
  static func freeLoopbackPort() throws -> Int {
    let (fd, port) = try listenLoopback()
    close(fd)
    return port
  }

  /// Connects to 127.0.0.1:`port` (blocking connect); returns the socket, made non-blocking.
  static func connectLoopback(port: Int) throws -> Int32 {
    let fd = try check(socket(AF_INET, streamType, 0), "socket")
    var address = loopback(port: port)
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    if result < 0 {
      let failure = Failure(
        description: "connect 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
      close(fd)
      throw failure
    }
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    try setNonBlocking(fd)
    return fd
  }

  /// Connects to the Unix stream socket at `path` (blocking connect); returns it non-blocking.
  static func connectUnix(path: String) throws -> Int32 {
    var address = try unixAddress(path)
    let fd = try check(socket(AF_UNIX, streamType, 0), "socket")
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    if result < 0 {
      let failure = Failure(description: "connect \(path): \(String(cString: strerror(errno)))")
      close(fd)
      throw failure
    }
    try setNonBlocking(fd)
    return fd
  }

  /// The address of the Unix socket at `path`; throws when the path is too long for one.
  static func unixAddress(_ path: String) throws -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw Failure(description: "socket path too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
      raw[bytes.count] = 0
    }
    return address
  }

  /// Sets `O_NONBLOCK` on `fd`.
  static func setNonBlocking(_ fd: Int32) throws {
    let flags = try check(fcntl(fd, F_GETFL), "fcntl F_GETFL")
    try check(fcntl(fd, F_SETFL, flags | O_NONBLOCK), "fcntl F_SETFL")
  }

  /// Waits up to `deadline` (monotonic ns) for a connection on the listening socket `fd`.
  static func accept(_ fd: Int32, deadline: UInt64, what: String) throws -> Int32 {
    while true {
      let current = now()
      if current >= deadline { throw Failure(description: "\(what): nobody connected in time") }
      var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let wait = Int32(min(1000, (deadline - current) / 1_000_000 + 1))
      if poll(&entry, 1, wait) > 0 {
        let client = Glibc.accept(fd, nil, nil)
        if client >= 0 {
          _ = fcntl(client, F_SETFD, FD_CLOEXEC)
          var one: Int32 = 1
          setsockopt(
            client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
          return client
        }
        if errno != EINTR && errno != EAGAIN { try check(client, "accept") }
      }
    }
  }

  /// Writes all of `bytes` to the blocking socket `fd`.
  static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes {
        send(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
      }
      if written < 0 {
        if errno == EINTR { continue }
        throw Failure(description: "write: \(String(cString: strerror(errno)))")
      }
      offset += written
    }
  }

  /// Reads and throws away whatever is waiting on the socket `fd`, without blocking.
  static func drain(_ fd: Int32) {
    var scratch = [UInt8](repeating: 0, count: 4096)
    while scratch.withUnsafeMutableBytes({
      recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
    }) > 0 {}
  }

  // MARK: Child processes

  /// Starts `path` with `arguments`; stdin is /dev/null, stdout and stderr go to `logPath`.
  ///
  /// The child starts with an empty signal mask and default SIGPIPE/SIGTERM dispositions (the
  /// bench ignores SIGPIPE), so SIGTERM stops it. With `newProcessGroup` it leads a process group
  /// of its own (its pid), which its children join: `kill(-pid, ...)` ends them all.
  /// `descriptor3`, when given, is the child's descriptor 3.
  static func spawn(
    _ path: String, _ arguments: [String], logPath: String, newProcessGroup: Bool = false,
    descriptor3: Int32? = nil
  ) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    if let descriptor3 { posix_spawn_file_actions_adddup2(&actions, descriptor3, 3) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
    if newProcessGroup {
      posix_spawnattr_setpgroup(&attributes, 0)
      flags |= POSIX_SPAWN_SETPGROUP
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
    guard result == 0 else {
      throw Failure(description: "cannot start \(path): \(String(cString: strerror(result)))")
    }
    return pid
  }

  /// Waits for the child `pid` to exit; returns its exit status (128 + signal when killed).
  static func waitForExit(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  }

  /// Whether the child `pid` has exited (reaps it if so).
  static func hasExited(_ pid: pid_t) -> Bool {
    var status: Int32 = 0
    return waitpid(pid, &status, WNOHANG) == pid
  }

  /// Sends SIGTERM to the child `pid`, waits up to 3 s, then SIGKILL; reaps it.
  static func stop(_ pid: pid_t) {
    kill(pid, SIGTERM)
    let deadline = now() + 3_000_000_000
    var status: Int32 = 0
    while now() < deadline {
      if waitpid(pid, &status, WNOHANG) != 0 { return }
      usleep(10_000)
    }
    kill(pid, SIGKILL)
    _ = waitpid(pid, &status, 0)
  }

  // MARK: /proc

  /// Processor time of process `pid` so far, in ns: the first field (time on a processor) of each
  /// of its threads' `/proc/PID/task/TID/schedstat`, summed (the process's own `schedstat` is its
  /// main thread's alone; `usage(of:)` counts in clock ticks of 10 ms). Threads that ended are
  /// not counted; 0 when the process is gone.
  static func processorNanoseconds(of pid: pid_t) -> Double {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var total = 0.0
    for task in tasks {
      guard
        let text = try? String(
          contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
        let first = text.split(separator: " ").first, let value = Double(first)
      else { continue }
      total += value
    }
    return total
  }

  /// CPU and memory of one process, from `/proc/PID/stat` and `/proc/PID/status`.
  struct Usage {
    /// User plus system CPU time, seconds.
    var cpuSeconds: Double = 0
    /// Resident set size now, bytes (`VmRSS`).
    var residentBytes: Int = 0
    /// Peak resident set size, bytes (`VmHWM`).
    var peakResidentBytes: Int = 0
  }

  /// The usage of process `pid`, or nil when it cannot be read.
  static func usage(of pid: pid_t) -> Usage? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")"),
      let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    else { return nil }
    // Fields after the command name: state is field 3, utime 14, stime 15 (proc(5)).
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12])
    else { return nil }
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    func kilobytes(_ key: String) -> Int {
      for line in status.split(separator: "\n") where line.hasPrefix(key) {
        let number = line.dropFirst(key.count).filter(\.isNumber)
        return (Int(number) ?? 0) * 1024
      }
      return 0
    }
    return Usage(
      cpuSeconds: (user + system) / ticks, residentBytes: kilobytes("VmRSS:"),
      peakResidentBytes: kilobytes("VmHWM:"))
  }

  /// This process's user plus system CPU time, seconds (`getrusage`).
  static func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }
}
