import Foundation
import TestSupport
import Testing

/// Issue 22, through the built `whereami --regions`: a store that is damaged, a directory where
/// the file should be, a directory that does not exist yet. Each run ends normally with a clear
/// message and every region line once; persistence resumes where it can.
@Suite(
  .enabled(
    if: BuiltPrograms.whereami != nil || RealComponents.isCI,
    "whereami is not built: run `swift build --product whereami`")
)
struct WhereAmIStoreFaultTests {
  typealias Runner = WhereAmIRunner

  /// The region lines of the bundled track with no stored state, without their times.
  static let fresh = [
    "start inside determined", "buoy outside determined", "harbour outside determined",
    "start outside exit", "buoy inside enter", "buoy outside exit",
  ]

  static func run(store: String) async throws -> ProgramResult {
    try await Runner.run(
      [
        "--source", "replay://" + Paths.ijsselmeer, "--instant", "--regions",
        WhereAmIRegionsTests.regions,
      ], environment: ["CORELOCATION_STORE": store])
  }

  static func events(_ result: ProgramResult) -> [String] {
    result.stdout.split(separator: "\n").map {
      $0.split(separator: " ").dropFirst().joined(separator: " ")
    }
  }

  static func corruptCopies(in directory: String) throws -> [String] {
    // The file itself; its -wal and -shm go aside beside it when the damage was found after
    // opening.
    try FileManager.default.contentsOfDirectory(atPath: directory).filter {
      $0.hasPrefix("store.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
    }
  }

  /// Bytes overwritten in the header (the file is no database any more) or in the page of the
  /// regions table (found by the check at start): the file is moved aside and kept, the run says
  /// where, the events come once, and the new store keeps the next run's states.
  @Test(arguments: ["header", "page"])
  func damagedStoreIsMovedAsideAndPersistenceResumes(_ damage: String) async throws {
    try await withTemporaryDirectoryAsync { directory in
      let store = directory + "/store.sqlite"
      let first = try await Self.run(store: store)
      #expect(first.status == 0 && Self.events(first) == Self.fresh, "\(first.stderr)")
      var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: store)))
      // The header's first 16 bytes, or every byte of the store's last page but one.
      let range = damage == "header" ? 0..<16 : (bytes.count - 2 * 4096)..<(bytes.count - 4096)
      for index in range { bytes[index] = 0xA5 }
      try Data(bytes).write(to: URL(fileURLWithPath: store))

      let second = try await Self.run(store: store)
      #expect(second.status == 0, "\(second.stderr)")
      #expect(Self.events(second) == Self.fresh, "\(second.stdout)")
      let aside = try Self.corruptCopies(in: directory)
      #expect(aside.count == 1)
      #expect(second.stderr.contains("damaged"), "\(second.stderr)")
      #expect(second.stderr.contains(directory + "/" + (aside.first ?? "?")), "\(second.stderr)")
      #expect(
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + (aside.first ?? ""))))
          == bytes)

      // Persistence resumed: the third run finds the second's states and determines nothing.
      let third = try await Self.run(store: store)
      #expect(third.status == 0 && third.stderr.isEmpty, "\(third.stderr)")
      #expect(!Self.events(third).contains { $0.hasSuffix("determined") }, "\(third.stdout)")
      #expect(try Self.corruptCopies(in: directory).count == 1)
    }
  }

  /// A directory where the store file should be is left alone: the run says why, keeps its state
  /// in memory, and delivers every event once.
  @Test func directoryInPlaceOfTheStore() async throws {
    try await withTemporaryDirectoryAsync { directory in
      let store = directory + "/store.sqlite"
      try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
      let result = try await Self.run(store: store)
      #expect(result.status == 0)
      #expect(Self.events(result) == Self.fresh)
      #expect(result.stderr.contains(store) && result.stderr.contains("is a directory"))
      #expect(result.stderr.contains("keeping state in memory"), "\(result.stderr)")
      #expect(FileManager.default.fileExists(atPath: store))
      #expect(try FileManager.default.contentsOfDirectory(atPath: store).isEmpty)
    }
  }

  /// A store in a directory that does not exist yet: the directories are made and the store
  /// kept there (a fresh XDG state directory is the usual case).
  @Test func missingDirectoryIsCreated() async throws {
    try await withTemporaryDirectoryAsync { directory in
      let store = directory + "/missing/deeper/store.sqlite"
      let result = try await Self.run(store: store)
      #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
      #expect(Self.events(result) == Self.fresh)
      #expect(FileManager.default.fileExists(atPath: store))
      let again = try await Self.run(store: store)
      #expect(!Self.events(again).contains { $0.hasSuffix("determined") })
    }
  }
}
