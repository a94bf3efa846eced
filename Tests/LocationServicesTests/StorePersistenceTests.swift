import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationSources
import LocationStore
import TestSupport
import Testing

@testable import LocationServices

/// `StorePersistence` on a real SQLite file, across reopening, and `makePersistence`'s fallback.
@Suite struct StorePersistenceTests {
  @Test func authorizationRoundTripsAcrossReopening() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      do {
        let persistence = StorePersistence(store: try LocationStore(path: path))
        #expect(persistence.authorization(app: "org.example.a") == nil)
        try persistence.setAuthorization(
          AuthorizationSnapshot(
            status: AuthorizationStatus.authorizedAlways, accuracy: .reducedAccuracy),
          app: "org.example.a")
        try persistence.setAuthorization(
          AuthorizationSnapshot(status: AuthorizationStatus.denied), app: "org.example.b")
      }
      let reopened = StorePersistence(store: try LocationStore(path: path))
      let a = reopened.authorization(app: "org.example.a")
      #expect(a?.status == AuthorizationStatus.authorizedAlways)
      #expect(a?.accuracy == .reducedAccuracy)
      #expect(reopened.authorization(app: "org.example.b")?.status == AuthorizationStatus.denied)
      #expect(reopened.authorization(app: "org.example.c") == nil)
    }
  }

  @Test func servicesSwitchDefaultsOnAndPersists() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      do {
        let persistence = StorePersistence(store: try LocationStore(path: path))
        #expect(persistence.servicesEnabled())
        try persistence.setServicesEnabled(false)
        #expect(!persistence.servicesEnabled())
      }
      let reopened = StorePersistence(store: try LocationStore(path: path))
      #expect(!reopened.servicesEnabled())
      try reopened.setServicesEnabled(true)
      #expect(reopened.servicesEnabled())
    }
  }

  /// `locationd`'s store: every app's hub saves the machine's location every 5 s on its own
  /// beat; a save less than the interval newer than the last commit stays in memory.
  @Test func lastKnownLocationIsCommittedOncePerInterval() throws {
    let store = try LocationStore.inMemory()
    let persistence = StorePersistence(store: store, lastKnownLocationInterval: 5)
    func stored() throws -> Double? { try store.lastKnownLocation(app: "")?.time }
    try persistence.saveLastKnownLocation(fix(52.37, 4.89, time: 1000))
    #expect(try stored() == 1000)
    // Another hub's save of a fix 2 s newer: kept in memory only.
    try persistence.saveLastKnownLocation(fix(52.37, 4.89, time: 1002))
    #expect(try stored() == 1000)
    try persistence.saveLastKnownLocation(fix(52.37, 4.89, time: 1005))
    #expect(try stored() == 1005)
    // A replay that began again: its older fix is committed at once.
    try persistence.saveLastKnownLocation(fix(52.37, 4.89, time: 900))
    #expect(try stored() == 900)
    // Without an interval (embedded: one hub), every save is committed.
    let every = StorePersistence(store: store)
    try every.saveLastKnownLocation(fix(52.37, 4.89, time: 901))
    #expect(try stored() == 901)
  }

  @Test func lastKnownLocationPersists() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      var saved = fix(52.3676, 4.9041, time: 1_767_225_000)
      saved.altitude = 2
      saved.speed = 1.5
      saved.source = "static:///etc/geolocation"
      do {
        let persistence = StorePersistence(store: try LocationStore(path: path))
        #expect(persistence.lastKnownLocation() == nil)
        try persistence.saveLastKnownLocation(fix(1, 1))
        try persistence.saveLastKnownLocation(saved)
      }
      let reopened = StorePersistence(store: try LocationStore(path: path))
      #expect(reopened.lastKnownLocation() == saved)
    }
  }

  @Test func invalidLastKnownLocationIsRefusedWithoutLosingTheStoredOne() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      let good = fix(52, 5)
      do {
        let persistence = StorePersistence(store: try LocationStore(path: path))
        try persistence.saveLastKnownLocation(good)
        #expect(throws: StoreError.self) { try persistence.saveLastKnownLocation(fix(.nan, 5)) }
      }
      let reopened = StorePersistence(store: try LocationStore(path: path))
      #expect(reopened.lastKnownLocation() == good)
    }
  }

  @Test func hubDecisionIsStoredAndSeenByTheNextHub() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      do {
        let hub = LocationHub(
          app: "org.example.app", sources: .unavailable("none"),
          persistence: StorePersistence(store: try LocationStore(path: path)), policy: .grant,
          clock: ManualClock())
        hub.requestAuthorization(always: false)
        #expect(hub.authorization.status == AuthorizationStatus.authorizedWhenInUse)
      }
      let next = LocationHub(
        app: "org.example.app", sources: .unavailable("none"),
        persistence: StorePersistence(store: try LocationStore(path: path)), policy: .deny,
        clock: ManualClock())
      #expect(next.authorization.status == AuthorizationStatus.authorizedWhenInUse)
      #expect(next.authorization.servicesEnabled)
    }
  }

  @Test func makePersistenceOpensTheStore() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/state/corelocation/store.sqlite"
      let persistence = LocationHub.makePersistence(path, app: "org.example.app")
      #expect(persistence is StorePersistence)
      #expect(FileManager.default.fileExists(atPath: path))
    }
  }

  @Test func makePersistenceWithoutPathKeepsStateInMemory() {
    let persistence = LocationHub.makePersistence(nil, app: "org.example.app")
    #expect(persistence is MemoryPersistence)
  }

  /// A path that cannot be a store (its "directory" is a regular file; this also holds when the
  /// tests run as root) falls back to memory, and the hub still works.
  @Test func unusableStorePathFallsBackToMemory() throws {
    try withTemporaryDirectory { directory in
      let blocker = directory + "/not-a-directory"
      try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
      let persistence = LocationHub.makePersistence(
        blocker + "/corelocation/store.sqlite", app: "org.example.app")
      #expect(persistence is MemoryPersistence)
      try persistence.setAuthorization(
        AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: "x")
      #expect(persistence.authorization(app: "x")?.status == AuthorizationStatus.authorizedAlways)
    }
  }

  /// A file that is not a database (its header overwritten, or not a database at all) is moved
  /// aside, kept as it was, and a new store is created in its place: persistence resumes.
  @Test func fileThatIsNotAStoreIsMovedAsideAndANewStoreIsCreated() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      let text = Data("my notes, not a database\n".utf8)
      try text.write(to: URL(fileURLWithPath: path))
      let persistence = LocationHub.makePersistence(path, app: "org.example.app")
      #expect(persistence is StorePersistence)
      let names = try FileManager.default.contentsOfDirectory(atPath: directory)
      let aside = try #require(names.first { $0.hasPrefix("store.sqlite.corrupt-") })
      #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + aside)) == text)
      try persistence.setServicesEnabled(false)
      #expect(!StorePersistence(store: try LocationStore(path: path)).servicesEnabled())
    }
  }

  @Test func memoryPersistenceStartsEmptyOrWithALocation() {
    #expect(MemoryPersistence().lastKnownLocation() == nil)
    #expect(MemoryPersistence().servicesEnabled())
    let here = fix(52, 5)
    #expect(MemoryPersistence(lastKnownLocation: here).lastKnownLocation() == here)
  }
}

