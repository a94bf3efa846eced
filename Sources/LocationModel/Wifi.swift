/// One access point heard in a Wi-Fi scan.
package struct AccessPointReading: Sendable, Equatable {
  /// The BSSID (the access point's MAC address), the low 48 bits.
  package var bssid: UInt64
  /// The network name, as bytes (an SSID need not be UTF-8); empty when hidden.
  package var ssid: [UInt8]
  /// The received signal strength, dBm (NetworkManager's `Strength` percentage converted:
  /// `dBm = percent / 2 − 100`, the inverse of its own mapping).
  package var signal: Double
  /// The channel's centre frequency, MHz (2412 … 5825 …); 0 when unknown.
  package var frequency: Int

  /// Creates a reading.
  package init(bssid: UInt64, ssid: [UInt8], signal: Double, frequency: Int) {
    self.bssid = bssid
    self.ssid = ssid
    self.signal = signal
    self.frequency = frequency
  }

  /// Whether the network opts out of location databases: its SSID ends in `_nomap` (the
  /// convention public Wi-Fi databases honour).
  package var optsOut: Bool { ssid.count >= 6 && ssid.suffix(6).elementsEqual("_nomap".utf8) }

  /// `AA:BB:CC:DD:EE:FF` for a BSSID, or nil when the text is not six hexadecimal pairs.
  package static func bssid(_ text: String) -> UInt64? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 6 else { return nil }
    var value: UInt64 = 0
    for part in parts {
      guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
      value = value << 8 | UInt64(byte)
    }
    return value
  }

  /// The `AA:BB:CC:DD:EE:FF` form of a BSSID.
  package static func text(bssid: UInt64) -> String {
    let digits = Array("0123456789ABCDEF")
    return (0..<6).map { index -> String in
      let byte = Int((bssid >> (40 - 8 * UInt64(index))) & 0xFF)
      return String([digits[byte >> 4], digits[byte & 0x0F]])
    }.joined(separator: ":")
  }
}

/// One Wi-Fi scan: the access points a device heard, and when.
package struct WifiScan: Sendable, Equatable {
  /// When the scan was made: wall-clock seconds since 1970-01-01T00:00:00Z.
  package var time: Double
  /// The access points heard, in any order.
  package var readings: [AccessPointReading]
  /// The URL of the source that made it (`wifi`, `wifi://wlan0`).
  package var source: String

  /// Creates a scan.
  package init(time: Double, readings: [AccessPointReading], source: String = "") {
    self.time = time
    self.readings = readings
    self.source = source
  }
}

/// What the device has learned about one access point from its own fixes: a weighted centroid of
/// the places it was heard, kept as sums so that each new observation is one addition.
///
/// The place is the normalised sum of the observations' unit vectors (WGS-84 geodetic
/// latitude and longitude on the unit sphere) weighted by their weights; the spread is
/// `R · sqrt(2 · (1 − |Σ w·u| / Σ w))`, the root-mean-square distance of the observations from
/// their centroid on a sphere of radius `R` (6,371 km), for the small areas an access point covers.
package struct AccessPointRecord: Sendable, Equatable {
  /// The BSSID, the low 48 bits.
  package var bssid: UInt64
  /// Σ w (the weights of the observations).
  package var weight: Double
  /// Σ w·x, Σ w·y, Σ w·z of the observations' unit vectors.
  package var x: Double
  /// See `x`.
  package var y: Double
  /// See `x`.
  package var z: Double
  /// How many observations were added.
  package var observations: Int
  /// When it was first heard with a good fix: wall-clock seconds since 1970.
  package var firstSeen: Double
  /// When it was last heard: wall-clock seconds since 1970.
  package var lastSeen: Double
  /// Heard at places too far apart for a fixed access point (a phone's hotspot, a bus's
  /// Wi-Fi): never used for positioning.
  package var mobile: Bool

  /// Creates a record.
  package init(
    bssid: UInt64, weight: Double, x: Double, y: Double, z: Double, observations: Int,
    firstSeen: Double, lastSeen: Double, mobile: Bool = false
  ) {
    self.bssid = bssid
    self.weight = weight
    self.x = x
    self.y = y
    self.z = z
    self.observations = observations
    self.firstSeen = firstSeen
    self.lastSeen = lastSeen
    self.mobile = mobile
  }
}
