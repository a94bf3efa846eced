// locbench store: what SQLite's integrity check costs at start after an unclean shutdown (README,
// "When the store fails"), on a store of 1,000,000 regions, against baselines measured in the same
// run.
//
//   swift run -c release locbench store [regions]
//
// Builds a store of N regions (default 1,000,000; 10 apps, identifiers and numbers varied, seeded)
// in a temporary directory, closes it, then times with CLOCK_MONOTONIC, best of 3:
// - opening it after a clean shutdown (no check: the baseline);
// - opening it after an unclean one (a `-wal` left beside it), which runs `PRAGMA quick_check`;
// - reading the whole file with read(2) (the I/O floor of any whole-file check; the file is in the
//   page cache after the first pass, so this is the CPU-bound case a daemon restart meets);
// - loading every region (`allRegions()`), what the daemon does at start anyway.
// The directory is removed afterwards.
import Foundation
import LocationStore

enum StoreBench {
  static func run() {
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    let count = arguments.first.flatMap { Int($0) } ?? 1_000_000
    let directory = NSTemporaryDirectory() + "locbench-store-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/store.sqlite"
    do {
      let built = try measure {
        let store = try LocationStore(path: path)
        var batch: [StoredRegion] = []
        batch.reserveCapacity(10_000)
        for index in 0..<count {
          batch.append(region(index))
          if batch.count == 10_000 {
            try store.upsertRegions(batch)
            batch.removeAll(keepingCapacity: true)
          }
        }
        if !batch.isEmpty { try store.upsertRegions(batch) }
        store.close()
      }
      let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
      print(
        "store of \(count) regions: \(size / 1_048_576) MiB, built in \(format(built)) s "
          + "(SQLite \(LocationStore.sqliteVersion))")

      let clean = try best {
        let opening = try LocationStore.open(path: path, alwaysCheckUpTo: 0)
        precondition(!opening.checkedIntegrity)
        opening.store.close()
      }
      let unclean = try best {
        _ = FileManager.default.createFile(atPath: path + "-wal", contents: Data())
        let opening = try LocationStore.open(path: path)
        precondition(opening.checkedIntegrity && opening.notices.isEmpty)
        opening.store.close()
      }
      let read = try best { try readWhole(path) }
      let load = try best {
        let store = try LocationStore(path: path)
        let loaded = try store.allRegions().count
        precondition(loaded == count)
        store.close()
      }
      print("open after a clean shutdown (no check):  \(format(clean)) s")
      print(
        "open after an unclean one (quick_check): \(format(unclean)) s  "
          + "(\(ratio(unclean, clean)) the clean open)")
      print(
        "  the check alone:                       \(format(unclean - clean)) s  "
          + "(\(ratio(unclean - clean, read)) reading the file, \(ratio(unclean - clean, load)) "
          + "loading every region)")
      print("read(2) of the whole file:               \(format(read)) s")
      print("loading every region (allRegions):       \(format(load)) s")
    } catch {
      print("locbench store: \(error)")
      exit(1)
    }
  }

  static func region(_ index: Int) -> StoredRegion {
    StoredRegion(
      app: "org.example.app\(index % 10)", group: "manager", identifier: "region-\(index)",
      latitude: -60 + Double(index % 12_000) / 100, longitude: -170 + Double(index % 34_000) / 100,
      radius: 50 + Double(index % 1_000), hysteresis: 5, notifyOnEntry: index % 2 == 0,
      notifyOnExit: index % 3 != 0, state: index % 3, stateTime: index % 5 == 0 ? nil : 1.7e9,
      extra: nil)
  }

  static func readWhole(_ path: String) throws {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw CocoaError(.fileReadUnknown) }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
  }

  static func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
  }

  static func measure(_ body: () throws -> Void) throws -> Double {
    let start = now()
    try body()
    return now() - start
  }

  static func best(_ body: () throws -> Void) throws -> Double {
    var result = Double.infinity
    for _ in 0..<3 { result = min(result, try measure(body)) }
    return result
  }

  static func format(_ seconds: Double) -> String { String(format: "%.3f", seconds) }

  static func ratio(_ value: Double, _ base: Double) -> String {
    base > 0 ? String(format: "%.1f×", value / base) : "n/a"
  }
}
