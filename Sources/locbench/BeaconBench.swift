import Foundation
import LocationEngine
import LocationFormats
import LocationModel

/// `locbench beacons`: iBeacon ranging, three figures, all inputs seeded (only the timings vary
/// from run to run).
///
/// 1. **Throughput, one core**: a stream of 500,000 iBeacon manufacturer-data arrays (one array per
///    advertisement, as BlueZ hands them over; 200 beacons under 3 UUIDs, each heard 10 times a
///    second) decoded with `IBeaconFrame.decode(companyID:data:)` and handed to
///    `LocationEngine.handle(.advertisement)` with 10 ranging constraints active (one client;
///    every UUID is ranged, so no advertisement is dropped early). Baseline: a bare loop summing
///    the bytes of the same arrays. Best of five of each, alternating. Target ≥ 100,000/s.
/// 2. **Delivery with 500 beacons in view, 10 constraints**: the engine's time for one
///    `.timerFired(.beaconTick)` (every delivery of the tick), with 5 advertisements per beacon per
///    second fed between ticks; median and maximum over 200 ticks after 10 of warm-up. Baseline:
///    sorting an array of 500 seeded doubles (`sorted()`), timed the same way 200 times. Target
///    ≤ 1 ms.
/// 3. **Accuracy on simulated walks** (``BeaconAccuracyBench``).
///
///     swift run -c release locbench beacons
enum BeaconBench {
  /// The three proximity UUIDs of the benches' beacons.
  static let uuids = [
    BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0),
    BeaconUUID(high: 0xB940_7F30_F5F8_466E, low: 0xAFF9_2555_6B57_FE6D),
    BeaconUUID(high: 0xF782_6DA6_4FA2_4E98, low: 0x8024_BC5B_71E0_893E),
  ]

  /// Ten constraints over the three UUIDs: whole UUIDs, majors, and single beacons.
  static let constraints: [BeaconConstraint] = [
    BeaconConstraint(uuid: uuids[0]),
    BeaconConstraint(uuid: uuids[0], major: 1),
    BeaconConstraint(uuid: uuids[0], major: 2),
    BeaconConstraint(uuid: uuids[0], major: 3, minor: 1),
    BeaconConstraint(uuid: uuids[0], major: 3, minor: 2),
    BeaconConstraint(uuid: uuids[1]),
    BeaconConstraint(uuid: uuids[1], major: 1),
    BeaconConstraint(uuid: uuids[1], major: 2),
    BeaconConstraint(uuid: uuids[1], major: 1, minor: 3),
    BeaconConstraint(uuid: uuids[2], major: 4),
  ]

  /// The wall-clock time at which the benches start.
  static let origin = EngineInstant(monotonic: 1000, wall: 1_767_225_600)

  /// One beacon of the benches: its frame, its Bluetooth address and how loud it usually is.
  struct Beacon {
    /// The iBeacon frame it advertises.
    var frame: IBeaconFrame
    /// Its Bluetooth address.
    var address: String
    /// The mean RSSI it is heard at, dBm (from a distance of 0.3 to 30 m, n = 2).
    var meanRSSI: Double
  }

  /// One advertisement of the throughput stream: the manufacturer data as received, its RSSI and
  /// which beacon sent it (for its address).
  struct Received {
    /// The manufacturer-specific data after Apple's company identifier.
    var data: [UInt8]
    /// The received signal strength, dBm.
    var rssi: Int
    /// The index of the sender in the beacon list.
    var beacon: Int
  }

  /// Runs the three figures.
  static func run() {
    print("iBeacon ranging: \(constraints.count) constraints over \(uuids.count) UUIDs")
    throughput()
    delivery()
    BeaconAccuracyBench.run()
  }

  /// `count` distinct beacons: beacon `i` has the UUID `i mod 3`, major `1 + (i / 3) mod 5` and
  /// minor `i / 15`, a measured power of −55 to −65 dBm and a distance of 0.3 to 30 m (seeded).
  static func beacons(count: Int, _ random: inout SplitMix64) -> [Beacon] {
    (0..<count).map { index in
      let power = -55 - Int(random.next() % 11)
      let distance = 0.3 * pow(100, random.unit())
      let frame = IBeaconFrame(
        uuid: uuids[index % 3], major: UInt16(1 + (index / 3) % 5), minor: UInt16(index / 15),
        measuredPower: power)
      let address = String(format: "C0:FF:EE:00:%02X:%02X", index >> 8, index & 0xFF)
      return Beacon(
        frame: frame, address: address, meanRSSI: Double(power) - 20 * log10(distance))
    }
  }

  /// An engine with one client ranging every constraint.
  static func rangingEngine() -> LocationEngine {
    var engine = LocationEngine(allowed: true)
    let client = ClientID(1)
    _ = engine.handle(.addClient(client), at: origin)
    for constraint in constraints {
      _ = engine.handle(.startRanging(client, constraint), at: origin)
    }
    return engine
  }

  /// A Gaussian deviate of standard deviation `sigma` (Box and Muller 1958).
  static func noise(_ sigma: Double, _ random: inout SplitMix64) -> Double {
    let u = max(random.unit(), 1e-300)
    return sigma * (-2 * log(u)).squareRoot() * cos(2 * Double.pi * random.unit())
  }

  // MARK: 1. Throughput

  /// Figure 1: advertisements decoded and ranged per second against the bare byte sum.
  static func throughput() {
    let count = 500_000
    var random = SplitMix64(seed: 0xBEAC_0001)
    let beacons = beacons(count: 200, &random)
    let stream = (0..<count).map { _ -> Received in
      let index = Int(random.next() % UInt64(beacons.count))
      return Received(
        data: beacons[index].frame.manufacturerData,
        rssi: Int((beacons[index].meanRSSI + noise(4, &random)).rounded()), beacon: index)
    }
    let addresses = beacons.map(\.address)
    // 200 beacons at 10 Hz: 2,000 advertisements a second of the stream's time.
    let rate = Double(beacons.count) * 10
    var bestBare = Double.infinity
    var bestEngine = Double.infinity
    var sum = 0
    var ranged = 0
    for _ in 0..<5 {
      let (bare, total) = NMEABench.time { byteSum(stream) }
      bestBare = min(bestBare, bare)
      sum = total
      let (engine, count) = NMEABench.time { decodeAndRange(stream, addresses, rate: rate) }
      bestEngine = min(bestEngine, engine)
      ranged = count
    }
    let bareRate = Double(count) / bestBare
    let engineRate = Double(count) / bestEngine
    print("1. advertisements decoded and ranged, one core (\(count) advertisements, 200 beacons)")
    print(
      "  baseline: bare loop summing the same arrays' bytes  "
        + String(format: "%12.0f", bareRate) + " arrays/s  (sum \(sum))")
    print(
      "  IBeaconFrame.decode + LocationEngine.handle(.advertisement)  "
        + String(format: "%12.0f", engineRate) + " advertisements/s  (\(ranged) ranged)")
    print(
      "  ratio: decoding and ranging takes " + String(format: "%.1f", bestEngine / bestBare)
        + "x the bare loop's time; target >= 100,000 advertisements/s: "
        + (engineRate >= 100_000 ? "met" : "NOT met"))
  }

  /// The baseline: the sum of every byte of every array.
  static func byteSum(_ stream: [Received]) -> Int {
    var sum = 0
    for received in stream {
      for byte in received.data { sum &+= Int(byte) }
    }
    return sum
  }

  /// Decodes every array and hands the advertisement to a fresh ranging engine, `rate` a second;
  /// returns how many were iBeacons.
  static func decodeAndRange(_ stream: [Received], _ addresses: [String], rate: Double) -> Int {
    var engine = rangingEngine()
    var effects: [EngineEffect] = []
    effects.reserveCapacity(8)
    var ranged = 0
    for (index, received) in stream.enumerated() {
      guard
        let frame = try? IBeaconFrame.decode(
          companyID: IBeaconFrame.appleCompanyID, data: received.data)
      else { continue }
      let now = origin.advanced(by: Double(index) / rate)
      effects.removeAll(keepingCapacity: true)
      engine.handle(
        .advertisement(
          frame.advertisement(
            rssi: received.rssi, address: addresses[received.beacon], time: now.wall)),
        at: now, into: &effects)
      ranged += 1
    }
    return ranged
  }

  // MARK: 2. Delivery

  /// Figure 2: the engine's time per ranging tick with 500 beacons in view, against sorting 500
  /// doubles.
  static func delivery() {
    let beaconCount = 500
    let warmUp = 10
    let ticks = 200
    var random = SplitMix64(seed: 0xBEAC_0002)
    let beacons = beacons(count: beaconCount, &random)
    var engine = rangingEngine()
    var tickTimes: [Int64] = []
    var delivered = 0
    var effects: [EngineEffect] = []
    for second in 1...(warmUp + ticks) {
      // Five advertisements per beacon in the second before the tick, in a seeded order.
      var order = (0..<(5 * beaconCount)).map { $0 % beaconCount }
      order.shuffle(using: &random)
      for (slot, index) in order.enumerated() {
        let now = origin.advanced(
          by: Double(second - 1) + Double(slot) / Double(order.count))
        let beacon = beacons[index]
        effects.removeAll(keepingCapacity: true)
        engine.handle(
          .advertisement(
            beacon.frame.advertisement(
              rssi: Int((beacon.meanRSSI + noise(4, &random)).rounded()),
              address: beacon.address, time: now.wall)),
          at: now, into: &effects)
      }
      let now = origin.advanced(by: Double(second))
      let start = RegionsBench.nanoseconds()
      let tick = engine.handle(.timerFired(.beaconTick), at: now)
      let elapsed = RegionsBench.nanoseconds() - start
      guard second > warmUp else { continue }
      tickTimes.append(elapsed)
      for case .deliverBeacons(_, _, let ranged) in tick { delivered += ranged.count }
    }
    var sortTimes: [Int64] = []
    var checksum = 0.0
    for _ in 0..<ticks {
      let values = (0..<beaconCount).map { _ in random.unit() }
      let start = RegionsBench.nanoseconds()
      let sorted = values.sorted()
      let elapsed = RegionsBench.nanoseconds() - start
      sortTimes.append(elapsed)
      checksum += sorted[beaconCount / 2]
    }
    tickTimes.sort()
    sortTimes.sort()
    let median = RegionsBench.percentile(tickTimes, 0.5)
    let worst = Double(tickTimes.last ?? 0)
    let sortMedian = RegionsBench.percentile(sortTimes, 0.5)
    print(
      "2. ranging delivery, \(beaconCount) beacons in view, \(constraints.count) constraints, "
        + "5 advertisements per beacon per second (\(ticks) ticks after \(warmUp) of warm-up)")
    print(
      "  baseline: sorting \(beaconCount) seeded doubles: median "
        + RegionsBench.format(sortMedian) + ", max "
        + RegionsBench.format(Double(sortTimes.last ?? 0))
        + String(format: " (checksum %.3f)", checksum / Double(ticks)))
    print(
      "  LocationEngine.handle(.timerFired(.beaconTick)): median " + RegionsBench.format(median)
        + ", max " + RegionsBench.format(worst) + " ("
        + "\(delivered / ticks) beacons delivered per tick over \(constraints.count) deliveries)")
    print(
      "  ratio: median delivery = " + String(format: "%.1f", median / max(sortMedian, 1))
        + "x sorting \(beaconCount) doubles; target <= 1 ms per delivery: "
        + (median <= 1_000_000 ? "met" : "NOT met") + " (median), "
        + (worst <= 1_000_000 ? "met" : "NOT met") + " (max)")
  }
}
