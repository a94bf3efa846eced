/// The cell scheme of the region index: a hierarchy of grids of latitude bands whose cells widen in
/// longitude towards the poles, so that a cell is about as wide as it is tall everywhere.
///
/// Level `L` (0...15) cuts latitude into `2^(15-L)` bands of height `180° / 2^(15-L)` (about 611 m
/// at level 0, the whole sphere at level 15). A band is cut into
/// `n = max(1, ⌊360 cos(φp) / height⌋)` cells of equal longitude width, where `φp` is the band's
/// poleward edge; a band that touches a pole is one cell. A region is filed at the finest level
/// where its bounding box meets at most nine cells (three by three), in every cell it meets. This is our own scheme:
/// a hierarchy of uniform grids (the classical multi-level grid, see Samet, "Foundations of
/// Multidimensional and Metric Data Structures", 2006) whose rows shorten towards the poles as in
/// the "reduced" latitude-longitude grids of weather models.
///
/// Correctness does not depend on how good `n` is: the cell functions are monotone in latitude and
/// longitude and are used identically when filing and when querying, so a point inside a box always
/// falls in one of the box's cells.
enum RegionGrid {
  /// The number of levels.
  static let levelCount = 16
  /// The most cells a region may meet on the level it is filed at.
  static let cellsPerRegion = 9

  /// The number of latitude bands on a level.
  @inline(__always)
  static func bandCount(level: Int) -> Int { (1 << 15) >> level }

  /// The band of a latitude on a level (monotone in the latitude).
  @inline(__always)
  static func band(latitude: Double, level: Int) -> Int {
    let count = bandCount(level: level)
    let clamped = min(90, max(-90, latitude))
    // Non-negative, so truncation is the floor (and no call into libm).
    let scaled = (clamped + 90) / 180 * Double(count)
    return min(count - 1, Int(scaled))
  }

  /// The number of longitude cells in a band.
  @inline(__always)
  static func cellCount(level: Int, band: Int) -> Int {
    let count = bandCount(level: level)
    let height = 180 / Double(count)
    let south = -90 + Double(band) * height
    let poleward = max(abs(south), abs(south + height))
    let cosine = RegionGeometry.sinCos(degrees: poleward).cos
    let cells = 360 * max(0, cosine) / height
    return max(1, min(2 * count, Int(cells)))
  }

  /// The cell of a longitude in a band of `cells` cells (monotone in the longitude).
  @inline(__always)
  static func cell(longitude: Double, cells: Int) -> Int {
    let clamped = min(180, max(-180, longitude))
    let scaled = (clamped + 180) / 360 * Double(cells)
    return min(cells - 1, Int(scaled))
  }

  /// Every key is below this (36 bits), so that a key and a 28-bit slot pack into one word.
  static let keyLimit: UInt64 = 1 << 36

  /// The key of a cell: never zero, unique across levels. Bits: a marker at 35, the level at
  /// 31...34, the band (< 2^15) at 16...30, the cell (< 2^16, as `n <= 2 * bands`) at 0...15.
  @inline(__always)
  static func key(level: Int, band: Int, cell: Int) -> UInt64 {
    (1 << 35) | (UInt64(level) << 31) | (UInt64(band) << 16) | UInt64(cell)
  }

  /// The key of the cell that holds a point on a level.
  /// - Parameters:
  ///   - latitude: Degrees, -90...90.
  ///   - longitude: Degrees, -180...180; 180 is filed as -180 (the same meridian).
  ///   - level: The level.
  /// - Returns: The cell's key.
  @inline(__always)
  static func key(latitude: Double, longitude: Double, level: Int) -> UInt64 {
    let b = band(latitude: latitude, level: level)
    let n = cellCount(level: level, band: b)
    let lon = longitude >= 180 ? -180 : longitude
    return key(level: level, band: b, cell: cell(longitude: lon, cells: n))
  }

  /// The cells a box meets on the finest level where they are at most `cellsPerRegion`.
  /// - Parameters:
  ///   - box: The region's bounding box.
  ///   - body: Called once per distinct cell key.
  /// - Returns: The level chosen.
  @discardableResult
  static func forEachCell(of box: RegionGeometry.Box, _ body: (UInt64) -> Void) -> Int {
    for level in 0..<levelCount where visit(box, level: level, { _ in }) <= cellsPerRegion {
      _ = visit(box, level: level, body)
      return level
    }
    // Unreachable: level 15 is a single cell.
    return levelCount - 1
  }

  /// Visits the distinct cells of a box on one level, stopping once there are more than
  /// `cellsPerRegion`; returns how many it found (more than `cellsPerRegion` when it stopped).
  @inline(__always)
  private static func visit(
    _ box: RegionGeometry.Box, level: Int, _ body: (UInt64) -> Void
  ) -> Int {
    let southBand = band(latitude: box.south, level: level)
    let northBand = band(latitude: box.north, level: level)
    if northBand - southBand + 1 > cellsPerRegion { return cellsPerRegion + 1 }
    var found = 0
    for b in southBand...northBand {
      let n = cellCount(level: level, band: b)
      // The box's longitudes as at most two cell ranges: the part within -180...180, and the part
      // that continues across the antimeridian (a span that reaches ±180 exactly continues too).
      var first = (lower: 0, upper: n - 1)
      var second: (lower: Int, upper: Int)? = nil
      if !box.allLongitudes && box.east - box.west < 360 {
        first = (
          cell(longitude: max(-180, box.west), cells: n),
          cell(longitude: min(180, box.east), cells: n)
        )
        if box.west <= -180 {
          second = (cell(longitude: box.west + 360, cells: n), n - 1)
        } else if box.east >= 180 {
          second = (0, cell(longitude: box.east - 360, cells: n))
        }
      }
      if let other = second {
        if other.lower <= first.upper + 1 && first.lower <= other.upper + 1 {
          first = (min(first.lower, other.lower), max(first.upper, other.upper))
          second = nil
        }
      }
      found += first.upper - first.lower + 1 + (second.map { $0.upper - $0.lower + 1 } ?? 0)
      if found > cellsPerRegion { return found }
      for c in first.lower...first.upper { body(key(level: level, band: b, cell: c)) }
      if let second {
        for c in second.lower...second.upper { body(key(level: level, band: b, cell: c)) }
      }
    }
    return found
  }
}
