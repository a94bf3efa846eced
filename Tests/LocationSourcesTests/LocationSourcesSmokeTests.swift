import Testing

@Suite struct LocationSourcesSmokeTests {
  @Test func builds() {}
}
