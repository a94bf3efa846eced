import LocationProtocol
import Testing

@testable import LocationControl

/// The store's line of `locationctl status` (README, "When the store fails").
@Suite struct ControlFormatterStoreTests {
  @Test func aHealthyStoreIsOneShortLine() {
    #expect(
      ControlFormatter.storeLine(
        DaemonStoreStatus(path: "/var/lib/locationd/store.sqlite", state: .ok))
        == "Store: /var/lib/locationd/store.sqlite: ok\n")
  }

  @Test func aFailingStoreSaysWhySinceWhenAndWhatWaits() {
    let line = ControlFormatter.storeLine(
      DaemonStoreStatus(
        path: "/s/store.sqlite", state: .failing, cause: "database or disk is full",
        since: 1_767_225_600, held: 3))
    #expect(
      line
        == "Store: /s/store.sqlite: cannot commit since 2026-01-01 00:00:00Z (database or disk "
        + "is full); 3 write(s) held, region events wait\n")
  }

  @Test func aStoreInMemorySaysSo() {
    let line = ControlFormatter.storeLine(
      DaemonStoreStatus(path: "/s/store.sqlite", state: .memory, cause: "read-only"))
    #expect(line == "Store: /s/store.sqlite: not writable, state kept in memory (read-only)\n")
  }

  @Test func theStatusTableShowsTheStoreUnderTheSwitch() {
    let text = ControlFormatter.status(
      DaemonStatus(
        sources: [], clients: [], apps: [], servicesEnabled: true,
        store: DaemonStoreStatus(path: "/s.sqlite", state: .ok)))
    #expect(text.hasPrefix("Location services: on\nStore: /s.sqlite: ok\n\n"))
  }
}
