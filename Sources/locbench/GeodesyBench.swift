// locbench geodesy: the cost of one inverse geodesic on short (< 10 km), medium (10-1,000 km) and
// long (1,000-19,000 km) lines, against the haversine formula (the floor) and, when PROJ is
// installed, PROJ's geod_inverse (GeographicLib's C implementation), all on the same inputs in one
// run; then the cost of one World Magnetic Model evaluation.
//
// PROJ is loaded at run time with dlopen/dlsym, so the package never links it.
import Foundation
import Geodesy
import LocationModel

enum GeodesyBench {
  /// Lines per class.
  static let count = 50_000
  /// Timed passes over the inputs; the fastest counts.
  static let passes = 25

  struct Line {
    var lat1: Double
    var lon1: Double
    var lat2: Double
    var lon2: Double
  }

  /// Lines from random starts (uniform on the sphere), random azimuths and lengths in a range.
  static func lines(seed: UInt64, minLength: Double, maxLength: Double) -> [Line] {
    var rng = SplitMix64(seed: seed)
    var result: [Line] = []
    result.reserveCapacity(count)
    for _ in 0..<count {
      let lat1 = asin(rng.uniform(-1...1)) * 180 / .pi
      let lon1 = rng.uniform(-180...180)
      let end = Geodesic.wgs84.direct(
        latitude: lat1, longitude: lon1, azimuth: rng.uniform(-180...180),
        distance: rng.uniform(minLength...maxLength))
      result.append(Line(lat1: lat1, lon1: lon1, lat2: end.latitude, lon2: end.longitude))
    }
    return result
  }

  /// The haversine formula on a sphere of the mean radius: the cheapest distance there is.
  @inline(__always)
  static func haversine(_ line: Line) -> Double {
    let degree = Double.pi / 180
    let p1 = line.lat1 * degree
    let p2 = line.lat2 * degree
    let dp = (line.lat2 - line.lat1) * degree
    let dl = (line.lon2 - line.lon1) * degree
    let sp = sin(dp / 2)
    let sl = sin(dl / 2)
    let h = sp * sp + cos(p1) * cos(p2) * sl * sl
    return 2 * 6_371_008.8 * asin(min(1, h.squareRoot()))
  }

  /// Nanoseconds per call of each of `bodies` over `lines`. The lines are timed in chunks of
  /// 2,000; each chunk counts with its fastest of `passes` passes (the bodies interleaved within
  /// each pass, so that all meet the same machine load), which filters out the other processes on a
  /// shared machine. The results are summed into `Sink` so that the optimizer cannot drop the work.
  static func time<T>(_ lines: [T], _ bodies: [(T) -> Double]) -> [Double] {
    let chunk = 2_000
    let starts = Array(stride(from: 0, to: lines.count, by: chunk))
    var best = [[Double]](
      repeating: [Double](repeating: .infinity, count: starts.count), count: bodies.count)
    let clock = ContinuousClock()
    for _ in 0..<passes {
      for (chunkIndex, start) in starts.enumerated() {
        let slice = lines[start..<min(start + chunk, lines.count)]
        for (index, body) in bodies.enumerated() {
          var sum = 0.0
          let elapsed = clock.measure {
            for line in slice { sum += body(line) }
          }
          Sink.consume(sum)
          let seconds =
            Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
          best[index][chunkIndex] = min(best[index][chunkIndex], seconds)
        }
      }
    }
    return best.map { $0.reduce(0, +) * 1e9 / Double(lines.count) }
  }

