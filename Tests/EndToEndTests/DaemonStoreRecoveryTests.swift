import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 22 against the real daemon: after `kill -9` its store is integrity-checked at the next
/// start (and says so); SIGTERM stops it cleanly; a store whose header was overwritten is moved
/// aside, kept, and named in the log, and the daemon serves from a new one.
@Suite struct DaemonStoreRecoveryTests {
  @Test(
    .enabled(
      if: DaemonE2E.available(tools: [RealComponents.sqlite3]),
      DaemonE2E.missing(tools: [RealComponents.sqlite3])))
  func killedDaemonsStoreIsCheckedAndADamagedOneMovedAside() throws {
    try DaemonE2E.requireComponents(tools: [RealComponents.sqlite3])
    let directory = try LocationdProcess.makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let source = try LocationdProcess.staticSource(in: directory, "52.3702\n4.8952\n2\n50\n")
    let daemon = try LocationdProcess(LocationdProcess.arguments(directory, sources: [source]))
    defer { daemon.stop(SIGKILL) }
    let store = LocationdProcess.store(directory)

    #expect(daemon.kill(SIGKILL) == SIGKILL)
    #expect(FileManager.default.fileExists(atPath: store + "-wal"), "a killed daemon's log")
    try daemon.restart()
    try daemon.waitForLog("the last shutdown was not clean; integrity checked")

    #expect(daemon.kill(SIGTERM) == 0, "a clean stop: \(daemon.log)")
    // The file alone, as a backup of it would be (a log left beside it would hold page 1 and
    // mask the damage below).
    for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }

    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: store)))
    for index in 0..<16 { bytes[index] = 0x5A }
    try Data(bytes).write(to: URL(fileURLWithPath: store))
    try daemon.restart()
    let line = try daemon.waitForLog("damaged")
    let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
      $0.hasPrefix("store.sqlite.corrupt-")
    }
    #expect(aside.count == 1)
    #expect(line.contains(directory + "/" + (aside.first ?? "?")), "\(line)")
    #expect(
      [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + (aside.first ?? ""))))
        == bytes)
    // It serves from a new store: a control query answers.
    let status = try DaemonE2E.query(store, "SELECT count(*) FROM migrations")
    #expect((Int(status) ?? 0) > 0, "the new store has its schema")
  }
}
