// locbench regions: RegionMonitor's spatial index against a linear scan, in the same run.
//
//   swift run -c release locbench regions [regions] [fixes] [scanned fixes]
//
// Defaults: 1,000,000 circular regions (radius 50 m to 1 km, uniform) spread uniformly over a
// 500 km by 500 km area, and a vehicle trace of 100,000 fixes at 1 Hz (10-30 m/s, with turns,
// accuracy 5-20 m), all seeded. The first fix (which determines every region) and 1,000 more fixes
// warm up; then each evaluation of the 100,000 timed fixes is timed with CLOCK_MONOTONIC. The
// baseline evaluates every region with the exact distance (what a monitor without an index does),
// on 200 fixes spread over the trace, replayed on a copy of the monitor so that the timed run keeps
// its caches; the copy also checks that the index and the scan give identical events.
import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationStore

enum RegionsBench {
  typealias Generator = SplitMix64

  struct Position {
    var latitude: Double
    var longitude: Double
    var accuracy: Double
  }

  static let originLatitude = 47.5
  static let originLongitude = 10.0
  static let metresPerDegreeLatitude = 111_132.954
  static let metresPerDegreeLongitude = 111_319.491 * cos(originLatitude * .pi / 180)

  static func nanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }

  static func threadCPUNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }

  static func spec(_ i: Int, _ rng: inout Generator) -> RegionSpec {
    let x = Double.random(in: -250_000...250_000, using: &rng)
    let y = Double.random(in: -250_000...250_000, using: &rng)
    return RegionSpec(
      identifier: "region-\(i)",
      latitude: originLatitude + y / metresPerDegreeLatitude,
      longitude: originLongitude + x / metresPerDegreeLongitude,
      radius: Double.random(in: 50...1000, using: &rng))
  }

  /// A vehicle: speed 10-30 m/s drifting, straight stretches and turns of 30-120° at 3-10°/s,
  /// steering back towards the middle near the edge of the area; fixes scattered by up to half
  /// their accuracy.
  static func trace(count: Int, _ rng: inout Generator) -> [Position] {
    var x = 0.0
    var y = 0.0
    var heading = Double.random(in: 0..<360, using: &rng)
    var speed = 20.0
    var turnLeft = 0.0
    var turnRate = 0.0
    var result: [Position] = []
    result.reserveCapacity(count)
    for _ in 0..<count {
      speed = min(30, max(10, speed + Double.random(in: -1...1, using: &rng)))
      if turnLeft == 0 && Double.random(in: 0..<1, using: &rng) < 1.0 / 60 {
        turnLeft = Double.random(in: 30...120, using: &rng) * (Bool.random(using: &rng) ? 1 : -1)
        turnRate = Double.random(in: 3...10, using: &rng)
      }
      if abs(x) > 240_000 || abs(y) > 240_000 {
        let home = atan2(-x, -y) * 180 / .pi
        let off = (home - heading + 540).truncatingRemainder(dividingBy: 360) - 180
        turnLeft = off
        turnRate = 10
      }
      if turnLeft != 0 {
        let step = min(abs(turnLeft), turnRate) * (turnLeft > 0 ? 1 : -1)
        heading += step
        turnLeft -= step
      }
      x += speed * sin(heading * .pi / 180)
      y += speed * cos(heading * .pi / 180)
      let accuracy = Double.random(in: 5...20, using: &rng)
      let nx = x + Double.random(in: -accuracy / 2...accuracy / 2, using: &rng)
      let ny = y + Double.random(in: -accuracy / 2...accuracy / 2, using: &rng)
      result.append(
        Position(
          latitude: originLatitude + ny / metresPerDegreeLatitude,
          longitude: originLongitude + nx / metresPerDegreeLongitude, accuracy: accuracy))
    }
    return result
  }

  /// The baseline: every region, the exact distance, the state machine.
  static func scan(
    _ specs: [RegionSpec], _ states: inout [RegionState], _ fix: Position
  ) -> [RegionEvent] {
    var events: [RegionEvent] = []
    for i in 0..<specs.count {
      let s = specs[i]
      let d = Geodesic.wgs84.distance(
        latitude1: fix.latitude, longitude1: fix.longitude, latitude2: s.latitude,
        longitude2: s.longitude)
      var machine = RegionStateMachine(state: states[i])
      let action = machine.observe(
        .of(distance: d, radius: s.radius, accuracy: fix.accuracy, hysteresis: s.hysteresis))
      states[i] = machine.state
      func event(_ kind: RegionEvent.Kind) -> RegionEvent {
        RegionEvent(
          identifier: s.identifier, kind: kind, notifyOnEntry: s.notifyOnEntry,
          notifyOnExit: s.notifyOnExit)
      }
      switch action {
      case .none: break
      case .determine(let state): events.append(event(.determined(state)))
      case .enter: events += [event(.entered), event(.determined(.inside))]
      case .exit: events += [event(.exited), event(.determined(.outside))]
      }
    }
    return events
  }

  static func percentile(_ sorted: [Int64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let i = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
    return Double(sorted[i])
  }

  static func format(_ ns: Double) -> String {
    ns >= 1_000_000
      ? String(format: "%.2f ms", ns / 1e6)
      : ns >= 1000 ? String(format: "%.2f µs", ns / 1000) : String(format: "%.0f ns", ns)
  }

  static func run() {
    let arguments = CommandLine.arguments
    let regionCount = arguments.count > 2 ? Int(arguments[2]) ?? 1_000_000 : 1_000_000
    let fixCount = arguments.count > 3 ? Int(arguments[3]) ?? 100_000 : 100_000
    let scanCount = arguments.count > 4 ? Int(arguments[4]) ?? 200 : 200
    let warmUpCount = 1000
    print(
      "regions: \(regionCount) circles r 50-1000 m over 500 km x 500 km; "
        + "\(fixCount) timed fixes at 1 Hz, 10-30 m/s, accuracy 5-20 m; seed 42")

    // Build.
    var rng = Generator(seed: 42)
    let rssBefore = Int(ProcessMemory.residentBytes())
    var monitor = RegionMonitor()
    let buildStart = nanoseconds()
    monitor.reserveCapacity(regionCount, identifierBytes: regionCount * 13)
    for i in 0..<regionCount {
      do { try monitor.add(spec(i, &rng)) } catch {
        print("error: \(error)")
        return
      }
    }
    let addEnd = nanoseconds()
    monitor.buildIndex()
    let buildEnd = nanoseconds()
    let rssAfter = Int(ProcessMemory.residentBytes())
    let own = monitor.storageBytes
    print(
      "build: add \(format(Double(addEnd - buildStart))), index \(format(Double(buildEnd - addEnd)))"
        + ", total \(format(Double(buildEnd - buildStart)))")
    print(
      String(
        format:
          "memory: %.1f bytes/region resident (RSS %.1f -> %.1f MB), %.1f bytes/region counted",
        Double(rssAfter - rssBefore) / Double(regionCount), Double(rssBefore) / 1e6,
        Double(rssAfter) / 1e6, Double(own) / Double(regionCount)))

    let fixes = trace(count: warmUpCount + 1 + fixCount, &rng)
    // The copy that replays the trace for the baseline; its storage is shared until `monitor`
    // writes, which happens in the warm-up below.
    var replay = monitor

    // Warm-up: the first fix determines every region.
    let firstStart = nanoseconds()
    let firstEvents = monitor.evaluate(
      latitude: fixes[0].latitude, longitude: fixes[0].longitude, accuracy: fixes[0].accuracy)
    let firstEnd = nanoseconds()
    print(
      "first fix: \(format(Double(firstEnd - firstStart))) "
        + "(\(firstEvents.count) determinations; \(monitor.states.filter { $0 == .inside }.count) inside)"
    )
    for fix in fixes[1...warmUpCount] {
      _ = monitor.evaluate(latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy)
    }

    // Timed run.
    var quiet: [Int64] = []
    var busy: [Int64] = []
    quiet.reserveCapacity(fixCount)
    var eventCount = 0
    var clockOverhead = Int64.max
    for _ in 0..<1000 {
      let a = nanoseconds()
      let b = nanoseconds()
      clockOverhead = min(clockOverhead, b - a)
    }
    let runStart = nanoseconds()
    let cpuStart = threadCPUNanoseconds()
    for fix in fixes[(warmUpCount + 1)...] {
      let start = nanoseconds()
      let events = monitor.evaluate(
        latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy)
      let elapsed = nanoseconds() - start
      if events.isEmpty {
        quiet.append(elapsed)
      } else {
        busy.append(elapsed)
        eventCount += events.count
      }
    }
    let runEnd = nanoseconds()
    let cpuEnd = threadCPUNanoseconds()
    quiet.sort()
    busy.sort()
    let meanIndexed = Double(runEnd - runStart) / Double(fixCount)
    let quietMedian = percentile(quiet, 0.5)
    let quietP99 = percentile(quiet, 0.99)
    print(
      "indexed, fixes without a change (\(quiet.count)): median \(format(quietMedian)), "
        + "p99 \(format(quietP99)), p99.9 \(format(percentile(quiet, 0.999))), "
        + "max \(format(Double(quiet.last ?? 0)))")
    print(
      "indexed, fixes with a change (\(busy.count), \(eventCount) events): median "
        + "\(format(percentile(busy, 0.5))), p99 \(format(percentile(busy, 0.99)))")
    print(
      "indexed, all fixes: mean \(format(meanIndexed)) wall, "
        + "\(format(Double(cpuEnd - cpuStart) / Double(fixCount))) thread CPU "
        + "(clock read \(clockOverhead) ns, included)")

    // Baseline on a subsample, replayed on the copy.
    let specs = replay.specs
    let sampleEvery = max(1, fixCount / max(1, scanCount))
    var scanTime: Int64 = 0
    var scanned = 0
    var mismatches = 0
    for (i, fix) in fixes.enumerated() {
      let isSample =
        i > warmUpCount && (i - warmUpCount - 1) % sampleEvery == 0 && scanned < scanCount
      if isSample {
        var states = replay.states
        let start = nanoseconds()
        let expected = scan(specs, &states, fix)
        scanTime += nanoseconds() - start
        scanned += 1
        let actual = replay.evaluate(
          latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy)
        if actual != expected { mismatches += 1 }
      } else {
        _ = replay.evaluate(
          latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy)
      }
    }
    let meanScan = Double(scanTime) / Double(max(1, scanned))
    print(
      "linear scan (\(scanned) fixes): mean \(format(meanScan)) per fix; "
        + "events identical to the index on \(scanned - mismatches) of \(scanned)")
    print(
      String(
        format:
          "speed-up: %.0fx (scan mean / indexed median, quiet fixes), %.0fx (scan mean / indexed mean, all fixes)",
        meanScan / quietMedian, meanScan / meanIndexed))
    let ok =
      quietMedian <= 1000 && quietP99 <= 20_000 && meanScan / meanIndexed >= 1000
      && Double(max(own, rssAfter - rssBefore)) / Double(regionCount) <= 200 && mismatches == 0
    print(
      "targets (median <= 1 µs, p99 <= 20 µs, >= 1000x, <= 200 B/region, identical events): "
        + (ok ? "met" : "NOT met"))
    storeLoad(regionCount: regionCount, inMemoryBuild: Double(buildEnd - buildStart))
  }

  /// Loading the regions from the SQLite store at launch, as a hub does: read every row, add each to
  /// a monitor with its state, build the index. Baseline: building the same monitor from specs
  /// already in memory (measured above).
  static func storeLoad(regionCount: Int, inMemoryBuild: Double) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "locbench-regions-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    do {
      var rng = Generator(seed: 42)
      var rows: [StoredRegion] = []
      rows.reserveCapacity(regionCount)
      for i in 0..<regionCount {
        let region = spec(i, &rng)
        rows.append(
          StoredRegion(
            app: "bench", group: "manager", identifier: region.identifier,
            latitude: region.latitude,
            longitude: region.longitude, radius: region.radius, hysteresis: region.hysteresis,
            state: i % 3))
      }
      let writeStart = nanoseconds()
      try LocationStore(path: path).upsertRegions(rows)
      let writeEnd = nanoseconds()
      rows = []
      let loadStart = nanoseconds()
      let stored = try LocationStore(path: path).allRegions()
      let readEnd = nanoseconds()
      var monitor = RegionMonitor()
      monitor.reserveCapacity(stored.count, identifierBytes: stored.count * 13)
      for row in stored {
        try monitor.add(
          RegionSpec(
            identifier: row.identifier, latitude: row.latitude, longitude: row.longitude,
            radius: row.radius, hysteresis: row.hysteresis, notifyOnEntry: row.notifyOnEntry,
            notifyOnExit: row.notifyOnExit),
          initialState: RegionState(rawValue: row.state) ?? .unknown)
      }
      monitor.buildIndex()
      let loadEnd = nanoseconds()
      let load = Double(loadEnd - loadStart)
      print(
        "store: write \(monitor.count) regions in one transaction \(format(Double(writeEnd - writeStart))); "
          + "load at launch \(format(load)) (read \(format(Double(readEnd - loadStart))), "
          + "monitor + index \(format(Double(loadEnd - readEnd))))")
      print(
        String(
          format: "  ratio store load / in-memory build: %.2f; target load <= 3 s: %@",
          load / inMemoryBuild,
          load <= 3e9 ? "met" : "NOT met"))
    } catch {
      print("store: error: \(error)")
    }
  }
}
