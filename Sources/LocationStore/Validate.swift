/// Checks of values before they are written: NaN would be stored as NULL by SQLite, and an
/// out-of-range coordinate is a bug upstream. Messages name the field, never the value.
enum Validate {
  /// Latitude finite and within -90...90, longitude finite and within -180...180.
  static func coordinate(latitude: Double, longitude: Double, of what: String) throws(StoreError) {
    guard latitude.isFinite, abs(latitude) <= 90 else {
      throw StoreError(
        code: .invalidValue, message: "\(what) latitude is not a finite number within -90...90")
    }
    guard longitude.isFinite, abs(longitude) <= 180 else {
      throw StoreError(
        code: .invalidValue, message: "\(what) longitude is not a finite number within -180...180")
    }
  }

  /// `value` is finite (not NaN, not infinite).
  static func finite(_ value: Double, _ what: String) throws(StoreError) {
    guard value.isFinite else {
      throw StoreError(code: .invalidValue, message: "\(what) is not a finite number")
    }
  }

  /// `value` is finite and not negative.
  static func nonNegative(_ value: Double, _ what: String) throws(StoreError) {
    guard value.isFinite, value >= 0 else {
      throw StoreError(code: .invalidValue, message: "\(what) is not a finite, non-negative number")
    }
  }

  /// A region state: 0 unknown, 1 inside, 2 outside.
  static func regionState(_ state: Int) throws(StoreError) {
    guard (0...2).contains(state) else {
      throw StoreError(
        code: .invalidValue, message: "region state is not 0 (unknown), 1 (inside) or 2 (outside)")
    }
  }
}
