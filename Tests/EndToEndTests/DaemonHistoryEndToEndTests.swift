import Foundation
import LocationFormats
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 18's track history through the built programs: `locationd` with `history = yes` on a
/// replayed track keeps its positions in the store, and the built `locationctl export` writes
/// them as GPX that the project's own decoder reads back, and as GeoJSON.
@Suite(.serialized) struct DaemonHistoryEndToEndTests {
  static let tools = [RealComponents.sqlite3]

  @Test(
    .enabled(
      if: DaemonE2E.available(tools: tools)
        && (RealComponents.isCI || BuiltPrograms.locationctl != nil),
      DaemonE2E.missing(tools: tools)))
  func theBuiltDaemonRecordsAndLocationctlExports() async throws {
    try DaemonE2E.requireComponents(tools: Self.tools)
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // One point a second from 2026-01-01T00:00:00Z, replayed twenty times faster; the points
    // keep their recorded times, so the retention is long enough to keep them.
    try DaemonE2E.writeTrack(directory + "/track.gpx", count: 300, step: 5)
    let config = directory + "/history.conf"
    try "history = yes\nhistory-days = 3650\nhistory-interval = 2\n".write(
      toFile: config, atomically: true, encoding: .utf8)
    chmod(config, 0o600)
    let store = LocationdProcess.store(directory)
    let socket = LocationdProcess.socket(directory)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(
        directory, sources: ["replay://" + directory + "/track.gpx?speed=20"], config: config))
    defer { daemon.stop(SIGKILL) }
    let recorded = await eventually(timeout: 120, interval: 0.05) {
      (Int((try? DaemonE2E.query(store, "SELECT count(*) FROM track_history")) ?? "") ?? 0) >= 20
    }
    #expect(recorded, "nothing recorded: \(daemon.log.suffix(5))")
    guard recorded else { return }

    let file = directory + "/export.gpx"
    let gpx = try LocationctlEndToEndTests.locationctl([
      "export", "--since", "2025-12-31", "--until", "2026-01-02T00:00:00+01:00", "--gpx", "-o",
      file, "--socket", socket,
    ])
    #expect(gpx.status == 0, "\(gpx.stderr)")
    #expect(gpx.stdout.hasPrefix("Exported ") && gpx.stdout.hasSuffix(" points to \(file).\n"))
    let document = try GPXDecoder.decode(path: file)
    let times = document.points.compactMap(\.time)
    #expect(times.count >= 20 && times.count == document.points.count)
    #expect(times.allSatisfy { $0 >= 1_767_225_600 && $0 < 1_767_225_900 }, "the track's times")
    // history-interval = 2: two seconds apart at least, in order.
    #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 2 })
    #expect(document.points.allSatisfy { $0.fix.latitude == 52 && $0.fix.longitude >= 5 })

    let geojson = try LocationctlEndToEndTests.locationctl([
      "export", "--since", "2025-12-31T00:00:00Z", "--geojson", "--socket", socket,
    ])
    #expect(geojson.status == 0, "\(geojson.stderr)")
    let object = try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8))
    let features = (object as? [String: Any])?["features"] as? [[String: Any]] ?? []
    #expect(features.count >= times.count)

    let bad = try LocationctlEndToEndTests.locationctl([
      "export", "--since", "last week", "--gpx", "--socket", socket,
    ])
    #expect(bad.status == 2 && bad.stderr.contains("--since 'last week' is not a time"))
  }
}
