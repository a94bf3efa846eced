import Testing

@Suite struct LocationCLISmokeTests {
  @Test func builds() {}
}
