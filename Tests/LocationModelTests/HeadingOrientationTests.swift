import LocationModel
import Testing

@Suite struct HeadingOrientationTests {
  /// Raw values are Apple's `CLDeviceOrientation` raw values.
  @Test func rawValuesAreApples() {
    #expect(HeadingOrientation.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5, 6])
  }

  @Test func rotations() {
    #expect(HeadingOrientation.portrait.rotation == 0)
    #expect(HeadingOrientation.portraitUpsideDown.rotation == 180)
    #expect(HeadingOrientation.landscapeLeft.rotation == 90)
    #expect(HeadingOrientation.landscapeRight.rotation == -90)
    #expect(HeadingOrientation.unknown.rotation == nil)
    #expect(HeadingOrientation.faceUp.rotation == nil)
    #expect(HeadingOrientation.faceDown.rotation == nil)
  }
}
