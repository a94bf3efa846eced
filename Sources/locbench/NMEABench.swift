import LocationFormats

/// NMEA 0183 decoding throughput on a generated 50 MB log.
///
/// The log is made in memory: 1 Hz epochs of GGA, RMC, GSA, three GSV, VTG and GST with correct
/// checksums, a receiver moving along a slow curve. The baseline is a bare checksum scan in Swift
/// (find `$`, XOR to `*`, compare the two hex digits) over the same bytes in the same run.
enum NMEABench {
  static func run() {
    let log = makeLog(targetBytes: 50_000_000)
    let megabytes = Double(log.count) / 1_000_000
    var lines = 0
    for byte in log where byte == 0x0A { lines += 1 }
    print("log: \(format2(megabytes)) MB, \(lines) sentences")

    // `locbench nmea scan`, `decode` or `decode-nosat` runs only one side five times, `generate`
    // only makes the log (for
    // `perf stat`, whose instruction counts do not depend on the machine's load).
    let only = CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : ""
    if only == "generate" { return }
    if only == "scan" || only == "decode" || only == "decode-nosat" {
      var total = 0
      for _ in 0..<5 {
        total +=
          only == "scan"
          ? checksumScan(log) : decode(log, reportSatellites: only == "decode")
      }
      print("\(only): \(total)")
      return
    }
    // The machine is shared: baseline and decoder runs alternate, and the best of five of each
    // is kept, so that both see the same conditions.
    var baselineBest = Double.infinity
    var good = 0
    var best = [true: Double.infinity, false: Double.infinity]
    var fixes = 0
    for _ in 0..<5 {
      let (seconds, count) = time { checksumScan(log) }
      baselineBest = min(baselineBest, seconds)
      good = count
      for reportSatellites in [true, false] {
        let (seconds, count) = time { decode(log, reportSatellites: reportSatellites) }
        best[reportSatellites] = min(best[reportSatellites] ?? .infinity, seconds)
        fixes = count
      }
    }
    let baselineRate = megabytes / baselineBest
    print("baseline checksum scan: \(format2(baselineRate)) MB/s (\(good) good sentences)")
    for reportSatellites in [true, false] {
      let seconds = best[reportSatellites] ?? .infinity
      let rate = megabytes / seconds
      print(
        "NMEADecoder (64 KiB chunks, satellites \(reportSatellites ? "on" : "off")): "
          + "\(format2(rate)) MB/s, \(format0(Double(fixes) / seconds)) fixes/s (\(fixes) fixes), "
          + "\(format2(rate / baselineRate)) x the checksum scan")
    }
  }

  static func format2(_ value: Double) -> String {
    let scaled = (value * 100).rounded()
    let whole = Int(scaled / 100)
    let fraction = Int(abs(scaled).truncatingRemainder(dividingBy: 100))
    return "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
  }

  static func format0(_ value: Double) -> String { "\(Int(value.rounded()))" }

  static func time<T>(_ body: () -> T) -> (Double, T) {
    let clock = ContinuousClock()
    var result: T?
    let elapsed = clock.measure { result = body() }
    let seconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    guard let result else { fatalError("no result") }
    return (seconds, result)
  }

  /// The baseline: counts sentences whose checksum is right, nothing else.
  static func checksumScan(_ log: [UInt8]) -> Int {
    log.withUnsafeBufferPointer { buffer in
      var good = 0
      var index = 0
      let count = buffer.count
      while index < count {
        while index < count && buffer[index] != UInt8(ascii: "$") { index &+= 1 }
        index &+= 1
        var sum: UInt8 = 0
        while index < count && buffer[index] != UInt8(ascii: "*") {
          sum ^= buffer[index]
          index &+= 1
        }
        if index &+ 2 < count {
          let high = hex(buffer[index &+ 1])
          let low = hex(buffer[index &+ 2])
          if high << 4 | low == sum { good &+= 1 }
        }
        index &+= 3
      }
      return good
    }
  }

  @inline(__always)
  static func hex(_ byte: UInt8) -> UInt8 {
    byte <= UInt8(ascii: "9") ? byte &- UInt8(ascii: "0") : (byte | 0x20) &- UInt8(ascii: "a") &+ 10
  }

