import Foundation

/// A pseudo-terminal standing for a receiver's serial line: the bench writes epochs to the master
/// side; the consumer (gpsd, or our `nmea://` source) opens the slave path as it would a device.
///
/// The bench keeps the slave open in raw mode with no echo, so that bytes written before the
/// consumer opens it neither echo back into the master nor wait for a line discipline, and the
/// pseudo-terminal lives across the consumer's reopenings.
final class LatencyBenchPTY {
  let master: Int32
  let slave: Int32
  let path: String

  // Glibc declares posix_openpt, grantpt, unlockpt and ptsname_r only for _XOPEN_SOURCE, which
  // Swift's Glibc module does not define: they are looked up at run time instead.
  private typealias OpenPT = @convention(c) (Int32) -> Int32
  private typealias OnFD = @convention(c) (Int32) -> Int32
  private typealias NameR = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32

  private static func function<T>(_ name: String, as type: T.Type) -> T? {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
    return unsafeBitCast(symbol, to: type)
  }

  init() throws {
    guard let openPT = Self.function("posix_openpt", as: OpenPT.self),
      let grant = Self.function("grantpt", as: OnFD.self),
      let unlock = Self.function("unlockpt", as: OnFD.self),
      let nameOf = Self.function("ptsname_r", as: NameR.self)
    else { throw DaemonBenchSystem.Failure(description: "no posix_openpt in the C library") }
    master = openPT(O_RDWR | O_NOCTTY | O_CLOEXEC)
    var name = [CChar](repeating: 0, count: 128)
    guard master >= 0, grant(master) == 0, unlock(master) == 0,
      nameOf(master, &name, name.count) == 0
    else {
      throw DaemonBenchSystem.Failure(
        description: "cannot open a pseudo-terminal: \(String(cString: strerror(errno)))")
    }
    path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard slave >= 0 else {
      close(master)
      throw DaemonBenchSystem.Failure(description: "cannot open \(path)")
    }
    var settings = termios()
    tcgetattr(slave, &settings)
    cfmakeraw(&settings)
    cfsetispeed(&settings, speed_t(B115200))
    cfsetospeed(&settings, speed_t(B115200))
    tcsetattr(slave, TCSANOW, &settings)
  }

  deinit {
    close(master)
    close(slave)
  }

  /// Writes all of `bytes` to the master side.
  func write(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes {
        Glibc.write(master, $0.baseAddress.map { $0 + offset }, bytes.count - offset)
      }
      if written < 0 {
        if errno == EINTR { continue }
        return
      }
      offset += written
    }
  }
}
