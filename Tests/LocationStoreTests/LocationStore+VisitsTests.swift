import Testing

@testable import LocationStore

/// Visit monitoring per app (migration `0003-visit-monitoring`).
@Suite struct LocationStoreVisitsTests {
  @Test func onOffAndListed() throws {
    let store = try LocationStore.inMemory()
    #expect(try store.visitMonitoringApps().isEmpty)
    #expect(try !store.monitorsVisits(app: "b"))
    try store.setVisitMonitoring(true, app: "b", since: 10)
    try store.setVisitMonitoring(true, app: "a", since: 20)
    try store.setVisitMonitoring(true, app: "b", since: 30)  // already on: kept
    #expect(try store.visitMonitoringApps() == ["a", "b"])
    #expect(try store.monitorsVisits(app: "b"))
    try store.setVisitMonitoring(false, app: "b", since: 40)
    try store.setVisitMonitoring(false, app: "c", since: 40)  // was off: nothing
    #expect(try store.visitMonitoringApps() == ["a"])
    #expect(try !store.monitorsVisits(app: "b"))
  }

  @Test func aTimeThatIsNotFiniteIsRefused() throws {
    let store = try LocationStore.inMemory()
    #expect(throws: StoreError.self) { try store.setVisitMonitoring(true, app: "a", since: .nan) }
    #expect(try store.visitMonitoringApps().isEmpty)
  }
}
