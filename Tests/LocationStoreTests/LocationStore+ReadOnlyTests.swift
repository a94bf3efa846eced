import Foundation
import Synchronization
import TestSupport
import Testing

@testable import LocationStore

/// A store whose file cannot be written (a tmpfs remounted read-only, which root cannot write
/// either): the state is kept in memory, loaded from the file, said once; the file is tried again
/// later and, writable again, gets what changed meanwhile.
@Suite(.serialized) struct LocationStoreReadOnlyTests {
  @Test func aReadOnlyFileSystemKeepsStateInMemoryAndGoesBackToTheFile() throws {
    guard let tmpfs = try Tmpfs.mountedOrUnavailable(kibibytes: 4096) else { return }
    defer { tmpfs.unmount() }
    let path = tmpfs.path + "/corelocation/store.sqlite"
    do {
      let store = try LocationStore(path: path)
      try store.upsertRegion(region("before"))
      store.close()
    }
    try tmpfs.remount(readOnly: true)

    let opening = try LocationStore.open(path: path)
    let store = opening.store
    #expect(store.isKeptInMemory)
    guard case .inMemory(let cause)? = opening.notices.first?.kind, opening.notices.count == 1
    else {
      Issue.record("no inMemory notice: \(opening.notices)")
      return
    }
    #expect(cause.code == .readOnly)
    let line = opening.notices.first?.description ?? ""
    #expect(line.contains(path) && line.contains("Read-only file system"), "\(line)")
    guard case .inMemory = store.condition else {
      Issue.record("the condition is \(store.condition)")
      return
    }
    let notices = Mutex<[StoreNotice]>([])
    store.setListener { notice in notices.withLock { $0.append(notice) } }
    #expect(try store.allRegions().map(\.identifier) == ["before"], "loaded from the file")
    try store.upsertRegion(region("meanwhile"))
    #expect(!store.retryFile(), "still read-only")
    #expect(notices.withLock { $0 }.isEmpty, "said once, at open")

    try tmpfs.remount(readOnly: false)
    #expect(store.retryFile())
    #expect(!store.isKeptInMemory)
    #expect(store.condition == .healthy)
    guard case .backOnFile(_, let kept)? = notices.withLock({ $0 }).first?.kind else {
      Issue.record("no backOnFile notice: \(notices.withLock { $0 })")
      return
    }
    #expect(kept)
    try store.upsertRegion(region("after"))
    store.close()
    #expect(
      try LocationStore(path: path).allRegions().map(\.identifier).sorted() == [
        "after", "before", "meanwhile",
      ])
  }

  /// A read-only file system with no store on it yet: an empty store in memory, and the file is
  /// created with what was kept when it becomes writable.
  @Test func aReadOnlyDirectoryWithoutAStoreStartsEmptyInMemory() throws {
    guard let tmpfs = try Tmpfs.mountedOrUnavailable(kibibytes: 4096) else { return }
    defer { tmpfs.unmount() }
    try tmpfs.remount(readOnly: true)
    let path = tmpfs.path + "/store.sqlite"
    let opening = try LocationStore.open(path: path)
    #expect(opening.store.isKeptInMemory)
    try opening.store.setSetting("k", "v")
    try tmpfs.remount(readOnly: false)
    #expect(opening.store.retryFile())
    opening.store.close()
    #expect(try LocationStore(path: path).setting("k") == "v")
  }
}
