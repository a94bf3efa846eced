import Foundation
import TestSupport
import Testing

/// `whereami --regions`: region state lines from the built program, and regions that survive a
/// restart of the process (two real processes on one store file).
@Suite(
  .enabled(
    if: BuiltPrograms.whereami != nil || RealComponents.isCI,
    "whereami is not built: run `swift build --product whereami`")
)
struct WhereAmIRegionsTests {
  typealias Runner = WhereAmIRunner

  static let regions = Paths.root.appendingPathComponent("Examples/regions/ijsselmeer.geojson")
    .path

  /// The bundled track split at a line: the header (12 comment lines) goes with both halves.
  static func halves(at line: Int, in directory: String) throws -> (String, String) {
    let text = try String(contentsOfFile: Paths.ijsselmeer, encoding: .utf8)
    let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
    let header = lines.prefix { $0.hasPrefix("#") }
    let first = directory + "/first.nmea"
    let second = directory + "/second.nmea"
    try lines.prefix(line).joined(separator: "\n").write(
      toFile: first, atomically: true, encoding: .utf8)
    try (header + lines.dropFirst(line)).joined(separator: "\n")
      .write(toFile: second, atomically: true, encoding: .utf8)
    return (first, second)
  }

  @Test func stateChangesOfTheBundledTrack() async throws {
    let result = try await Runner.run([
      "--source", "replay://" + Paths.ijsselmeer, "--instant", "--regions", Self.regions,
    ])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map {
      $0.split(separator: " ").dropFirst().joined(separator: " ")
    }
    #expect(
      lines == [
        "start inside determined", "buoy outside determined", "harbour outside determined",
        "start outside exit", "buoy inside enter", "buoy outside exit",
      ])
  }

  @Test func jsonLines() async throws {
    let result = try await Runner.run([
      "--source", "replay://" + Paths.ijsselmeer, "--instant", "--regions", Self.regions, "--json",
    ])
    #expect(result.status == 0)
    let first = try #require(result.stdout.split(separator: "\n").first)
    #expect(
      first
        == #"{"time":"2018-08-20T09:47:36Z","region":"start","state":"inside","event":"determined"}"#
    )
  }

  @Test func badRegionsFileIsAUsageError() async throws {
    let directory = NSTemporaryDirectory() + "regions-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/bad.geojson"
    try
      #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[5,52]},"properties":{}}]}"#
      .write(toFile: path, atomically: true, encoding: .utf8)
    let result = try await Runner.run([
      "--source", "replay://" + Paths.ijsselmeer, "--regions", path,
    ])
    #expect(result.status == 2)
    #expect(result.stderr.contains(path))
  }

  /// Two processes, one store: the second finds the regions with their states and reports the
  /// crossing that happened between the runs as an exit, without determining again.
  @Test func regionsSurviveARestartOfTheProcess() async throws {
    let directory = NSTemporaryDirectory() + "regions-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (first, second) = try Self.halves(at: 1200, in: directory)
    let store = ["CORELOCATION_STORE": directory + "/store.sqlite"]
    let before = try await Runner.run(
      ["--source", "replay://" + first, "--instant", "--regions", Self.regions], environment: store)
    #expect(before.status == 0, "stderr: \(before.stderr)")
    #expect(before.stdout.contains("buoy inside enter"))
    // The store was closed at exit: its log checkpointed into the file and removed.
    #expect(!FileManager.default.fileExists(atPath: directory + "/store.sqlite-wal"))
    let after = try await Runner.run(
      ["--source", "replay://" + second, "--instant", "--regions", Self.regions], environment: store
    )
    #expect(after.status == 0, "stderr: \(after.stderr)")
    #expect(
      after.stdout.split(separator: "\n").map {
        $0.split(separator: " ").dropFirst().joined(separator: " ")
      } == ["buoy outside exit"])
  }

  /// SIGTERM (and SIGINT) end `whereami` through `exit` (status 128 + 15): the store is closed,
  /// its log checkpointed into the file, so that a backup of `store.sqlite` alone misses nothing.
  @Test func aSignalClosesTheStore() async throws {
    guard let binary = BuiltPrograms.whereami else { throw Runner.NotBuilt() }
    let directory = NSTemporaryDirectory() + "regions-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = directory + "/store.sqlite"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    // Real time: the run lasts longer than the test waits.
    process.arguments = ["--source", "replay://" + Paths.ijsselmeer, "--regions", Self.regions]
    process.environment = Runner.environment(home: directory, ["CORELOCATION_STORE": store])
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try runWithEmptySignalMask(process)
    defer { stopChild(process, signal: SIGKILL) }
    // Running with its regions stored (so past installing its signal handlers, which comes
    // before; the store's log file appears earlier still, when the store is opened): the log
    // holds them.
    // (Without Debian's sqlite3 program, the log file's appearing is the nearest sign.)
    let sqlite = RealComponents.runnable(RealComponents.sqlite3)
    #expect(
      await eventually(interval: 0.05) {
        guard sqlite else { return FileManager.default.fileExists(atPath: store + "-wal") }
        let sql = "SELECT count(*) FROM regions WHERE identifier = 'buoy'"
        return (try? DaemonE2E.query(store, sql)) == "1"
      })
    #expect(FileManager.default.fileExists(atPath: store + "-wal"))
    let status = stopChild(process, signal: SIGTERM, grace: 20)
    #expect(process.terminationReason == .exit && status == 128 + SIGTERM)
    #expect(!FileManager.default.fileExists(atPath: store + "-wal"))
    // The file alone, copied as a backup without its log would be, has the regions.
    let copy = directory + "/backup.sqlite"
    try FileManager.default.copyItem(atPath: store, toPath: copy)
    let text = try String(contentsOf: URL(fileURLWithPath: copy), encoding: .isoLatin1)
    #expect(text.contains("buoy"), "the regions are in the database file")
  }
}
