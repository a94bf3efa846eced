import Testing

@Suite struct EndToEndSmokeTests {
  @Test func builds() {}
}