  static func decode(_ log: [UInt8], reportSatellites: Bool) -> Int {
    var decoder = NMEADecoder(options: .init(reportSatellites: reportSatellites))
    var fixes = 0
    log.withUnsafeBytes { bytes in
      var start = 0
      while start < bytes.count {
        let end = min(start + 65_536, bytes.count)
        for output in decoder.decode(bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<end])) {
          if case .fix = output { fixes += 1 }
        }
        start = end
      }
    }
    for output in decoder.finish() {
      if case .fix = output { fixes += 1 }
    }
    return fixes
  }

  // MARK: The generated log

  /// Appends `value` with `decimals` decimals and at least `width` integer digits.
  static func append(_ value: Double, decimals: Int, width: Int = 1, to text: inout String) {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int((abs(value) * scale).rounded())
    if value < 0 { text += "-" }
    let whole = String(scaled / Int(scale))
    if whole.count < width { text += String(repeating: "0", count: width - whole.count) }
    text += whole
    if decimals > 0 {
      let fraction = String(scaled % Int(scale))
      text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
  }

  static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

  /// Appends `$BODY*HH` and CR LF (HH: the XOR of the body's bytes, NMEA 0183): the sentences
  /// of this bench's log and of `locbench daemon`'s feed.
  static func sentence(_ body: String, into log: inout [UInt8]) {
    var sum: UInt8 = 0
    for byte in body.utf8 { sum ^= byte }
    let digits = Array("0123456789ABCDEF".utf8)
    log.append(UInt8(ascii: "$"))
    log.append(contentsOf: body.utf8)
    log.append(UInt8(ascii: "*"))
    log.append(digits[Int(sum >> 4)])
    log.append(digits[Int(sum & 15)])
    log.append(13)
    log.append(10)
  }

  static func makeLog(targetBytes: Int) -> [UInt8] {
    var log: [UInt8] = []
    log.reserveCapacity(targetBytes + 1000)
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    func random() -> Double {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(seed >> 11) / Double(1 << 53)
    }
    var latitude = 48.117_3
    var longitude = 11.516_6
    var second = 12 * 3600
    var day = 23
    while log.count < targetBytes {
      let heading = Double(second % 3600) / 10
      let speedKnots = 10 + 5 * random()
      latitude += 0.000_05 * (heading < 180 ? 1 : -1)
      longitude += 0.000_07
      second += 1
      if second == 86_400 {
        second = 0
        day = day % 28 + 1
      }
      let clock =
        twoDigits(second / 3600) + twoDigits(second / 60 % 60) + twoDigits(second % 60) + ".00"
      var lat = ""
      append(
        Double(Int(latitude)) * 100 + (latitude - Double(Int(latitude))) * 60, decimals: 5,
        width: 4, to: &lat)
      var lon = ""
      append(
        Double(Int(longitude)) * 100 + (longitude - Double(Int(longitude))) * 60,
        decimals: 5, width: 5, to: &lon)
      var altitude = ""
      append(545.4 + 10 * random(), decimals: 1, to: &altitude)
      var hdop = ""
      append(0.8 + random(), decimals: 2, to: &hdop)
      var speed = ""
      append(speedKnots, decimals: 3, to: &speed)
      var course = ""
      append(heading, decimals: 2, to: &course)
      sentence(
        "GPGGA,\(clock),\(lat),N,\(lon),E,1,10,\(hdop),\(altitude),M,47.0,M,,", into: &log)
      sentence(
        "GPRMC,\(clock),A,\(lat),N,\(lon),E,\(speed),\(course),\(twoDigits(day))0324,3.1,E,A",
        into: &log)
      sentence("GPGSA,A,3,02,05,11,12,18,20,25,29,31,32,,,1.65,\(hdop),1.32", into: &log)
      for message in 1...3 {
        var body = "GPGSV,3,\(message),12"
        for slot in 0..<4 {
          let prn = (message - 1) * 4 + slot + 1
          body +=
            ",\(twoDigits(prn)),\(twoDigits(Int(random() * 90))),\(100 + Int(random() * 259)),"
            + twoDigits(20 + Int(random() * 30))
        }
        sentence(body, into: &log)
      }
      var kilometres = ""
      append(speedKnots * 1.852, decimals: 3, to: &kilometres)
      sentence("GPVTG,\(course),T,,M,\(speed),N,\(kilometres),K,A", into: &log)
      sentence("GPGST,\(clock),1.2,2.1,1.4,34.5,1.8,1.6,3.2", into: &log)
    }
    return log
  }
}
