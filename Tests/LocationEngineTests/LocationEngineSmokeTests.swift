import Testing

@Suite struct LocationEngineSmokeTests {
  @Test func builds() {}
}
