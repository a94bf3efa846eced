import LocationModel
import Testing

@Suite struct HeadingSampleTests {
  @Test func fieldMagnitudeNeedsAllThreeComponents() {
    var sample = HeadingSample(time: 1_750_000_000, magneticHeading: 0, x: 3, y: 4)
    #expect(sample.fieldMagnitude == nil)
    sample.z = 12
    #expect(sample.fieldMagnitude == 13)
    sample.z = .nan
    #expect(sample.fieldMagnitude == nil)
  }
}
