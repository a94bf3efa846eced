#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Opens serial devices (and pseudo-terminals) for reading NMEA 0183 (termios(3)).
enum SerialPort {
  /// The termios speed constant for a baud rate, or nil when the rate has none.
  static func speed(for baud: Int) -> speed_t? {
    switch baud {
    case 1200: return speed_t(B1200)
    case 2400: return speed_t(B2400)
    case 4800: return speed_t(B4800)
    case 9600: return speed_t(B9600)
    case 19_200: return speed_t(B19200)
    case 38_400: return speed_t(B38400)
    case 57_600: return speed_t(B57600)
    case 115_200: return speed_t(B115200)
    case 230_400: return speed_t(B230400)
    case 460_800: return speed_t(B460800)
    case 921_600: return speed_t(B921600)
    default: return nil
    }
  }

  /// Opens `path` read-write without becoming its controlling terminal (`O_NOCTTY`),
  /// non-blocking and close-on-exec, and puts it in raw mode at `baud`.
  ///
  /// Raw mode is `cfmakeraw` (no echo, no line editing, no CR/LF translation, 8 data bits, no
  /// parity), then `CLOCAL` (ignore modem control lines: a GPS has no carrier detect) and
  /// `CREAD` (enable the receiver), with `VMIN` 1 and `VTIME` 0 (a read returns whatever has
  /// arrived; the descriptor is non-blocking and read when it polls readable). The input and
  /// output speeds are set with `cfsetispeed`/`cfsetospeed`; a pseudo-terminal accepts and ignores
  /// them. A FIFO is accepted without termios; a regular file is refused (use `replay://`).
  /// - Returns: the descriptor, or why it could not be opened.
  static func open(path: String, baud: Int) -> Result<Int32, StreamOpenError> {
    guard let speed = speed(for: baud) else {
      return .failure(StreamOpenError("no termios speed for \(baud) baud", isPermanent: true))
    }
    var fd: Int32
    repeat {
      fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
    } while fd < 0 && errno == EINTR
    guard fd >= 0 else { return .failure(.errno("open", errno)) }
    var options = termios()
    guard tcgetattr(fd, &options) == 0 else {
      let code = errno
      var status = stat()
      if fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO { return .success(fd) }
      StreamOpener.close(fd)
      if code == ENOTTY {
        return .failure(
          StreamOpenError(
            "not a terminal (a serial device is needed; use replay:// for a recorded file)",
            isPermanent: true))
      }
      return .failure(.errno("tcgetattr", code))
    }
    cfmakeraw(&options)
    options.c_cflag |= tcflag_t(CLOCAL | CREAD)
    withUnsafeMutableBytes(of: &options.c_cc) { controls in
      controls[Int(VMIN)] = 1
      controls[Int(VTIME)] = 0
    }
    guard cfsetispeed(&options, speed) == 0, cfsetospeed(&options, speed) == 0,
      tcsetattr(fd, TCSANOW, &options) == 0
    else {
      let error = StreamOpenError.errno("setting \(baud) baud raw mode", errno)
      StreamOpener.close(fd)
      return .failure(error)
    }
    return .success(fd)
  }

  /// The input and output speeds a terminal is set to, as baud rates (for tests and diagnostics).
  /// - Parameter fd: an open terminal.
  /// - Returns: the rates, or nil when `fd` is not a terminal or a speed has no known rate.
  static func speeds(of fd: Int32) -> (input: Int, output: Int)? {
    var options = termios()
    guard tcgetattr(fd, &options) == 0 else { return nil }
    let rates = [
      1200, 2400, 4800, 9600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 921_600,
    ]
    func rate(_ value: speed_t) -> Int? { rates.first { speed(for: $0) == value } }
    guard let input = rate(cfgetispeed(&options)), let output = rate(cfgetospeed(&options)) else {
      return nil
    }
    return (input, output)
  }

  /// Whether a terminal is in the raw mode `open(path:baud:)` sets (no canonical input, no echo,
  /// `CLOCAL` and `CREAD` set).
  static func isRaw(_ fd: Int32) -> Bool {
    var options = termios()
    guard tcgetattr(fd, &options) == 0 else { return false }
    let local = options.c_lflag & tcflag_t(ICANON | ECHO | ISIG)
    let control = options.c_cflag & tcflag_t(CLOCAL | CREAD)
    return local == 0 && control == tcflag_t(CLOCAL | CREAD)
  }
}
