/// Constants that give the relationship of the current location to a region's boundary.
@frozen
public enum CLRegionState: Int, Sendable {
  /// It is not known whether the location is inside or outside the region.
  case unknown = 0

  /// The location is inside the region.
  case inside = 1

  /// The location is outside the region.
  case outside = 2
}
