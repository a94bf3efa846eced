import Dispatch
import Foundation
import Synchronization

/// Finding sources when none is configured (`docs/architecture.md`, "Sources"): gpsd on localhost if it
/// answers, GeoClue if its name is on the system bus, `/etc/geolocation` if it exists. Everything
/// found is offered to the arbiter, which runs the cheapest that meets the demand.
package enum SourceDiscovery {
  /// The discovered sources, in the order: gpsd, GeoClue, static file, the iio-sensor-proxy
  /// compass (for headings only), BlueZ with a powered adapter (for beacons only; it scans
  /// only while something ranges beacons or watches a beacon region) and NetworkManager (Wi-Fi
  /// positions from the access points this machine learned).
  /// The candidates are asked at the same time (each probe waits on a socket or a bus: gpsd up to
  /// 250 ms, a hung bus service up to 1 s), so discovery takes as long as the slowest, not their
  /// sum.
  /// - Parameter probe: whether a candidate answers now (injected by tests).
  package static func discover(probe: @Sendable (SourceURL) -> Bool = isAvailable) -> [SourceURL] {
    let candidates: [SourceURL] = [
      .gpsd(.tcp(host: "127.0.0.1", port: 2947)), .geoclue, .staticFile(path: "/etc/geolocation"),
      .iioCompass, .bluez(adapter: nil), .wifi(interface: nil),
    ]
    let answers = Mutex([Bool](repeating: false, count: candidates.count))
    DispatchQueue.concurrentPerform(iterations: candidates.count) { index in
      let available = probe(candidates[index])
      answers.withLock { $0[index] = available }
    }
    let available = answers.withLock { $0 }
    return candidates.indices.filter { available[$0] }.map { candidates[$0] }
  }

  /// Whether a source answers now: gpsd accepts a TCP connection within 250 ms; GeoClue's name has
  /// an owner on the system bus; the static file is readable. Other kinds: false.
  package static func isAvailable(_ url: SourceURL) -> Bool {
    switch url {
    case .gpsd(.tcp(let host, let port)):
      return tcpAnswers(host: host, port: port, timeoutMilliseconds: 250)
    case .gpsd(.unix(let path)):
      return access(path, W_OK) == 0
    case .geoclue:
      return GeoClueSource.isOnSystemBus()
    case .staticFile(let path):
      return access(path, R_OK) == 0
    case .iioCompass:
      return IIOCompassSource.isOnSystemBus()
    case .bluez(let adapter):
      return BlueZSource.adapterAvailable(adapter: adapter)
    case .wifi:
      return WifiSource.isOnSystemBus()
    case .replay, .nmeaSerial, .nmeaTCP, .beaconReplay, .ownTracks:
      return false
    }
  }

  /// How long an answer about a Bluetooth adapter is fresh, seconds.
  static let adapterAnswerLifetime = 2.0
  /// The last answer per adapter name, and whether a refresh is under way.
  private static let adapterAnswers = Mutex<
    [String: (time: Double, available: Bool, refreshing: Bool)]
  >([:])
  private static let adapterQueue = DispatchQueue(label: "corelocation.bluez.availability")

  /// Whether a configured source hears beacons now (`isRangingAvailable()`): a BlueZ adapter
  /// present and powered, or a recording that can be read.
  ///
  /// Asking BlueZ is a D-Bus call (up to 1 s when it hangs), and `locationd` asks at every app's
  /// `hello` on its I/O thread: only the very first question for an adapter waits for the answer;
  /// after it, the last answer is returned at once and, when older than
  /// ``adapterAnswerLifetime``, refreshed on a queue of its own, so no peer can make the I/O thread
  /// wait on BlueZ by saying `hello` again and again.
  package static func hearsBeacons(_ url: SourceURL) -> Bool {
    switch url {
    case .bluez(let adapter):
      let key = adapter ?? ""
      let now = LiveClock.monotonicSeconds()
      let known = adapterAnswers.withLock { answers -> Bool? in
        guard let known = answers[key] else { return nil }
        if now - known.time >= adapterAnswerLifetime, !known.refreshing {
          answers[key]?.refreshing = true
          adapterQueue.async {
            let available = BlueZSource.adapterAvailable(adapter: adapter)
            adapterAnswers.withLock {
              $0[key] = (LiveClock.monotonicSeconds(), available, false)
            }
          }
        }
        return known.available
      }
      if let known { return known }
      let available = BlueZSource.adapterAvailable(adapter: adapter)
      adapterAnswers.withLock { $0[key] = (now, available, false) }
      return available
    case .beaconReplay(let path, _):
      return access(path, R_OK) == 0
    case .gpsd, .nmeaSerial, .nmeaTCP, .geoclue, .iioCompass, .replay, .staticFile, .wifi,
      .ownTracks:
      return false
    }
  }

  /// Whether a TCP connection to an IPv4 or IPv6 literal (or `localhost`) succeeds in time.
  static func tcpAnswers(host: String, port: Int, timeoutMilliseconds: Int32) -> Bool {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
      return false
    }
    defer { freeaddrinfo(list) }
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let info = entry {
      defer { entry = info.pointee.ai_next }
      let fd = socket(
        info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), 0)
      guard fd >= 0 else { continue }
      defer { close(fd) }
      if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return true }
      guard errno == EINPROGRESS else { continue }
      var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
      guard poll(&poller, 1, timeoutMilliseconds) == 1 else { continue }
      var error: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0 { return true }
    }
    return false
  }
}
