import Testing

@Suite struct CoreLocationSmokeTests {
  @Test func builds() {}
}
