import Testing

@Suite struct LocationStoreSmokeTests {
  @Test func builds() {}
}
