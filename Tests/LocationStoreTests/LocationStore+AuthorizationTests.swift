import Testing

@testable import LocationStore

@Suite struct LocationStoreAuthorizationTests {
  @Test func setReadReplaceAndRemove() throws {
    let store = try LocationStore.inMemory()
    #expect(try store.authorization(app: "b") == nil)
    try store.setAuthorization(
      StoredAuthorization(status: .authorizedWhenInUse, accuracy: .reducedAccuracy, updated: 10),
      app: "b")
    try store.setAuthorization(
      StoredAuthorization(status: .denied, accuracy: .fullAccuracy, updated: 11), app: "a")
    #expect(
      try store.authorization(app: "b")
        == StoredAuthorization(
          status: .authorizedWhenInUse, accuracy: .reducedAccuracy, updated: 10))
    try store.setAuthorization(
      StoredAuthorization(status: .authorizedAlways, accuracy: .fullAccuracy, updated: 12), app: "b"
    )
    #expect(
      try store.authorization(app: "b")
        == StoredAuthorization(status: .authorizedAlways, accuracy: .fullAccuracy, updated: 12))
    #expect(try store.apps() == ["a", "b"])
    try store.removeAuthorization(app: "b")
    try store.removeAuthorization(app: "never-stored")
    #expect(try store.authorization(app: "b") == nil)
    #expect(try store.apps() == ["a"])
  }

  @Test func aNonFiniteTimeIsRejected() throws {
    let store = try LocationStore.inMemory()
    let error = #expect(throws: StoreError.self) {
      try store.setAuthorization(
        StoredAuthorization(status: .authorizedAlways, accuracy: .fullAccuracy, updated: .nan),
        app: "a")
    }
    #expect(error?.code == .invalidValue)
    #expect(try store.apps().isEmpty)
  }
}
