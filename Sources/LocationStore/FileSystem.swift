#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The file-system edge of the store: directories, the database file, thread identity.
enum FileSystem {
  /// The directory part of `path` ("." when there is none, "/" for a file in the root).
  static func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let directory = path[..<slash]
    return directory.isEmpty ? "/" : String(directory)
  }

  /// Creates `path` and its missing ancestors with mode 0700 (`mkdir -p -m 0700`); existing
  /// directories are left as they are.
  static func createDirectories(_ path: String) throws(StoreError) {
    if isDirectory(path) { return }
    let parent = directory(of: path)
    if parent != path && parent != "." && parent != "/" { try createDirectories(parent) }
    if mkdir(path, 0o700) != 0 {
      let error = errno
      // Another process may have created it meanwhile.
      if error == EEXIST && isDirectory(path) { return }
      throw StoreError(
        code: error == EACCES || error == EROFS || error == EPERM ? .readOnly : .cannotOpen,
        message: "cannot create the directory \(path) (\(systemErrorDescription(error)))")
    }
  }

  /// True when `path` names a directory (following symbolic links).
  static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
  }

  /// The size of a regular file in bytes; nil when there is none at the path.
  static func size(_ path: String) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int(info.st_size)
  }

  /// True when something exists at `path` (following symbolic links).
  static func exists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
  }

  /// Checks with `access(2)` that `path` is readable and writable; throws `.readOnly` otherwise.
  static func checkWritable(_ path: String, what: String) throws(StoreError) {
    if access(path, R_OK | W_OK) != 0 {
      let error = errno
      throw StoreError(
        code: error == ENOENT ? .cannotOpen : .readOnly,
        message: "\(what) \(path) is not writable (\(systemErrorDescription(error)))")
    }
  }

  /// Creates an empty file at `path` with mode 0600 unless something exists there already, so that
  /// the database (and SQLite's journal files, which copy its mode) are private to the user.
  static func createPrivateFile(_ path: String) throws(StoreError) {
    var descriptor: Int32
    repeat {
      descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    } while descriptor < 0 && errno == EINTR
    if descriptor < 0 {
      let error = errno
      if error == EEXIST { return }
      throw StoreError(
        code: error == EACCES || error == EROFS || error == EPERM ? .readOnly : .cannotOpen,
        message: "cannot create \(path) (\(systemErrorDescription(error)))")
    }
    close(descriptor)
  }

  /// An identifier of the calling thread, unique among running threads (`pthread_self`).
  static func currentThread() -> UInt {
    #if canImport(Glibc)
      UInt(pthread_self())
    #else
      UInt(bitPattern: pthread_self())
    #endif
  }

  /// The home directory from the user database (`getpwuid_r`), for when `HOME` is unset.
  static func passwordDatabaseHome() -> String? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16_384)
    // `pw_dir` points into `buffer`: read it while the buffer is pinned.
    let home = buffer.withUnsafeMutableBufferPointer { bytes -> String? in
      guard let base = bytes.baseAddress else { return nil }
      let status = getpwuid_r(getuid(), &entry, base, bytes.count, &result)
      guard status == 0, result != nil, let directory = entry.pw_dir else { return nil }
      return String(cString: directory)
    }
    guard let home, !home.isEmpty else { return nil }
    return home
  }
}

/// `strerror`: the system's text for an `errno` value, with the number.
func systemErrorDescription(_ error: Int32) -> String {
  guard let text = strerror(error) else { return "errno \(error)" }
  return "\(String(cString: text)), errno \(error)"
}

extension FileSystem {
  /// Seconds since 1970 from the system clock (`clock_gettime(CLOCK_REALTIME)`).
  static func wallSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
  }

  /// Seconds on `CLOCK_MONOTONIC`.
  static func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
  }
}

extension FileSystem {
  /// `YYYYMMDDTHHMMSSZ` for seconds since 1970 (UTC, ISO 8601's basic format: no colons in file
  /// names).
  static func utcStamp(_ seconds: Double) -> String {
    var time = time_t(seconds.rounded(.down))
    var parts = tm()
    gmtime_r(&time, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
  }
}
