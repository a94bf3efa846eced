#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// What the kernel vouches for about a peer: its pidfd, its credentials on every message, its
// security label and groups. One function per call, `EINTR` retried (CONTRIBUTING.md, "How the
// code is written"). Option numbers are socket(7)'s and unix(7)'s on Linux (asm-generic).
extension DaemonSyscall {
  /// `SO_PASSCRED`: every `recvmsg` carries the sending process's credentials.
  static let passCredentialsOption: Int32 = 16
  /// `SO_PEERSEC`: the peer's security label (AppArmor, SELinux).
  static let peerSecurityOption: Int32 = 31
  /// `SO_PEERGROUPS`: the peer's supplementary groups when it connected (Linux 4.13).
  static let peerGroupsOption: Int32 = 59
  /// `SO_PEERPIDFD`: a pidfd of the peer process (Linux 6.5).
  static let peerPidfdOption: Int32 = 77
  /// `SCM_CREDENTIALS`.
  static let credentialsMessage: Int32 = 2

  /// Asks for the sender's credentials with every message read from `fd`.
  static func passCredentials(_ fd: Int32) throws(DaemonSystemError) {
    var on: Int32 = 1
    guard
      setsockopt(
        fd, SOL_SOCKET, passCredentialsOption, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
    else {
      throw DaemonSystemError(operation: "setsockopt SO_PASSCRED", errno: Glibc.errno)
    }
  }

  /// What one `recvmsg` gave.
  enum ReceiveResult: Equatable {
    /// This many bytes, sent by this process (nil when the kernel attached no credentials).
    case data(Int, sender: Int32?)
    /// Nothing to read now.
    case wouldBlock
    /// The peer closed its end (or the connection broke).
    case closed
  }

  /// Reads without blocking, with the sending process's pid (`SO_PASSCRED` must be on). The
  /// kernel never joins bytes of two senders in one read of a stream socket that passes
  /// credentials (unix(7)), so the pid is that of every byte read. Descriptors a peer passes are
  /// closed by the kernel: the control buffer has room for the credentials only.
  static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> ReceiveResult {
    // cmsghdr (size_t length, int level, int type) then a ucred (three 32-bit integers), each
    // padded to 8 bytes: CMSG_SPACE(12) is 32 on 64-bit Linux.
    let headerSize = MemoryLayout<Int>.size + 8
    var control = [UInt8](repeating: 0, count: 64)
    while true {
      var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
      let count = control.withUnsafeMutableBytes { controlBytes -> Int in
        withUnsafeMutablePointer(to: &vector) { vectorPointer in
          var message = msghdr()
          message.msg_iov = vectorPointer
          message.msg_iovlen = 1
          message.msg_control = controlBytes.baseAddress
          message.msg_controllen = controlBytes.count
          return recvmsg(fd, &message, Int32(MSG_DONTWAIT) | Int32(MSG_CMSG_CLOEXEC))
        }
      }
      if count > 0 {
        var sender: Int32?
        control.withUnsafeBytes { raw in
          let length = raw.load(as: Int.self)
          let level = raw.load(fromByteOffset: MemoryLayout<Int>.size, as: Int32.self)
          let type = raw.load(fromByteOffset: MemoryLayout<Int>.size + 4, as: Int32.self)
          if length >= headerSize + 12, level == SOL_SOCKET, type == credentialsMessage {
            sender = raw.load(fromByteOffset: headerSize, as: Int32.self)
          }
        }
        return .data(count, sender: sender)
      }
      if count == 0 { return .closed }
      switch Glibc.errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .wouldBlock
      default: return .closed  // an errno
      }
    }
  }

  /// A pidfd of the peer: `SO_PEERPIDFD` where the kernel has it, else `pidfd_open` of the pid it
  /// reported (then the pid could in principle have been reused between connect and this call;
  /// the identity is checked against the process's credentials at `hello` as well).
  static func peerPidfd(_ fd: Int32, pid: Int32) -> Int32? {
    var pidfd: Int32 = -1
    var length = socklen_t(MemoryLayout<Int32>.size)
    if getsockopt(fd, SOL_SOCKET, peerPidfdOption, &pidfd, &length) == 0, pidfd >= 0 {
      _ = fcntl(pidfd, F_SETFD, FD_CLOEXEC)
      return movedHigh(pidfd)
    }
    guard let pidfdOpen else { return nil }
    let opened = pidfdOpen(pid, 0)
    guard opened >= 0 else { return nil }
    _ = fcntl(opened, F_SETFD, FD_CLOEXEC)
    return movedHigh(opened)
  }

  private typealias PidfdOpen = @convention(c) (Int32, UInt32) -> Int32

  /// `pidfd_open(2)`, looked up with `dlsym` (glibc 2.36; Swift's Glibc module does not show
  /// it); nil where it is missing.
  private static let pidfdOpen: PidfdOpen? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "pidfd_open") else { return nil }
    return unsafeBitCast(symbol, to: PidfdOpen.self)
  }()

  /// Whether the process behind a pidfd is still running (a pidfd becomes readable when it exits).
  static func isAlive(pidfd: Int32) -> Bool {
    var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
    while true {
      let ready = poll(&entry, 1, 0)
      if ready < 0, Glibc.errno == EINTR { continue }
      return ready == 0
    }
  }

  /// The peer's security label (`SO_PEERSEC`), nil when no security module labels it.
  static func peerSecurityLabel(_ fd: Int32) -> String? {
    var buffer = [UInt8](repeating: 0, count: 4096)
    var length = socklen_t(buffer.count)
    guard getsockopt(fd, SOL_SOCKET, peerSecurityOption, &buffer, &length) == 0, length > 0 else {
      return nil
    }
    var bytes = Array(buffer[0..<Int(length)])
    while bytes.last == 0 { bytes.removeLast() }
    return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
  }

  /// The peer's supplementary groups when it connected (`SO_PEERGROUPS`); empty when unknown.
  static func peerGroups(_ fd: Int32) -> [UInt32] {
    var groups = [UInt32](repeating: 0, count: 256)
    var length = socklen_t(groups.count * MemoryLayout<UInt32>.size)
    guard getsockopt(fd, SOL_SOCKET, peerGroupsOption, &groups, &length) == 0 else { return [] }
    return Array(groups.prefix(Int(length) / MemoryLayout<UInt32>.size))
  }
}
