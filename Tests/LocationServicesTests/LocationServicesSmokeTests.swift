import Testing

@Suite struct LocationServicesSmokeTests {
  @Test func builds() {}
}
