// locbench: the project's benchmarks. Each prints ratios against a baseline measured in the same run
// (CONTRIBUTING.md); none is part of the test suite's pass/fail.
//
//   swift run -c release locbench \
//     [geodesy|nmea|replay|regions|store|power|visits|beacons|wifi|daemon|latency|geocode|publish|
//      install|hostile|all]
//
// `hostile-attacker` and `hostile-identity` are the programs `locbench hostile` runs as another
// uid, and `publish-fleet-worker` the simulated devices `locbench publish` runs: not benchmarks.
import Foundation

let benches: [(name: String, summary: String, run: () -> Void)] = [
  ("geodesy", "inverse geodesic vs haversine and PROJ; WMM cost", GeodesyBench.run),
  ("nmea", "NMEA 0183 decoding throughput on a generated 50 MB log", NMEABench.run),
  ("replay", "GPX decoding and the engine pipeline on a 1,000,000-point track", ReplayBench.run),
  ("regions", "1,000,000 regions against a moving trace: index vs linear scan", RegionsBench.run),
  ("store", "integrity check at start on a 1,000,000-region store vs a clean open", StoreBench.run),
  (
    "power", "receiver on-time under significant change, auto-pause and visits on 3 traces",
    PowerBench.run
  ),
  (
    "visits", "visit detection on 20 seeded synthetic days: precision, recall, time errors",
    VisitsBench.run
  ),
  (
    "beacons",
    "iBeacon decoding and ranging per second, delivery time with 500 beacons, accuracy on walks",
    BeaconBench.run
  ),
  (
    "wifi",
    "Wi-Fi learning and positioning on a seeded town: errors, moved access points, time per locate",
    WifiBench.run
  ),
  (
    "daemon",
    "locationd vs gpsd: one NMEA feed fanned out to 500 clients (--interleave: with the floor, in the same minutes)",
    DaemonBench.run
  ),
  (
    "latency", "receiver's last byte to the app: gpsd vs embedded, liveUpdates and locationd",
    LatencyBench.run
  ),
  (
    "geocode", "offline gazetteer vs Python reverse_geocoder; correctness vs timezonefinder",
    GeocodeBench.run
  ),
  (
    "publish",
    "MQTT store-and-forward: 10 Hz latency, outbox throughput after an outage, vs mosquitto_pub;"
      + " a fleet of 10-1,000 devices at 1 Hz (--fleet-seconds N, --fleet-only)",
    PublishBench.run
  ),
  (
    "install", "installed size, and whereami's cold start against gpspipe on gpsd",
    InstallBench.run
  ),
  (
    "hostile",
    "system locationd vs one hostile uid, attacks F1-F10 (root; --seconds N per row, default 60)",
    HostileBench.run
  ),
]

let arguments = Array(CommandLine.arguments.dropFirst())
let wanted = arguments.first ?? "help"
if wanted == GeocodeBench.firstLookupMode {
  GeocodeBench.firstLookupChild(arguments: Array(arguments.dropFirst()))
} else if wanted == DaemonBenchProcessFloor.mode {
  DaemonBenchProcessFloor.main(Array(arguments.dropFirst()))
} else if wanted == LatencyBenchClient.mode {
  LatencyBenchClient.main(Array(arguments.dropFirst()))
} else if wanted == PublishFleetBench.workerMode {
  PublishFleetBench.worker(Array(arguments.dropFirst()))
} else if wanted == HostileAttacker.mode {
  HostileAttacker.main(Array(arguments.dropFirst()))
} else if wanted == HostileIdentity.mode {
  HostileIdentity.main(Array(arguments.dropFirst()))
} else if wanted == "all" {
  for bench in benches {
    print("== \(bench.name)")
    bench.run()
  }
} else if let bench = benches.first(where: { $0.name == wanted }) {
  bench.run()
} else {
  print("usage: locbench {\(benches.map(\.name).joined(separator: "|"))|all}")
  for bench in benches { print("  \(bench.name): \(bench.summary)") }
  exit(wanted == "help" || wanted == "-h" || wanted == "--help" ? 0 : 2)
}
