import LocationFormats

/// What the daemon knows of Wi-Fi (`locationctl wifi`): the access points it learned from its own
/// fixes, and whether it learns.
package struct DaemonWifiStatus: Sendable, Equatable {
  /// Whether learning is on (`wifi-learning` in `locationd.conf`).
  package var learning: Bool
  /// Access points known.
  package var known: Int
  /// Of them, those recognised as mobile (never used for positioning).
  package var mobile: Int
  /// The newest time an access point was heard with a good fix, seconds since 1970; nil when none.
  package var lastLearned: Double?
  /// How many were forgotten, when the request forgot them.
  package var forgotten: Int?
  /// How many imported access points were added, for `wifiImport` (known ones are kept).
  package var imported: Int?

  /// Creates a status.
  package init(
    learning: Bool, known: Int, mobile: Int, lastLearned: Double? = nil, forgotten: Int? = nil,
    imported: Int? = nil
  ) {
    self.learning = learning
    self.known = known
    self.mobile = mobile
    self.lastLearned = lastLearned
    self.forgotten = forgotten
    self.imported = imported
  }
}

extension DaemonWifiStatus: WireObject {
  package static var wireBlank: DaemonWifiStatus {
    DaemonWifiStatus(learning: false, known: 0, mobile: 0)
  }

  /// `learning`, `known`, `mobile`, and `lastLearned` and `forgotten` when known.
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("learning", &learning, default: false)
    try c.field("known", &known, default: 0)
    try c.field("mobile", &mobile, default: 0)
    try c.omittable("lastLearned", &lastLearned)
    try c.omittable("forgotten", &forgotten)
    try c.omittable("imported", &imported)
  }
}

/// One access point of an imported database (`locationctl wifi import`, an Ichnaea-format CSV):
/// where it is, how far it is heard, how many observations it rests on.
package struct DaemonImportedAccessPoint: Sendable, Equatable {
  /// The BSSID, `AA:BB:CC:DD:EE:FF`.
  package var bssid: String
  /// Latitude, degrees.
  package var latitude: Double
  /// Longitude, degrees.
  package var longitude: Double
  /// The radius it is heard in, metres, if known.
  package var radius: Double?
  /// How many observations the estimate rests on, if known.
  package var samples: Int?
  /// When the estimate was last changed, seconds since 1970, if known.
  package var time: Double?

  /// Creates an entry.
  package init(
    bssid: String, latitude: Double, longitude: Double, radius: Double? = nil,
    samples: Int? = nil, time: Double? = nil
  ) {
    self.bssid = bssid
    self.latitude = latitude
    self.longitude = longitude
    self.radius = radius
    self.samples = samples
    self.time = time
  }

  /// The most entries one `wifiImport` message carries (a line stays far below 64 KiB).
  package static let maximumPerMessage = 400
}

extension DaemonImportedAccessPoint: WireObject {
  package static var wireBlank: DaemonImportedAccessPoint {
    DaemonImportedAccessPoint(bssid: "", latitude: 0, longitude: 0)
  }

  /// `bssid`, `latitude`, `longitude`, and `radius`, `samples`, `time` when known.
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("bssid", &bssid)
    try c.field("latitude", &latitude)
    try c.field("longitude", &longitude)
    try c.omittable("radius", &radius)
    try c.omittable("samples", &samples)
    try c.omittable("time", &time)
  }
}
