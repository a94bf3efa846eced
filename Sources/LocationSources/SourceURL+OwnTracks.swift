/// Another device's positions, published in OwnTracks' JSON format on an MQTT broker (issue 18):
/// `owntracks+mqtt://broker[:1883]/owntracks/alice/phone` or, over TLS,
/// `owntracks+mqtts://broker[:8883]/owntracks/alice/phone?ca=/etc/ssl/broker-ca.pem`.
///
/// Options: `ca` (the certificate authority's PEM file; `mqtts` only, else the system's
/// `/etc/ssl/certs/ca-certificates.crt`), `credentials` (a file whose first line is
/// `user:password`: a password is never part of a URL, which other programs may see),
/// `max-age` (seconds: a position older than this when it arrives is refused; default 600).
/// The topic is one device's: MQTT's wildcards `+` and `#` are refused.
package struct OwnTracksSubscription: Sendable, Equatable {
  /// The broker's host.
  package var host: String
  /// The broker's port.
  package var port: Int
  /// Whether MQTT runs over TLS.
  package var tls: Bool
  /// The device's topic (`owntracks/USER/DEVICE`).
  package var topic: String
  /// The certificate authority's file, for TLS.
  package var caFile: String?
  /// The file holding `user:password`, if the broker wants credentials.
  package var credentialsFile: String?
  /// The oldest a position may be when it arrives, seconds.
  package var maximumAge: Double

  /// The default `max-age`, seconds.
  package static let defaultMaximumAge = 600.0
  /// Where Debian keeps the system's certificate authorities.
  package static let systemAuthorities = "/etc/ssl/certs/ca-certificates.crt"

  /// Creates a subscription.
  package init(
    host: String, port: Int, tls: Bool, topic: String, caFile: String? = nil,
    credentialsFile: String? = nil, maximumAge: Double = defaultMaximumAge
  ) {
    self.host = host
    self.port = port
    self.tls = tls
    self.topic = topic
    self.caFile = caFile
    self.credentialsFile = credentialsFile
    self.maximumAge = maximumAge
  }

  /// The URL in its canonical text form.
  package var text: String {
    var items: [String] = []
    if let caFile { items.append("ca=" + SourceURL.percentEncoded(caFile)) }
    if let credentialsFile {
      items.append("credentials=" + SourceURL.percentEncoded(credentialsFile))
    }
    if maximumAge != Self.defaultMaximumAge {
      items.append(
        "max-age=\(maximumAge.rounded() == maximumAge ? String(Int(maximumAge)) : String(maximumAge))"
      )
    }
    let authority = host.contains(":") ? "[\(host)]" : host
    return "owntracks+\(tls ? "mqtts" : "mqtt")://\(authority):\(port)/\(topic)"
      + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
  }

  /// Parses the part after `owntracks+mqtt://` or `owntracks+mqtts://`.
  static func parse(tls: Bool, path: String, query: [(key: String, value: String)])
    throws(SourceError) -> OwnTracksSubscription
  {
    let scheme = tls ? "owntracks+mqtts" : "owntracks+mqtt"
    guard let slash = path.firstIndex(of: "/") else {
      throw SourceError(
        .configuration,
        "\(scheme):// needs a broker and a topic, as in \(scheme)://broker/owntracks/alice/phone",
        isPermanent: true)
    }
    let topic = String(path[path.index(after: slash)...])
    guard !topic.isEmpty, !topic.contains("+"), !topic.contains("#"),
      topic.utf8.count <= 1024, !topic.contains("\0")
    else {
      throw SourceError(
        .configuration,
        "\(scheme)://: '\(topic)' is not one device's topic (no + or #), as in owntracks/alice/phone",
        isPermanent: true)
    }
    let (host, port) = try SourceURL.hostPort(
      String(path[..<slash]), defaultPort: tls ? 8883 : 1883, scheme: scheme)
    var subscription = OwnTracksSubscription(host: host, port: port, tls: tls, topic: topic)
    for (key, value) in query {
      switch key {
      case "ca":
        guard tls, value.hasPrefix("/") else {
          throw SourceError(
            .configuration, "\(scheme)://: ca= takes an absolute path, with mqtts only",
            isPermanent: true)
        }
        subscription.caFile = value
      case "credentials":
        guard value.hasPrefix("/") else {
          throw SourceError(
            .configuration, "\(scheme)://: credentials= takes an absolute path",
            isPermanent: true)
        }
        subscription.credentialsFile = value
      case "max-age":
        guard let seconds = Double(value), seconds.isFinite, seconds > 0 else {
          throw SourceError(
            .configuration, "\(scheme)://: max-age must be a number of seconds, not '\(value)'",
            isPermanent: true)
        }
        subscription.maximumAge = seconds
      default:
        throw SourceError(
          .configuration,
          "\(scheme):// has no option '\(key)' (options: ca, credentials, max-age)",
          isPermanent: true)
      }
    }
    return subscription
  }
}
