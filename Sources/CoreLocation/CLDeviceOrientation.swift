package import LocationModel

/// Constants that indicate the physical orientation of the device.
public enum CLDeviceOrientation: Int32, Sendable {
  /// The orientation is not known.
  case unknown = 0

  /// Portrait, the device upright with the home button at the bottom.
  case portrait = 1

  /// Portrait upside down, the home button at the top.
  case portraitUpsideDown = 2

  /// Landscape, the device upright with the home button on the right.
  case landscapeLeft = 3

  /// Landscape, the device upright with the home button on the left.
  case landscapeRight = 4

  /// Parallel to the ground, the screen facing up.
  case faceUp = 5

  /// Parallel to the ground, the screen facing down.
  case faceDown = 6
}

extension CLDeviceOrientation {
  /// The runtime's orientation of this public one.
  package var modelValue: HeadingOrientation {
    switch self {
    case .unknown: return .unknown
    case .portrait: return .portrait
    case .portraitUpsideDown: return .portraitUpsideDown
    case .landscapeLeft: return .landscapeLeft
    case .landscapeRight: return .landscapeRight
    case .faceUp: return .faceUp
    case .faceDown: return .faceDown
    }
  }
}
