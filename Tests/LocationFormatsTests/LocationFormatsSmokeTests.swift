import Testing

@Suite struct LocationFormatsSmokeTests {
  @Test func builds() {}
}
