import CoreLocation
import Foundation
import LocationServices
import TestSupport
import Testing

/// Visits against the real `locationd` (the built binary, on a private socket and store), its
/// source a recorded track replayed 60 times faster than it was recorded: a visit's minutes pass
/// in seconds, and its dates are the recording's. The app starts visit monitoring and goes away;
/// the daemon detects the visits and keeps them; the app's next manager hears each once. Missing
/// binary or `sqlite3`: skipped with the reason, a failure under `CI=true`.
@Suite(
  .enabled(
    if: DaemonE2E.available(tools: [RealComponents.sqlite3]),
    DaemonE2E.missing(tools: [RealComponents.sqlite3]))
)
struct DaemonVisitEndToEndTests {
  /// 2026-01-01T00:00:00Z, the track's start.
  static let start = 1_767_225_600.0

  /// A track sampled every 10 s: 15 minutes at 52° N 5° E, 2 minutes north to 52.02° N (2.2 km),
  /// 20 minutes there, 3 minutes north to 52.06° N.
  static func writeTrack(_ path: String) throws {
    var points: [(latitude: Double, seconds: Int)] = []
    var seconds = 0
    func leg(from: Double, to: Double, minutes: Int) {
      let count = minutes * 6
      for index in 0..<count {
        points.append((from + (to - from) * Double(index + 1) / Double(count), seconds))
        seconds += 10
      }
    }
    leg(from: 52.0, to: 52.0, minutes: 15)
    leg(from: 52.0, to: 52.02, minutes: 2)
    leg(from: 52.02, to: 52.02, minutes: 20)
    leg(from: 52.02, to: 52.06, minutes: 3)
    var text = """
      <?xml version="1.0" encoding="UTF-8"?>
      <gpx version="1.1" creator="DaemonVisitEndToEndTests" xmlns="http://www.topografix.com/GPX/1/1">
      <trk><trkseg>

      """
    for point in points {
      let time = String(
        format: "2026-01-01T%02d:%02d:%02dZ", point.seconds / 3600, (point.seconds / 60) % 60,
        point.seconds % 60)
      text += "<trkpt lat=\"\(point.latitude)\" lon=\"5.0\"><time>\(time)</time></trkpt>\n"
    }
    text += "</trkseg></trk></gpx>\n"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
  }

  /// The apps the daemon lists, over a control connection ([] when it does not answer).
  static func apps(_ socketPath: String) -> [[String: Any]] {
    guard let control = try? SocketChannel(path: socketPath),
      (try? control.hello("control")) != nil
    else { return [] }
    control.send(#"{"type":"apps","id":1}"#)
    let reply = try? control.waitFor(timeout: 30, "the apps") {
      $0.type == "reply" || $0["id"] != nil
    }
    return reply?.match.objects("apps") ?? []
  }

  @Test func visitsDetectedWhileTheAppIsAwayReachItsNextManagerOnce() async throws {
    let directory = try LocationdProcess.makeDirectory()
    let track = directory + "/day.gpx"
    try Self.writeTrack(track)
    let socketPath = LocationdProcess.socket(directory)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(directory, sources: ["replay://\(track)?speed=60"]),
      directory: directory)
    defer { daemon.stop() }
    #expect(await eventually { FileManager.default.fileExists(atPath: socketPath) })
    let store = LocationdProcess.store(directory)

    // The app asks for always authorization, starts visit monitoring and goes away.
    let first = DaemonClient(socketPath: socketPath)
    #expect(await eventually { first.isConnected })
    let (firstScheduler, firstDelegate, firstManager) = boundManager(first)
    firstManager.requestAlwaysAuthorization()
    #expect(
      await eventually(pump: firstScheduler.pump) { firstDelegate.contains("authorization 3") })
    firstManager.startMonitoringVisits()
    #expect(
      await eventually(interval: 0.05) {
        (try? DaemonE2E.query(store, "SELECT count(*) FROM visit_monitoring")) == "1"
      })
    first.close()

    // While it is away: the departure from where monitoring began, then the arrival at and the
    // departure from the second place, kept in the daemon's store.
    let app = try #require(Self.apps(socketPath).first?["app"] as? String)
    let pending = {
      Self.apps(socketPath).first { $0["app"] as? String == app }?["pendingEvents"] as? Int
    }
    #expect(await eventually(timeout: 120, interval: 0.2) { (pending() ?? 0) >= 3 })
    #expect(pending() == 3)

    // The next manager of the app hears the three, once each, and the daemon forgets them.
    let second = DaemonClient(socketPath: socketPath)
    defer { second.close() }
    #expect(await eventually { second.isConnected })
    let (scheduler, delegate, manager) = boundManager(second)
    defer { withExtendedLifetime(manager) {} }
    #expect(await eventually(pump: scheduler.pump) { delegate.visits.withLock { $0.count } >= 3 })
    #expect(await eventually(interval: 0.05) { pending() == 0 })
    scheduler.pump()
    let visits = delegate.visits.withLock { $0 }
    #expect(visits.count == 3)
    guard visits.count == 3 else { return }
    #expect(visits[0].arrivalDate == .distantPast)
    #expect(visits[1].departureDate == .distantFuture)
    #expect(visits[2].arrivalDate == visits[1].arrivalDate)
    // Dated from the recording: arrival at 17 minutes, departure at 37 (within a fix or two).
    #expect(abs(visits[1].arrivalDate.timeIntervalSince1970 - (Self.start + 17 * 60)) <= 30)
    #expect(abs(visits[2].departureDate.timeIntervalSince1970 - (Self.start + 37 * 60)) <= 30)
    #expect(abs(visits[1].coordinate.latitude - 52.02) < 0.001)
  }
}
