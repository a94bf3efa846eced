import Foundation
import LocationSources

/// The `[publish]` section of `locationd.conf` (issue 18): the device's own positions published
/// over MQTT in OwnTracks' format, store-and-forward. Off unless the section names a broker.
///
/// ```
/// [publish]
/// broker = mqtts://broker.example:8883      # or mqtt://host[:1883]
/// topic = owntracks/pi/car                  # owntracks/USER/DEVICE
/// tracker-id = pc                           # OwnTracks' tid (default: the device's last two letters)
/// credentials-file = /etc/corelocation/mqtt # user:password; owned by the daemon's user, mode 0600
/// ca-file = /etc/ssl/certs/ca-certificates.crt      # mqtts (this is the default)
/// certificate-file = /etc/corelocation/client.pem  # a client certificate, if the broker asks
/// key-file = /etc/corelocation/client.key
/// minimum-interval = 60                     # seconds between two positions (default 60)
/// minimum-distance = 100                    # metres between two positions (default 100)
/// qos = 1                                   # 1 (default) or 2: acknowledged, so store-and-forward works
/// approximate = no                          # yes: publish the approximate (snapped) location only
/// outbox-limit = 100000                     # messages kept while the broker is away (default)
/// ```
package struct PublishSettings: Sendable, Equatable {
  /// The broker's host.
  package var host = ""
  /// The broker's port.
  package var port = 1883
  /// MQTT over TLS.
  package var tls = false
  /// The device's topic.
  package var topic = ""
  /// OwnTracks' `tid`.
  package var trackerID: String?
  /// The file holding `user:password`.
  package var credentialsFile: String?
  /// The certificate authority's file (TLS).
  package var caFile: String?
  /// The client certificate and key (TLS).
  package var certificateFile: String?
  package var keyFile: String?
  /// Seconds between two published positions.
  package var minimumInterval = 60.0
  /// Metres between two published positions.
  package var minimumDistance = 100.0
  /// MQTT QoS of the messages (1 or 2).
  package var qos: Int32 = 1
  /// Publish the approximate location only.
  package var approximate = false
  /// The most messages kept in the outbox.
  package var outboxLimit = 100_000

  /// Settings with the defaults (no broker: set `host` and `topic`).
  package init() {}

  /// Applies one `key = value` of the section.
  mutating func apply(key: String, value: String, place: String)
    throws(DaemonConfigurationError)
  {
    func fail(_ text: String) -> DaemonConfigurationError {
      DaemonConfigurationError(message: "\(place): [publish] \(key): \(text)")
    }
    func path() throws(DaemonConfigurationError) -> String {
      guard value.hasPrefix("/") else { throw fail("an absolute path") }
      return value
    }
    func number(_ range: ClosedRange<Double>) throws(DaemonConfigurationError) -> Double {
      guard let number = Double(value), range.contains(number) else {
        throw fail("a number from \(range.lowerBound) to \(range.upperBound)")
      }
      return number
    }
    switch key {
    case "broker":
      let lower = value.lowercased()
      let tls = lower.hasPrefix("mqtts://")
      guard tls || lower.hasPrefix("mqtt://") else { throw fail("mqtt://HOST[:PORT] or mqtts://") }
      let authority = String(value.dropFirst(tls ? 8 : 7)).trimmingCharacters(
        in: CharacterSet(charactersIn: "/"))
      guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@") else {
        throw fail("mqtt://HOST[:PORT] (credentials go in credentials-file)")
      }
      do {
        (host, port) = try SourceURL.hostPort(
          authority, defaultPort: tls ? 8883 : 1883, scheme: tls ? "mqtts" : "mqtt")
      } catch {
        throw fail(error.message)
      }
      self.tls = tls
    case "topic":
      guard !value.contains("+"), !value.contains("#"), value.utf8.count <= 1024 else {
        throw fail("one topic, without + or #")
      }
      topic = value
    case "tracker-id":
      guard (1...2).contains(value.count), value.allSatisfy({ $0.isLetter || $0.isNumber }) else {
        throw fail("one or two letters or digits")
      }
      trackerID = value
    case "credentials-file": credentialsFile = try path()
    case "ca-file": caFile = try path()
    case "certificate-file": certificateFile = try path()
    case "key-file": keyFile = try path()
    case "minimum-interval": minimumInterval = try number(0...86_400)
    case "minimum-distance": minimumDistance = try number(0...1_000_000)
    case "qos":
      guard value == "1" || value == "2" else {
        throw fail("1 or 2 (QoS 0 is never acknowledged, so nothing could be kept until it is)")
      }
      qos = Int32(value) ?? 1
    case "approximate":
      approximate = try DaemonConfiguration.yesOrNo(value, place: place, key: "[publish] \(key)")
    case "outbox-limit": outboxLimit = Int(try number(1...100_000_000))
    default:  // any other key
      throw DaemonConfigurationError(
        message: "\(place): unknown key \(key) in [publish] (broker, topic, tracker-id, "
          + "credentials-file, ca-file, certificate-file, key-file, minimum-interval, "
          + "minimum-distance, qos, approximate, outbox-limit)")
    }
  }

  /// Checks the section as a whole once the file is read.
  func validated(path: String) throws(DaemonConfigurationError) -> PublishSettings {
    guard !host.isEmpty else {
      throw DaemonConfigurationError(message: "\(path): [publish] needs a broker")
    }
    guard !topic.isEmpty else {
      throw DaemonConfigurationError(
        message: "\(path): [publish] needs a topic (owntracks/USER/DEVICE)")
    }
    guard (certificateFile == nil) == (keyFile == nil), certificateFile == nil || tls else {
      throw DaemonConfigurationError(
        message: "\(path): [publish] certificate-file and key-file go together, with mqtts://")
    }
    return self
  }

  /// OwnTracks' `tid`: the one configured, else the last two letters or digits of the topic.
  package var effectiveTrackerID: String {
    if let trackerID { return trackerID }
    let letters = topic.filter { $0.isLetter || $0.isNumber }
    return String(letters.suffix(2))
  }

  /// The credentials file read: `user:password` on its first line. It must belong to the daemon's
  /// user (or root) and be readable by nobody else.
  func credentials(daemonUID: uid_t) throws(DaemonConfigurationError) -> (String, String)? {
    guard let path = credentialsFile else { return nil }
    var info = stat()
    guard stat(path, &info) == 0 else {
      throw DaemonConfigurationError(
        message: "[publish] credentials-file \(path): \(String(cString: strerror(errno)))")
    }
    guard info.st_uid == daemonUID || info.st_uid == 0, info.st_mode & 0o077 == 0 else {
      throw DaemonConfigurationError(
        message:
          "[publish] credentials-file \(path) must belong to the daemon's user and be readable "
          + "by nobody else (chmod 600)")
    }
    guard let text = try? String(contentsOfFile: path, encoding: .utf8),
      let line = text.split(whereSeparator: \.isNewline).first,
      let colon = line.firstIndex(of: ":")
    else {
      throw DaemonConfigurationError(
        message: "[publish] credentials-file \(path): its first line is not user:password")
    }
    return (String(line[..<colon]), String(line[line.index(after: colon)...]))
  }
}
