import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A simulated NMEA receiver on a TCP port of 127.0.0.1 (a daemon's `nmea+tcp://127.0.0.1:PORT`
/// source): each epoch it sends is an RMC and a GGA sentence. The test accepts the daemon's
/// connection (`accept(timeout:)`) and sends epochs on a fixed day (`sendEpoch()`), or feeds the
/// current time at a position (`feed(latitude:longitude:)`, which takes a waiting connection by
/// itself), and hangs up to make the source fail (`hangUp()`).
package final class NMEAFeed: Sendable {
  private struct State {
    var connection: Int32?
    var second = 0
    var lastFed = -Double.infinity
  }

  /// The port it listens on.
  package let port: Int
  private let listener: Int32
  private let state = Mutex(State())

  /// Listens on a free port.
  package init() throws { (listener, port) = try Loopback.listening() }

  deinit {
    if let connection = state.withLock({ $0.connection }) { close(connection) }
    close(listener)
  }

  /// Waits (at most `timeout` seconds) for the daemon's next connection and makes it the current
  /// one.
  package func accept(timeout: Double = 30) throws {
    let deadline = monotonicSeconds() + timeout
    while !acceptWaiting(milliseconds: Int32(max(0, deadline - monotonicSeconds()) * 1000) + 1) {
      guard monotonicSeconds() < deadline else {
        throw TestFailure("the daemon did not connect to the feed")
      }
    }
  }

  /// Takes a connection that arrives within `milliseconds` (replacing the current one).
  /// - Returns: whether one was taken.
  private func acceptWaiting(milliseconds: Int32) -> Bool {
    var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
    guard poll(&descriptor, 1, milliseconds) > 0 else { return false }
    let fd = Glibc.accept(listener, nil, nil)
    guard fd >= 0 else { return false }
    state.withLock { state in
      if let old = state.connection { close(old) }
      state.connection = fd
    }
    return true
  }

  /// Whether the daemon's source is connected (a waiting connection is taken first).
  package var isConnected: Bool {
    while acceptWaiting(milliseconds: 0) {}
    return state.withLock { $0.connection != nil }
  }

  /// Closes the current connection (the source sees its server go away).
  package func hangUp() {
    state.withLock { state in
      if let connection = state.connection { close(connection) }
      state.connection = nil
    }
  }

  /// Sends one epoch at 52° N 5° E, the next second of 2026-11-29 from 10:00:00; the previous
  /// epoch is complete when this one's first sentence arrives.
  package func sendEpoch() {
    let second = state.withLock {
      $0.second += 1
      return $0.second
    }
    let time = String(
      format: "%02d%02d%02d.00", 10 + second / 3600, (second / 60) % 60, second % 60)
    send(Self.epoch(time: time, date: "291126", latitude: 52, longitude: 5))
  }

  /// Sends one epoch at this position, stamped with the current time (at most 20 per second;
  /// extra calls do nothing). A waiting connection is taken first.
  package func feed(latitude: Double, longitude: Double) {
    guard isConnected else { return }
    let now = monotonicSeconds()
    let due = state.withLock { state -> Bool in
      guard now - state.lastFed >= 0.05 else { return false }
      state.lastFed = now
      return true
    }
    guard due else { return }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
    let parts = calendar.dateComponents(
      [.year, .month, .day, .hour, .minute, .second, .nanosecond], from: Date())
    let time = String(
      format: "%02d%02d%02d.%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0,
      (parts.nanosecond ?? 0) / 10_000_000)
    let date = String(
      format: "%02d%02d%02d", parts.day ?? 1, parts.month ?? 1, (parts.year ?? 2026) % 100)
    send(Self.epoch(time: time, date: date, latitude: latitude, longitude: longitude))
  }

  /// Sends one sentence (its body between `$` and `*`; the checksum and line end are added), for
  /// sentences an epoch does not have (a compass's HDG).
  package func sendSentence(_ body: String) {
    let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
    send("$" + body + "*" + String(format: "%02X", sum) + "\r\n")
  }

  /// Stops: closes the connection and the listener.
  package func stop() {
    hangUp()
    shutdown(listener, Int32(SHUT_RDWR))
  }

  private func send(_ text: String) {
    guard let fd = state.withLock({ $0.connection }) else { return }
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  /// An RMC and a GGA sentence at `time` (`hhmmss.ss`) on `date` (`ddmmyy`).
  static func epoch(time: String, date: String, latitude: Double, longitude: Double) -> String {
    let lat = angle(latitude, degreeDigits: 2)
    let lon = angle(longitude, degreeDigits: 3)
    let ns = latitude >= 0 ? "N" : "S"
    let ew = longitude >= 0 ? "E" : "W"
    return sentence("GPRMC,\(time),A,\(lat),\(ns),\(lon),\(ew),0.0,0.0,\(date),,,A")
      + sentence("GPGGA,\(time),\(lat),\(ns),\(lon),\(ew),1,08,0.9,10.0,M,46.9,M,,")
  }

  /// `ddmm.mmmm` (or `dddmm.mmmm`) of an absolute angle.
  static func angle(_ value: Double, degreeDigits: Int) -> String {
    let absolute = abs(value)
    let degrees = Int(absolute)
    let minutes = (absolute - Double(degrees)) * 60
    return String(format: "%0\(degreeDigits)d%07.4f", degrees, minutes)
  }

  /// `$BODY*CS\r\n` with the NMEA 0183 checksum (XOR of the body's bytes).
  static func sentence(_ body: String) -> String {
    let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
    return "$\(body)*\(String(format: "%02X", checksum))\r\n"
  }
}
