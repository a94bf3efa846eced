import Foundation
import LocationControl
import LocationDaemon
import LocationFormats
import LocationModel
import LocationProtocol
import LocationStore
import Synchronization
import TestSupport
import Testing

/// Track history (issue 18) end to end in-process: the daemon records its own positions (the
/// interval applied, invalid fixes left out), serves them a page at a time to the control role
/// (`history`), `locationctl export` writes them as GPX that reads back and as GeoJSON, old
/// points are pruned at start and every hour, and a daemon with history off says so.
@Suite(.serialized) struct DaemonHistoryTests {
  /// The fixture's manual clock starts here (2026-01-01T00:00:00Z).
  static let start = 1_767_225_600.0

  /// What `locationctl` writes.
  final class Output: Sendable {
    let text = Mutex("")
    let errors = Mutex("")
    var io: ControlIO {
      ControlIO(
        input: -1, output: { [self] line in text.withLock { $0 += line } },
        error: { [self] line in errors.withLock { $0 += line } })
    }
  }

  static func fix(_ second: Double, accuracy: Double = 4) -> Fix {
    Fix(
      latitude: 52.37 + second * 1e-4, longitude: 4.89 - second * 1e-4, altitude: 2 + second,
      horizontalAccuracy: accuracy, verticalAccuracy: 8, speed: 5, course: 10,
      time: start + second, quality: .autonomous)
  }

  /// Every page of the history through the control role, `limit` points a page.
  static func pages(_ control: TestPeer, since: Double? = nil, limit: Int) throws -> [[Fix]] {
    var pages: [[Fix]] = []
    var cursor: DaemonHistoryCursor?
    var id = 10
    repeat {
      control.send(
        .history(id: id, query: DaemonHistoryQuery(since: since, after: cursor, limit: limit)))
      guard case .reply(id, .history(let page)) = try control.next() else {
        throw TestFailure("no history page")
      }
      pages.append(page.points)
      cursor = page.next
      id += 1
    } while cursor != nil && pages.count < 100
    return pages
  }

  @Test func positionsAreRecordedAndExportedInPages() async throws {
    let daemon = try DaemonFixture { $0.history.enabled = true }
    defer { daemon.stop() }
    #expect(await eventually { daemon.source.isRunning }, "the recorder asks for locations")
    // 1 Hz, with a fix half a second after another (under history-interval) and one without a
    // valid coordinate: neither is kept.
    for second in 0..<7 {
      daemon.source.emit(Self.fix(Double(second)))
      if second == 3 {
        daemon.source.emit(Self.fix(3.5))
        daemon.source.emit(Self.fix(3.7, accuracy: -1))
      }
      daemon.clock.advance(by: 1)
    }
    let expected = (0..<7).map { Self.start + Double($0) }
    #expect(await eventually { (try? daemon.store.historyCount()) == 7 })
    let (control, _) = try daemon.peer(.control)
    // Three points a page: the boundary falls inside the track, and the last page is empty.
    let pages = try Self.pages(control, limit: 3)
    #expect(pages.map(\.count) == [3, 3, 1])
    let points = pages.flatMap { $0 }
    #expect(points.map(\.time) == expected)
    #expect(points[2] == Self.fix(2).kept)
    // Bounds: since included.
    #expect(try Self.pages(control, since: Self.start + 5, limit: 100).flatMap { $0 }.count == 2)

    // locationctl status: what the history holds.
    control.send(.status(id: 90))
    guard case .reply(90, .status(let daemonStatus)) = try control.next() else {
      Issue.record("no status")
      return
    }
    #expect(
      daemonStatus.history
        == DaemonHistoryStatus(points: 7, oldest: expected.first, newest: expected.last, days: 30))
    let text = ControlFormatter.status(daemonStatus)
    #expect(text.contains("Track history: 7 points from 2026-01-01 00:00:00"), "\(text)")
    #expect(text.contains("00:00:06Z, kept 30 days\n"), "\(text)")

    // locationctl export, GPX to a file: the project's own decoder reads it back.
    let file = daemon.directory + "/track.gpx"
    let gpx = Output()
    let status = LocationControlCommand.run(
      arguments: [
        "export", "--since", "2025-12-31T23:59:00Z", "--gpx", "-o", file, "--socket",
        daemon.socketPath,
      ], environment: [:], io: gpx.io)
    #expect(status == 0, "\(gpx.errors.withLock { $0 })")
    #expect(gpx.text.withLock { $0 } == "Exported 7 points to \(file).\n")
    let document = try GPXDecoder.decode(path: file)
    #expect(document.version == "1.1" && document.warnings.isEmpty)
    #expect(document.points.compactMap(\.time) == expected && document.points.count == 7)
    #expect(document.points.allSatisfy { $0.kind == .track && $0.segment == 0 })
    #expect(document.points.map(\.fix.latitude) == points.map(\.latitude))
    #expect(document.points.map(\.fix.longitude) == points.map(\.longitude))
    #expect(document.points.map(\.fix.altitude) == points.map(\.altitude))
    #expect(document.points.map(\.fix.speed) == points.map(\.speed))

