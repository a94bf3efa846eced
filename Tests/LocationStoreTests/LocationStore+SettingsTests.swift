import Testing

@testable import LocationStore

@Suite struct LocationStoreSettingsTests {
  @Test func setReplaceAndRemove() throws {
    let store = try LocationStore.inMemory()
    #expect(try store.setting("servicesEnabled") == nil)
    try store.setSetting("servicesEnabled", "false")
    try store.setSetting("servicesEnabled", "true")
    try store.setSetting("other", "")
    #expect(try store.setting("servicesEnabled") == "true")
    #expect(try store.setting("other") == "")
    try store.setSetting("servicesEnabled", nil)
    #expect(try store.setting("servicesEnabled") == nil)
    #expect(try store.setting("other") == "")
  }
}
