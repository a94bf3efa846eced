/// The device orientation a client chose as the reference for headings: Apple's
/// `CLDeviceOrientation`, with the same raw values, as the engine sees it.
///
/// ## What "rotating the reference" means
///
/// A compass reports the heading of one axis of the device: the top edge of the device held in
/// portrait (a phone's +y axis), or the bow of a ship. Apple's `headingOrientation` chooses which
/// physical edge of the device counts as "forward" instead, so that an app whose interface runs in
/// landscape gets the heading of the edge the user sees as "up" on the screen.
///
/// Seen from above with the screen facing up, turning the device counter-clockwise by 90° (so
/// that the home button, at the bottom in portrait, ends up on the right: `landscapeLeft`) makes
/// the device's right edge the screen's "up". That edge points 90° clockwise of the top edge, so
/// its heading is the sensor's heading **plus** 90°. The rule, with `h` the heading of the
/// sensor's reference axis (the portrait top edge) and the result reduced to 0..<360:
///
/// | orientation | raw | forward edge (portrait terms) | reported heading |
/// | --- | --- | --- | --- |
/// | `portrait` | 1 | top edge | `h` |
/// | `portraitUpsideDown` | 2 | bottom edge | `h + 180°` |
/// | `landscapeLeft` | 3 | right edge (home button on the right) | `h + 90°` |
/// | `landscapeRight` | 4 | left edge (home button on the left) | `h - 90°` |
/// | `unknown` | 0 | unchanged | the previous rotation |
/// | `faceUp` | 5 | unchanged | the previous rotation |
/// | `faceDown` | 6 | unchanged | the previous rotation |
///
/// `unknown`, `faceUp` and `faceDown` say nothing about which edge is forward (a device lying flat
/// can still be held with any edge forward), so setting them keeps the rotation in force; before
/// any other orientation is set that is `portrait` (rotation 0°), Apple's default. The rotation
/// applies to both the magnetic and the true heading, never to the raw field components x, y, z,
/// which stay in the device's own axes as on Apple platforms.
package enum HeadingOrientation: Int32, Sendable, CaseIterable {
  /// The orientation is not known: keeps the previous rotation.
  case unknown = 0
  /// Upright, home button at the bottom: the top edge is forward (0°).
  case portrait = 1
  /// Upside down, home button at the top: the bottom edge is forward (+180°).
  case portraitUpsideDown = 2
  /// Home button on the right: the right edge is forward (+90°).
  case landscapeLeft = 3
  /// Home button on the left: the left edge is forward (-90°).
  case landscapeRight = 4
  /// Flat, screen up: keeps the previous rotation.
  case faceUp = 5
  /// Flat, screen down: keeps the previous rotation.
  case faceDown = 6

  /// The angle in degrees added to the sensor's heading in this orientation, or nil for the
  /// orientations that keep the previous one (`unknown`, `faceUp`, `faceDown`).
  package var rotation: Double? {
    switch self {
    case .portrait: return 0
    case .portraitUpsideDown: return 180
    case .landscapeLeft: return 90
    case .landscapeRight: return -90
    case .unknown, .faceUp, .faceDown: return nil
    }
  }
}
