import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Starts child programs the way a daemon must (`locationd` launching an app, the Wi-Fi fallback
/// running `curl`): with `posix_spawn`, an empty signal mask and default handlers for the signals
/// a daemon catches or ignores, standard input, output and error as asked, and no other
/// descriptor of this process: every one from 3 up is closed in the child, including those this
/// process inherited without close-on-exec (its own are all close-on-exec).
package enum ChildSpawn {
  /// Where a child's standard descriptor comes from.
  package enum Stream: Sendable {
    /// This process's own (standard output and error only).
    case inherited
    /// `/dev/null`.
    case null
    /// A descriptor of this process, duplicated onto the child's.
    case descriptor(Int32)
  }

  /// glibc's `POSIX_SPAWN_SETSID` (hidden behind _GNU_SOURCE in Swift's Glibc module).
  static let spawnSetSID: Int32 = 0x80

  private typealias AddCloseFrom =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

  /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), looked up with `dlsym`: it is a
  /// GNU extension Swift's Glibc module does not show. Nil on an older C library, where only
  /// close-on-exec protects.
  private static let addCloseFrom: AddCloseFrom? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np")
    else { return nil }
    return unsafeBitCast(symbol, to: AddCloseFrom.self)
  }()

  /// Starts `arguments[0]` (a path) with `arguments` and `environment`.
  /// - Parameters:
  ///   - arguments: The program's path, then its arguments.
  ///   - environment: Its environment.
  ///   - input: Its standard input (`.inherited` means `/dev/null`: a daemon's input is not
  ///     the child's).
  ///   - output: Its standard output.
  ///   - error: Its standard error.
  ///   - newSession: Whether it starts a session of its own (detached from the caller's).
  /// - Returns: The child's pid, or the `errno` of the failure.
  package static func spawn(
    _ arguments: [String], environment: [String: String], input: Stream = .null,
    output: Stream = .inherited, error: Stream = .inherited, newSession: Bool = false
  ) -> Result<pid_t, SpawnError> {
    guard let program = arguments.first else { return .failure(SpawnError(code: EINVAL)) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD, SIGHUP] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(
      &attributes,
      Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | (newSession ? spawnSetSID : 0)))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (stream, target) in [(input, Int32(0)), (output, 1), (error, 2)] {
      switch stream {
      case .inherited:
        if target == 0 { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
      case .null:
        posix_spawn_file_actions_addopen(
          &actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
      case .descriptor(let descriptor):
        posix_spawn_file_actions_adddup2(&actions, descriptor, target)
      }
    }
    if let addCloseFrom { _ = addCloseFrom(&actions, 3) }

    let argv = arguments.map { strdup($0) }
    let envp = environment.map { strdup("\($0.key)=\($0.value)") }
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    var pid: pid_t = 0
    let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
      (envp + [nil]).withUnsafeBufferPointer { envpBuffer -> Int32 in
        guard let argvBase = argvBuffer.baseAddress, let envpBase = envpBuffer.baseAddress else {
          return EINVAL
        }
        return posix_spawn(
          &pid, program, &actions, &attributes, UnsafeMutablePointer(mutating: argvBase),
          UnsafeMutablePointer(mutating: envpBase))
      }
    }
    return result == 0 ? .success(pid) : .failure(SpawnError(code: result))
  }
}

/// Why a child could not start: an `errno` value.
package struct SpawnError: Error, Equatable, Sendable {
  /// The `errno` value.
  package var code: Int32

  /// The error of an `errno` value.
  package init(code: Int32) { self.code = code }
  /// `strerror`'s words for it.
  package var message: String { String(cString: strerror(code)) }
}
