import LocationModel

/// The request and response of Ichnaea's geolocate API (`POST /v1/geolocate`), the protocol the
/// old Mozilla Location Service spoke and its successors (BeaconDB and other Ichnaea instances)
/// speak; pure, without I/O.
///
/// Checked against Ichnaea's documentation, `docs/api/geolocate.rst` in github.com/mozilla/ichnaea
/// (published at ichnaea.readthedocs.io, "Geolocate"):
/// - The request is a JSON object; every field is optional. We send `considerIp: false` (no
///   position from the sender's IP address) and `wifiAccessPoints`, each with `macAddress`,
///   `signalStrength` (dBm) and, when known, `frequency` (MHz, Ichnaea's addition to Google's
///   API). Never an SSID.
/// - "Hidden WiFi networks and those whose SSID (clear text name) ends with the string `_nomap`
///   must NOT be used for privacy reasons. It is the responsibility of the client code to filter
///   these out": such access points are left out.
/// - A Wi-Fi position needs at least two access points (a privacy rule of the service): a scan
///   with fewer usable ones has no request.
/// - A success is `{"location": {"lat": …, "lng": …}, "accuracy": …}`, possibly with `fallback`
///   (`ipf`, `lacf`) when a coarser source answered. The accuracy is in metres, the radius of a
///   circle that holds the true position "with a 95th percentile confidence value".
/// - No position is HTTP 404 with `{"error": {"errors": [{"domain": "geolocation", "reason":
///   "notFound", "message": "Not found"}], "code": 404, "message": "Not found"}}`; other errors
///   (an invalid key, a rate limit) have the same shape with another code and message.
///
/// Our rules: at most ``maximumAccessPoints`` access points, the loudest first (ties by BSSID);
/// signal strengths rounded to whole dBm.
package enum IchnaeaGeolocate {
  /// The most access points a request holds.
  package static let maximumAccessPoints = 50
  /// The fewest usable access points the service locates with.
  package static let minimumAccessPoints = 2

  /// A position the service answered with.
  package struct Location: Sendable, Equatable {
    /// Latitude, degrees.
    package var latitude: Double
    /// Longitude, degrees.
    package var longitude: Double
    /// The service's accuracy: the radius of 95 % confidence, metres.
    package var accuracy: Double
    /// The coarser source the service fell back to (`ipf`, `lacf`), if it says.
    package var fallback: String?

    /// Creates a location.
    package init(latitude: Double, longitude: Double, accuracy: Double, fallback: String? = nil) {
      self.latitude = latitude
      self.longitude = longitude
      self.accuracy = accuracy
      self.fallback = fallback
    }

    /// A fix of this location: quality `.network`, the horizontal accuracy converted from the
    /// service's 95 % radius to the 68 % radius of `Fix` (`GPSDTPV.horizontal95To68`, the same
    /// circular normal error as gpsd's `eph`), altitude, speed and course unknown.
    /// - Parameters:
    ///   - time: the time of the scan it was asked for, seconds since 1970.
    ///   - source: the fix's source (the service's URL).
    package func fix(time: Double, source: String) -> Fix {
      Fix(
        latitude: latitude, longitude: longitude,
        horizontalAccuracy: accuracy * GPSDTPV.horizontal95To68, time: time, quality: .network,
        source: source)
    }
  }

  /// What an answer says.
  package enum Answer: Sendable, Equatable {
    /// A position.
    case located(Location)
    /// An error object: its HTTP-like `code` (404 when no position was found) and message.
    case error(code: Int?, message: String)
  }

  /// The access points of a scan a request may hold: not hidden, not opted out with `_nomap`,
  /// the loudest first, at most ``maximumAccessPoints``.
  package static func accessPoints(_ scan: WifiScan) -> [AccessPointReading] {
    let usable = scan.readings.filter { !$0.ssid.isEmpty && !$0.optsOut }
    let sorted = usable.sorted {
      $0.signal != $1.signal ? $0.signal > $1.signal : $0.bssid < $1.bssid
    }
    var seen = Set<UInt64>()
    return Array(sorted.filter { seen.insert($0.bssid).inserted }.prefix(maximumAccessPoints))
  }

  /// The request body for a scan (compact JSON, UTF-8), or nil when fewer than
  /// ``minimumAccessPoints`` of its access points may be sent.
  package static func request(_ scan: WifiScan) -> [UInt8]? {
    let points = accessPoints(scan)
    guard points.count >= minimumAccessPoints else { return nil }
    let entries = points.map { point -> String in
      var entry = "{\"macAddress\":\"\(macAddress(point.bssid))\""
      if point.signal.isFinite {
        let dBm = Int(max(-200, min(0, point.signal)).rounded())
        entry += ",\"signalStrength\":\(dBm)"
      }
      if point.frequency > 0 { entry += ",\"frequency\":\(point.frequency)" }
      return entry + "}"
    }
    return Array(
      "{\"considerIp\":false,\"wifiAccessPoints\":[\(entries.joined(separator: ","))]}".utf8)
  }

  /// The lower-case `01:23:45:67:89:ab` form of a BSSID, as Ichnaea's examples write it.
  package static func macAddress(_ bssid: UInt64) -> String {
    AccessPointReading.text(bssid: bssid).lowercased()
  }

  /// Reads an answer: a success or an error object, whatever the HTTP status was.
  /// - Parameter bytes: the response body.
  /// - Throws: `FormatError` `.malformed` for text that is not JSON or neither shape,
  ///   `.invalidValue` for a position out of range or an accuracy that is not a finite number ≥ 0.
  package static func answer(_ bytes: [UInt8]) throws(FormatError) -> Answer {
    let value: JSONValue
    do throws(JSONParser.Failure) {
      value = try JSONParser.parse(bytes)
    } catch {
      throw FormatError(.malformed, "the answer is not JSON: \(error.reason)")
    }
    guard case .object(let members) = value else {
      throw FormatError(.malformed, "the answer is not a JSON object")
    }
    if case .object(let error)? = members["error"] {
      var code: Int?
      if case .number(let number)? = error["code"], number.isFinite, abs(number) < 1e6 {
        code = Int(number)
      }
      var message = "no message"
      if case .string(let text)? = error["message"] { message = text }
      return .error(code: code, message: message)
    }
    guard case .object(let location)? = members["location"],
      case .number(let latitude)? = location["lat"], case .number(let longitude)? = location["lng"]
    else { throw FormatError(.missingField, "the answer has neither a location nor an error") }
    guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude),
      (-180...180).contains(longitude)
    else { throw FormatError(.invalidValue, "the answer's position is out of range") }
    guard case .number(let accuracy)? = members["accuracy"], accuracy.isFinite, accuracy >= 0
    else { throw FormatError(.invalidValue, "the answer has no accuracy of metres ≥ 0") }
    var fallback: String?
    if case .string(let text)? = members["fallback"] { fallback = text }
    return .located(
      Location(latitude: latitude, longitude: longitude, accuracy: accuracy, fallback: fallback))
  }
}