/// Regions are not copied into memory beside the store (`docs/performance.md`, "The daemon's
/// fan-out"): while the file cannot be read, the wrapper answers that none are stored, and the
/// engine of the hub that saved them still monitors them.
@Suite struct StorePersistenceRegionReadTests {
  @Test func unreadableRegionsAreNoneAndTheHubKeepsMonitoring() throws {
    try withTemporaryDirectory { directory in
      let faults = try StoreFaults()
      let store = try LocationStore(path: directory + "/store.sqlite", vfs: faults.vfs)
      let persistence = StorePersistence(store: store)
      let hub = LocationHub(
        app: "org.example.regions", sources: .unavailable("none"), persistence: persistence,
        policy: .grant, clock: ManualClock())
      let id = hub.register(RecordingClient())
      hub.addRegion(
        RegionSpec(identifier: "home", latitude: 52, longitude: 5, radius: 100),
        group: "manager", requester: id)
      #expect(persistence.regions(app: "org.example.regions")["manager"]?.count == 1)
      // Another connection's write makes this one's page cache stale: its next read goes to
      // the file.
      try LocationStore(path: directory + "/store.sqlite").setSetting("touched", "1")
      faults.arm([.read], persistent: true, failure: .ioError)
      defer { faults.disarm() }
      let unreadable = persistence.regions(app: "org.example.regions")
      #expect(faults.failures > 0, "the read reached the file and failed")
      #expect(unreadable.isEmpty)
      #expect(hub.regions(group: "manager").map(\.spec.identifier) == ["home"])
    }
  }
}
