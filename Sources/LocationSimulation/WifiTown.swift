import Foundation
import Geodesy
import LocationModel

/// A seeded simulated town for Wi-Fi learning and positioning (`locbench wifi`, the engine's
/// Wi-Fi tests): access points along a street grid, a car driving a seeded route through it with
/// a GNSS receiver and a Wi-Fi scanner, and the truth to measure against.
///
/// - **Streets**: a square grid of ``streets`` streets each way, ``blockLength`` apart (11 × 200 m:
///   a town of 2 km × 2 km), in a plane tangent to WGS-84 at ``origin``.
/// - **Access points**: ``accessPointCount`` (2,000), each on a seeded street, at a seeded place
///   along it, on either side, set back 5 to 25 m from its middle (in the houses); each has a
///   seeded 48-bit BSSID and 3 % of them an SSID ending in `_nomap`.
/// - **Radio**: the log-distance path-loss model with log-normal shadowing (T. S. Rappaport,
///   *Wireless Communications*, 2nd ed., sections 4.9.1-4.9.2): `RSSI = P₀ − 10 · n · log₁₀(d) +
///   N(0, σ)` with `P₀` −40 dBm at 1 m, `n` 3, `σ` 4 dB, independent in each scan; a reading is
///   heard when above −90 dBm (about 46 m without shadowing, up to 90 m with it).
/// - **Car**: from a seeded crossing, at each crossing it turns to a seeded neighbour (not back
///   unless at the edge), each block at a seeded 8 to 14 m/s, stopping at 30 % of the crossings
///   for 5 to 30 s. It is sampled every 0.5 s: a GNSS fix (`autonomous`, noise of 5 m RMS radius,
///   `horizontalAccuracy` 5) at each whole second and a scan at half past every ``scanInterval``
///   (3 s).
///
/// Every draw comes from `SplitMix64`, so a town and its drives are the same on every run.
package struct WifiTown: Sendable {
  /// One access point of the town.
  package struct AccessPoint: Sendable, Equatable {
    /// Its BSSID.
    package var bssid: UInt64
    /// Its SSID.
    package var ssid: [UInt8]
    /// Metres east of the town's origin.
    package var east: Double
    /// Metres north of the town's origin.
    package var north: Double
  }

  /// The car at one instant of a drive.
  package struct Sample: Sendable, Equatable {
    /// Seconds since 1970.
    package var time: Double
    /// The true place: metres east of the town's origin.
    package var east: Double
    /// The true place: metres north of the town's origin.
    package var north: Double
  }

  /// The town's south-west corner.
  package static let origin = (latitude: 52.5, longitude: 13.4)
  /// The start of the simulated time: 2026-01-01T00:00:00Z.
  package static let epoch = 1_767_225_600.0
  /// The BSSID of the hotspot riding in the car (when a scan is asked to include it).
  package static let hotspotBSSID: UInt64 = 0x02_CA_FE_00_00_01

  /// The number of streets each way.
  package var streets = 11
  /// The distance between neighbouring streets, metres.
  package var blockLength = 200.0
  /// How many access points the town has.
  package var accessPointCount = 2_000
  /// `P₀`, the received power at 1 m, dBm.
  package var referencePower = -40.0
  /// `n`, the path-loss exponent.
  package var pathLossExponent = 3.0
  /// `σ`, the shadowing's standard deviation, dB.
  package var sigma = 4.0
  /// The weakest signal heard, dBm.
  package var threshold = -90.0
  /// Seconds between scans.
  package var scanInterval = 3.0
  /// The RMS radius of the GNSS fixes' noise, metres.
  package var fixNoise = 5.0
  /// The town's access points.
  package var accessPoints: [AccessPoint] = []
  /// The plane of the town.
  package let plane: LocalTangentPlane

  /// A field of given access points in a given plane, with the default radio (the power
  /// simulation's access points along a trace, `WifiTown.along(_:seed:)`); its street grid is not
  /// used.
  package init(plane: LocalTangentPlane, accessPoints: [AccessPoint]) {
    self.plane = plane
    self.accessPoints = accessPoints
    accessPointCount = accessPoints.count
  }

  /// The town of `seed`, with the default layout and radio.
  package init(seed: UInt64) {
    plane = LocalTangentPlane(latitude: Self.origin.latitude, longitude: Self.origin.longitude)
    var random = SplitMix64(seed: seed)
    let size = Double(streets - 1) * blockLength
    accessPoints = (0..<accessPointCount).map { index in
      let street = Double(random.next() % UInt64(streets)) * blockLength
      let along = random.uniform(0...size)
      let side = random.chance(0.5) ? 1.0 : -1.0
      let across = street + side * random.uniform(5...25)
      let northSouth = random.chance(0.5)
      let bssid = random.next() & 0xFFFF_FFFF_FFFF
      let name = random.chance(0.03) ? "house\(index)_nomap" : "house\(index)"
      return AccessPoint(
        bssid: bssid, ssid: Array(name.utf8), east: northSouth ? across : along,
        north: northSouth ? along : across)
    }
  }

  /// The latitude and longitude of a place of the town.
  package func coordinate(east: Double, north: Double) -> (latitude: Double, longitude: Double) {
    plane.unproject(east: east, north: north)
  }

  /// Moves a seeded `fraction` of the access points to seeded places elsewhere in the town (at
  /// least 500 m from where they were), as after their owners moved; returns their indices.
  @discardableResult
  package mutating func relocate(fraction: Double, seed: UInt64) -> [Int] {
    var random = SplitMix64(seed: seed)
    let size = Double(streets - 1) * blockLength
    var moved: [Int] = []
    for index in accessPoints.indices where random.chance(fraction) {
      var east = 0.0
      var north = 0.0
      repeat {
        let street = Double(random.next() % UInt64(streets)) * blockLength
        let along = random.uniform(0...size)
        let across = street + (random.chance(0.5) ? 1 : -1) * random.uniform(5...25)
        (east, north) = random.chance(0.5) ? (across, along) : (along, across)
      } while hypot(east - accessPoints[index].east, north - accessPoints[index].north) < 500
      accessPoints[index].east = east
      accessPoints[index].north = north
      moved.append(index)
    }
    return moved
  }

  /// A seeded drive of `duration` seconds starting at `start` (seconds since 1970), sampled every
  /// 0.5 s.
  package func drive(seed: UInt64, duration: Double, start: Double = epoch) -> [Sample] {
    var random = SplitMix64(seed: seed)
    var node = (Int(random.next() % UInt64(streets)), Int(random.next() % UInt64(streets)))
    var previous = node
    var samples: [Sample] = []
    var time = 0.0
    var clock = 0.0
    /// Appends the samples due up to `until` of a leg from `from` to `to` (metres) begun at `begin`.
    func emit(from: (Double, Double), to: (Double, Double), begin: Double, until: Double) {
      let length = max(until - begin, 1e-9)
      while clock <= until && clock <= duration {
        let f = min(1, max(0, (clock - begin) / length))
        samples.append(
          Sample(
            time: start + clock, east: from.0 + f * (to.0 - from.0),
            north: from.1 + f * (to.1 - from.1)))
        clock += 0.5
      }
    }
    while time < duration {
      let here = (Double(node.0) * blockLength, Double(node.1) * blockLength)
      if random.chance(0.3) {
        let stop = random.uniform(5...30)
        emit(from: here, to: here, begin: time, until: time + stop)
        time += stop
      }
      var options = [(1, 0), (-1, 0), (0, 1), (0, -1)].map { (node.0 + $0.0, node.1 + $0.1) }
        .filter { $0.0 >= 0 && $0.0 < streets && $0.1 >= 0 && $0.1 < streets }
      if options.count > 1 { options.removeAll { $0 == previous } }
      let next = options[Int(random.next() % UInt64(options.count))]
      let there = (Double(next.0) * blockLength, Double(next.1) * blockLength)
      let leg = blockLength / random.uniform(8...14)
      emit(from: here, to: there, begin: time, until: time + leg)
      time += leg
      previous = node
      node = next
    }
    return samples
  }

  /// The GNSS fix of a sample: the true place plus seeded noise of ``fixNoise`` RMS radius.
  package func fix(_ sample: Sample, _ random: inout SplitMix64) -> Fix {
    let axis = fixNoise / 2.0.squareRoot()
    let place = coordinate(
      east: sample.east + axis * random.gaussian(), north: sample.north + axis * random.gaussian())
    return Fix(
      latitude: place.latitude, longitude: place.longitude, horizontalAccuracy: fixNoise,
      time: sample.time, quality: .autonomous, source: "gpsd://simulated")
  }

  /// The scan of a sample: every access point heard above ``threshold``, loudest first, plus the
  /// car's own hotspot at about −45 dBm when `hotspot` is true.
  package func scan(_ sample: Sample, _ random: inout SplitMix64, hotspot: Bool = false)
    -> WifiScan
  {
    var readings: [AccessPointReading] = []
    // Beyond this distance a reading needs more than 4 σ of shadowing to be heard.
    let reach = pow(10, (referencePower - threshold + 4 * sigma) / (10 * pathLossExponent))
    for point in accessPoints {
      let de = point.east - sample.east
      let dn = point.north - sample.north
      guard abs(de) < reach, abs(dn) < reach else { continue }
      let distance = max(1, (de * de + dn * dn).squareRoot())
      let signal =
        referencePower - 10 * pathLossExponent * log10(distance) + sigma * random.gaussian()
      guard signal >= threshold else { continue }
      readings.append(
        AccessPointReading(
          bssid: point.bssid, ssid: point.ssid, signal: signal.rounded(), frequency: 2437))
    }
    if hotspot {
      readings.append(
        AccessPointReading(
          bssid: Self.hotspotBSSID, ssid: Array("car".utf8),
          signal: (-45 + 2 * random.gaussian()).rounded(), frequency: 5180))
    }
    readings.sort { $0.signal > $1.signal }
    return WifiScan(time: sample.time, readings: readings, source: "wifi")
  }

  /// Whether a sample is a scan's instant (half past every ``scanInterval`` seconds).
  package func isScanTime(_ sample: Sample) -> Bool {
    let offset = (sample.time - Self.epoch).truncatingRemainder(dividingBy: scanInterval)
    return abs(offset - 0.5) < 1e-6
  }

  /// Whether a sample is a fix's instant (a whole second).
  package func isFixTime(_ sample: Sample) -> Bool {
    (sample.time - Self.epoch).truncatingRemainder(dividingBy: 1) < 1e-6
  }
}
