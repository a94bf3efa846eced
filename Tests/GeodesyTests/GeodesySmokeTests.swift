import Testing

@Suite struct GeodesySmokeTests {
  @Test func builds() {}
}
