#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What the daemon reads about a peer process when it says `hello`: facts the kernel keeps in
/// `/proc/PID`, read through a directory opened while the peer's pidfd shows it alive, so that a
/// pid reused by another process is noticed (the way xdg-desktop-portal reads `/.flatpak-info`).
struct PeerFacts: Sendable, Equatable {
  /// The executable link (`/proc/PID/exe`).
  enum Executable: Sendable, Equatable {
    /// A path.
    case path(String)
    /// The kernel marked the file deleted (or the path ends with ` (deleted)` and cannot be told
    /// from one).
    case deleted(String)
    /// The path filled the buffer: it may be cut short.
    case truncated
    /// It could not be read.
    case unreadable
  }

  /// The executable.
  var executable: Executable
  /// Whether the peer is in the host's mount namespace (PID 1's) or the daemon's own (nil when
  /// unknown). A system daemon under systemd's sandboxing (`ProtectSystem=`, `PrivateTmp=`) has a
  /// mount namespace of its own, and its peers are in the host's.
  var sameMountNamespace: Bool?
  /// The text of `/.flatpak-info` at the root of the peer's file system, when there is one.
  var flatpakInfo: String?
  /// The peer's security label (`SO_PEERSEC`), when a security module labels it.
  var securityLabel: String?
  /// The peer's command line.
  var arguments: [String]
  /// The peer's working directory.
  var workingDirectory: String?
  /// Whether the process was the same, running process from before the first read to after the
  /// last.
  var alive: Bool

  /// The longest `/.flatpak-info` read; Flatpak writes a few hundred bytes.
  static let flatpakInfoLimit = 65_536

  /// Reads the facts of a peer.
  /// - Parameters:
  ///   - pid: The peer's pid (`SO_PEERCRED`).
  ///   - pidfd: Its pidfd, taken when it connected; nil where the kernel gives none.
  ///   - label: Its security label.
  static func read(pid: Int32, pidfd: Int32?, label: String?) -> PeerFacts {
    var facts = PeerFacts(
      executable: .unreadable, sameMountNamespace: nil, flatpakInfo: nil, securityLabel: label,
      arguments: [], workingDirectory: nil, alive: false)
    let directory = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard directory >= 0 else { return facts }
    defer { Glibc.close(directory) }
    if let pidfd, !DaemonSyscall.isAlive(pidfd: pidfd) { return facts }
    facts.executable = executable(at: directory)
    if let theirs = link(directory, "ns/mnt") {
      let known = [readLink("/proc/self/ns/mnt"), readLink("/proc/1/ns/mnt")].compactMap { $0 }
      if !known.isEmpty { facts.sameMountNamespace = known.contains(theirs) }
    }
    facts.flatpakInfo = file(directory, "root/.flatpak-info", limit: flatpakInfoLimit).map {
      String(decoding: $0, as: UTF8.self)
    }
    if let bytes = file(directory, "cmdline", limit: 1 << 20) {
      facts.arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
      }
      if facts.arguments.last == "" { facts.arguments.removeLast() }
    }
    facts.workingDirectory = link(directory, "cwd")
    // Every read went through the directory of the process that was alive when it was opened; if
    // it is still alive now, they all describe it.
    facts.alive = pidfd.map(DaemonSyscall.isAlive(pidfd:)) ?? true
    return facts
  }

  /// Whether a path names a regular file (a script an interpreter runs).
  static func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
  }

  private static func executable(at directory: Int32) -> Executable {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    let count = readlinkat(directory, "exe", &buffer, buffer.count)
    guard count > 0 else { return .unreadable }
    if count >= buffer.count { return .truncated }
    let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return path.hasSuffix(" (deleted)") ? .deleted(path) : .path(path)
  }

  private static func link(_ directory: Int32, _ name: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    let count = readlinkat(directory, name, &buffer, buffer.count)
    guard count > 0, count < buffer.count else { return nil }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  private static func readLink(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    let count = readlink(path, &buffer, buffer.count)
    guard count > 0, count < buffer.count else { return nil }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// A file under the process's directory, at most `limit` bytes (nil when absent, unreadable or
  /// longer).
  private static func file(_ directory: Int32, _ name: String, limit: Int) -> [UInt8]? {
    let fd = openat(directory, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    defer { Glibc.close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = Glibc.read(fd, &chunk, chunk.count)
      if count < 0, Glibc.errno == EINTR { continue }
      if count <= 0 { break }
      bytes.append(contentsOf: chunk[0..<count])
      if bytes.count > limit { return nil }
    }
    return bytes
  }
}
