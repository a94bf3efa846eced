import Foundation
import TestSupport
import Testing

/// `whereami --record FILE.gpx`: the built program writes what it prints as a GPX 1.1 track, and
/// our own replay (`whereami --source replay://FILE`) reads it back to the same lines, also after
/// the recording run was killed with SIGKILL in the middle.
@Suite(
  .enabled(
    if: BuiltPrograms.whereami != nil || RealComponents.isCI,
    "whereami is not built: run `swift build --product whereami`")
)
struct WhereAmIRecordTests {
  typealias Runner = WhereAmIRunner

  /// Printed for each location: the coordinate and the time (whole seconds).
  static let format = "%latitude %longitude %altitude %time"

  func run(_ arguments: [String]) async throws -> Runner.Result {
    let result = try await Runner.run(arguments)
    #expect(!result.killed, "whereami had to be killed: \(arguments)")
    return result
  }

  /// What a replay of the recorded file prints.
  func replay(_ file: String) async throws -> [String] {
    let result = try await run([
      "--source", "replay://" + file, "--watch", "--instant", "-f", Self.format,
    ])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    return result.lines
  }

  @Test func watchRecordsWhatItPrints() async throws {
    try await withTemporaryDirectoryAsync { directory in
      let file = directory + "/north.gpx"
      let result = try await run([
        "--source", "replay://" + Paths.fixture("replay", "north.gpx"), "--watch", "--instant",
        "-f", Self.format, "--record", file,
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(result.lines.count > 5)
      #expect(try await replay(file) == result.lines)
      let text = try String(contentsOfFile: file, encoding: .utf8)
      #expect(text.contains(#"<gpx version="1.1" creator="whereami""#))
      #expect(text.hasSuffix("</gpx>\n"))
    }
  }

  /// Without `--watch`, the one location printed; `--count` stops the recording with the output.
  @Test func oneLocationAndCount() async throws {
    try await withTemporaryDirectoryAsync { directory in
      let once = directory + "/once.gpx"
      let result = try await run([
        "--source", "replay://" + Paths.ijsselmeer, "-f", Self.format, "--record", once,
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(result.lines.count == 1)
      #expect(try await replay(once) == result.lines)
      let counted = directory + "/counted.gpx"
      let three = try await run([
        "--source", "replay://" + Paths.ijsselmeer, "--instant", "--count", "3", "-f",
        Self.format, "--record=" + counted,
      ])
      #expect(three.status == 0 && three.lines.count == 3, "stderr: \(three.stderr)")
      #expect(try await replay(counted) == three.lines)
    }
  }

  @Test func aFileThatCannotBeCreatedIsAUsageError() async throws {
    let result = try await run([
      "--source", "replay://" + Paths.ijsselmeer, "--record", "/nonexistent-directory/run.gpx",
    ])
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "whereami: /nonexistent-directory/run.gpx: cannot create the file: "
        + "No such file or directory\n")
    #expect(result.stdout.isEmpty)
  }

  @Test(arguments: [
    ["--geocode", "Paris"], ["--regions", "r.geojson"],
    ["--beacons", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"],
  ])
  func modesWithoutLocationsAreUsageErrors(_ mode: [String]) async throws {
    let result = try await run(mode + ["--record", "run.gpx"])
    #expect(result.status == 2)
    #expect(result.stderr.contains("--record cannot be combined with \(mode[0])"))
  }

  /// A recording killed with SIGKILL while it runs leaves a valid file with every location it
  /// printed (each is written to the file before it is printed).
  @Test func killedMidwayLeavesAValidFile() async throws {
    guard let binary = BuiltPrograms.whereami else { throw Runner.NotBuilt() }
    try await withTemporaryDirectoryAsync { directory in
      let file = directory + "/killed.gpx"
      let process = Process()
      process.executableURL = URL(fileURLWithPath: binary)
      // 20 times the recorded pace: 20 locations a second, for about two minutes.
      process.arguments = [
        "--source", "replay://" + Paths.ijsselmeer, "--speed", "20", "--watch", "-f",
        Self.format, "--record", file,
      ]
      process.environment = Runner.environment(home: directory, [:])
      process.currentDirectoryURL = URL(fileURLWithPath: directory)
      let output = Pipe()
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try runWithEmptySignalMask(process)
      defer { stopChild(process, signal: SIGKILL) }
      let reader = DeadlineLineReader(fd: output.fileHandleForReading.fileDescriptor)
      var printed: [String] = []
      while printed.count < 10, let line = try reader.next(timeout: 30) {
        printed.append(String(decoding: line, as: UTF8.self))
      }
      try #require(printed.count == 10, "whereami ended early")
      #expect(stopChild(process, signal: SIGKILL) == SIGKILL)
      // Whatever it printed after the tenth line, before the signal, is in the file too.
      while let line = try reader.next(timeout: 30) {
        printed.append(String(decoding: line, as: UTF8.self))
      }
      let replayed = try await replay(file)
      #expect(replayed.count >= printed.count)
      #expect(Array(replayed.prefix(printed.count)) == printed)
      let text = try String(contentsOfFile: file, encoding: .utf8)
      #expect(text.hasSuffix("</gpx>\n"))
    }
  }
}
