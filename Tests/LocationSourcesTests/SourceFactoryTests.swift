import Testing

@testable import LocationSources

/// GeoClue's `RequestedAccuracyLevel` follows the accuracy asked for when sources are made.
@Suite struct SourceFactoryTests {
  @Test(arguments: [
    (accuracy: -1.0, level: GeoClueSource.AccuracyLevel.exact),
    (10, .exact), (1000, .street), (3000, .neighborhood), (100_000, .country),
  ])
  func geoclueLevelFollowsDesiredAccuracy(accuracy: Double, level: GeoClueSource.AccuracyLevel)
    throws
  {
    let source = try #require(SourceFactory.make(.geoclue, accuracy: accuracy) as? GeoClueSource)
    #expect(source.accuracyLevel == level)
  }

  @Test func compassIsForHeadingsOnly() {
    let compass = SourceFactory.make(.iioCompass)
    #expect(compass.descriptor.producesHeading && !compass.descriptor.producesLocation)
  }
}