    // GeoJSON to standard output: a FeatureCollection of points, [lon, lat, alt].
    let geojson = Output()
    #expect(
      LocationControlCommand.run(
        arguments: [
          "export", "--since", "@\(Int(Self.start) + 4)", "--until", "@\(Int(Self.start) + 6)",
          "--geojson", "--socket", daemon.socketPath,
        ], environment: [:], io: geojson.io) == 0)
    let object = try JSONSerialization.jsonObject(with: Data(geojson.text.withLock { $0 }.utf8))
    let collection = try #require(object as? [String: Any])
    #expect(collection["type"] as? String == "FeatureCollection")
    let features = try #require(collection["features"] as? [[String: Any]])
    #expect(features.count == 2)
    let geometry = try #require(features.first?["geometry"] as? [String: Any])
    let coordinates = try #require(geometry["coordinates"] as? [Double])
    #expect(coordinates == [points[4].longitude, points[4].latitude, 6])
    let properties = try #require(features.first?["properties"] as? [String: Any])
    #expect(properties["time"] as? String == "2026-01-01T00:00:04Z")
    #expect(properties["horizontalAccuracy"] as? Double == 4)
  }

  @Test func oldPointsArePrunedAtStartAndEveryHour() async throws {
    let store = try LocationStore.inMemory()
    let day = 86_400.0
    try store.appendHistory(
      [Self.start - 40 * day, Self.start - 30 * day + 1800, Self.start - day].map {
        Fix(latitude: 1, longitude: 2, horizontalAccuracy: 5, time: $0)
      })
    let daemon = try DaemonFixture(store: store) {
      $0.history.enabled = true
      $0.history.retentionDays = 30
    }
    defer { daemon.stop() }
    // At start: the point 40 days old goes.
    #expect(try store.historyCount() == 2)
    // An hour later the one 30 days and half an hour old has passed the edge too.
    daemon.clock.advance(by: 3600)
    #expect(try store.historyCount() == 1)
    #expect(try store.history(limit: 10).fixes.map(\.time) == [Self.start - day])
  }

  /// Positions are committed in batches, a second after the first of a batch, not one
  /// transaction a fix; what waits when the daemon stops is committed then.
  @Test func positionsAreCommittedInBatchesAndAtStop() throws {
    let store = try LocationStore.inMemory()
    let daemon = try DaemonFixture(store: store) { $0.history.enabled = true }
    for second in 0..<5 { daemon.source.emit(Self.fix(Double(second))) }
    #expect(try store.historyCount() == 0, "nothing committed before the batch is due")
    daemon.clock.advance(by: 0.5)
    #expect(try store.historyCount() == 0)
    daemon.clock.advance(by: 0.5)
    #expect(try store.historyCount() == 5, "one batch")
    daemon.source.emit(Self.fix(5))
    daemon.source.emit(Self.fix(6))
    daemon.stop()
    #expect(try store.historyCount() == 7, "committed at stop")
  }

  /// A store that cannot commit (a full disk, from the fault-injecting VFS) costs no point and
  /// no crash: the batch waits and is committed once the store takes it again.
  @Test func aFailingStoreKeepsTheBatchUntilItCommits() throws {
    try withTemporaryDirectory { directory in
      let faults = try StoreFaults()
      let store = try LocationStore(path: directory + "/store.sqlite", vfs: faults.vfs)
      let daemon = try DaemonFixture(store: store) { $0.history.enabled = true }
      defer { daemon.stop() }
      faults.arm([.write], persistent: true, failure: .full)
      for second in 0..<5 {
        daemon.source.emit(Self.fix(Double(second)))
        daemon.clock.advance(by: 1)
      }
      faults.disarm()
      #expect(try store.historyCount() == 0, "nothing committed while the disk is full")
      daemon.clock.advance(by: 2)
      #expect(
        try store.history(limit: 10).fixes.map(\.time) == (0..<5).map { Self.start + Double($0) })
    }
  }

  @Test func historyOffIsAClearError() async throws {
    let daemon = try DaemonFixture()
    defer { daemon.stop() }
    let (control, _) = try daemon.peer(.control)
    control.send(.history(id: 3, query: DaemonHistoryQuery()))
    guard case .error(let error) = try control.next() else {
      Issue.record("no error")
      return
    }
    #expect(error.id == 3 && error.code == .unsupported)
    #expect(error.message.contains("track history is off: set history = yes"))
    // locationctl says so too, and leaves no file behind.
    let output = Output()
    let file = daemon.directory + "/none.gpx"
    let status = LocationControlCommand.run(
      arguments: ["export", "--since", "7d", "--gpx", "-o", file, "--socket", daemon.socketPath],
      environment: [:], io: output.io)
    #expect(status == 1)
    #expect(output.errors.withLock { $0 }.contains("track history is off"))
    #expect(!FileManager.default.fileExists(atPath: file))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: daemon.directory).filter {
        $0.hasPrefix("none.gpx")
      }.isEmpty)
  }
}

extension Fix {
  /// What the history keeps of this fix.
  fileprivate var kept: Fix {
    Fix(
      latitude: latitude, longitude: longitude, altitude: altitude,
      horizontalAccuracy: horizontalAccuracy, verticalAccuracy: verticalAccuracy, speed: speed,
      course: course, time: time)
  }
}