  static func run() {
    let classes: [(name: String, lines: [Line])] = [
      ("short", lines(seed: 1, minLength: 0, maxLength: 10_000)),
      ("medium", lines(seed: 2, minLength: 10_000, maxLength: 1_000_000)),
      ("long", lines(seed: 3, minLength: 1_000_000, maxLength: 19_000_000)),
    ]
    let proj = Proj.load()
    if let proj {
      print("PROJ: \(proj.name) (geod_inverse, GeographicLib's C implementation)")
    } else {
      print("PROJ: not found (install libproj-dev); comparing with the haversine formula only")
    }
    print(
      "\(count) lines per class (short < 10 km, medium 10-1,000 km, long 1,000-19,000 km), "
        + "fastest of \(passes) interleaved passes per chunk of 2,000, ns per call")
    let header = [
      "class", "haversine", "distance", "inverse", "geod_inverse", "distance/hav",
      "distance/geod", "inverse/geod",
    ]
    print(header.map { $0.padding(toLength: 14, withPad: " ", startingAt: 0) }.joined())
    let geodesic = Geodesic.wgs84
    for (name, lines) in classes {
      var bodies: [(Line) -> Double] = [
        { haversine($0) },
        {
          geodesic.distance(
            latitude1: $0.lat1, longitude1: $0.lon1, latitude2: $0.lat2, longitude2: $0.lon2)
        },
        {
          let r = geodesic.inverse(
            latitude1: $0.lat1, longitude1: $0.lon1, latitude2: $0.lat2, longitude2: $0.lon2)
          return r.distance + r.azimuth1 + r.azimuth2
        },
      ]
      if let proj { bodies.append { proj.inverse($0) } }
      let times = time(lines, bodies)
      let haversineNs = times[0]
      let distanceNs = times[1]
      let inverseNs = times[2]
      let projNs = times.count > 3 ? times[3] : .nan
      var worstDifference = 0.0
      if let proj {
        for line in lines.prefix(10_000) {
          let ours = geodesic.distance(
            latitude1: line.lat1, longitude1: line.lon1, latitude2: line.lat2, longitude2: line.lon2
          )
          worstDifference = max(worstDifference, abs(ours - proj.distance(line)))
        }
      }
      let cells = [
        name, format(haversineNs), format(distanceNs), format(inverseNs), format(projNs),
        format(distanceNs / haversineNs, ratio: true), format(distanceNs / projNs, ratio: true),
        format(inverseNs / projNs, ratio: true),
      ]
      print(cells.map { $0.padding(toLength: 14, withPad: " ", startingAt: 0) }.joined())
      if proj != nil {
        print("  largest |distance - geod_inverse| over 10,000 lines: \(worstDifference) m")
      }
    }
    print(
      "distance: short lines take the chord fast path; inverse: always Karney (2013) with azimuths."
    )
    print(
      "targets: distance/hav <= 3 on short lines; distance/geod and inverse/geod < 1 everywhere")

    // World Magnetic Model: one full evaluation (field and secular variation) per call.
    var rng = SplitMix64(seed: 4)
    var points: [(Double, Double, Double, Double)] = []
    for _ in 0..<20_000 {
      points.append(
        (
          asin(rng.uniform(-1...1)) * 180 / .pi, rng.uniform(-180...180), rng.uniform(0...10_000),
          rng.uniform(2010...2030)
        ))
    }
    let wmmNs = time(
      points,
      [
        { (point: (Double, Double, Double, Double)) -> Double in
          let field = try? MagneticModel.field(
            latitude: point.0, longitude: point.1, height: point.2, decimalYear: point.3)
          return field?.declination ?? 0
        }
      ])[0]
    let haversineBaseline = time(classes[0].lines, [{ haversine($0) }])[0]
    print(
      "WMM field (degree 12, with yearly change): \(format(wmmNs)) ns per call "
        + "(\(format(wmmNs / haversineBaseline, ratio: true)) haversines)")
    Sink.report()
  }

  static func format(_ value: Double, ratio: Bool = false) -> String {
    guard value.isFinite else { return "-" }
    return ratio ? String(format: "%.2fx", value) : String(format: "%.1f", value)
  }

  /// PROJ's geodesic functions, found at run time.
  struct Proj {
    typealias Init = @convention(c) (UnsafeMutableRawPointer, Double, Double) -> Void
    typealias Inverse =
      @convention(c) (
        UnsafeRawPointer, Double, Double, Double, Double, UnsafeMutablePointer<Double>?,
        UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?
      ) -> Void

    let name: String
    let geodInverse: Inverse
    /// `struct geod_geodesic` is 51 doubles (408 bytes) in PROJ 9 (geodesic.h); 4 KiB leaves
    /// room for any future growth.
    let geodesic: UnsafeMutableRawPointer

    static func load() -> Proj? {
      var names = [
        "libproj.so.25", "libproj.so", "libproj.so.26", "libproj.so.22", "libproj.so.19",
      ]
      let directory = "/usr/lib/x86_64-linux-gnu"
      if let files = try? FileManager.default.contentsOfDirectory(atPath: directory) {
        names += files.filter { $0.hasPrefix("libproj.so") }.sorted().map { directory + "/" + $0 }
      }
      for name in names {
        guard let handle = dlopen(name, RTLD_NOW) else { continue }
        guard let initSymbol = dlsym(handle, "geod_init"),
          let inverseSymbol = dlsym(handle, "geod_inverse")
        else { continue }
        let geodInit = unsafeBitCast(initSymbol, to: Init.self)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4_096, alignment: 64)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 4_096)
        geodInit(buffer, 6_378_137, 1 / 298.257_223_563)
        return Proj(
          name: name, geodInverse: unsafeBitCast(inverseSymbol, to: Inverse.self), geodesic: buffer)
      }
      return nil
    }

    /// Distance and both azimuths, as our `inverse` computes.
    @inline(__always)
    func inverse(_ line: Line) -> Double {
      var s12 = 0.0
      var azi1 = 0.0
      var azi2 = 0.0
      geodInverse(geodesic, line.lat1, line.lon1, line.lat2, line.lon2, &s12, &azi1, &azi2)
      return s12 + azi1 + azi2
    }

    func distance(_ line: Line) -> Double {
      var s12 = 0.0
      geodInverse(geodesic, line.lat1, line.lon1, line.lat2, line.lon2, &s12, nil, nil)
      return s12
    }
  }

  /// A black hole for benchmark results: everything computed is added here and printed at the end,
  /// so no timed work is dead code.
  enum Sink {
    // Only the benchmark's single thread touches this.
    nonisolated(unsafe) static var total = 0.0

    @inline(never)
    static func consume(_ value: Double) { total += value }

    static func report() { print("(checksum \(total))") }
  }
}
