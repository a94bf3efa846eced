/// The cell scheme of the region index: a hierarchy of grids of latitude bands whose cells widen in
/// longitude towards the poles, so that a cell is about as wide as it is tall everywhere.
///
/// Level `L` (0...15) cuts latitude into `2^(15-L)` bands of height `180° / 2^(15-L)` (about 611 m
/// at level 0, the whole sphere at level 15). A band is cut into
/// `n = max(1, ⌊360 cos(φp) / height⌋)` cells of equal longitude width, where `φp` is the band's
/// poleward edge; a band that touches a pole is one cell. A region is filed at the finest level
/// where its bounding box meets at most four cells, in every cell it meets. This is our own scheme:
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
  static let cellsPerRegion = 4

  /// The number of latitude bands on a level.
  @inline(__always)
  static func bandCount(level: Int) -> Int { (1 << 15) >> level }

  /// The band of a latitude on a level (monotone in the latitude).
  @inline(__always)
  static func band(latitude: Double, level: Int) -> Int {
    let count = bandCount(level: level)
    let clamped = min(90, max(-90, latitude))
    let scaled = ((clamped + 90) / 180 * Double(count)).rounded(.down)
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
    let cells = (360 * max(0, cosine) / height).rounded(.down)
    return max(1, min(2 * count, Int(cells)))
  }

  /// The cell of a longitude in a band of `cells` cells (monotone in the longitude).
  @inline(__always)
  static func cell(longitude: Double, cells: Int) -> Int {
    let clamped = min(180, max(-180, longitude))
    let scaled = ((clamped + 180) / 360 * Double(cells)).rounded(.down)
    return min(cells - 1, Int(scaled))
  }

  /// The key of a cell: never zero, unique across levels.
  @inline(__always)
  static func key(level: Int, band: Int, cell: Int) -> UInt64 {
    (1 << 63) | (UInt64(level) << 48) | (UInt64(band) << 24) | UInt64(cell)
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
    var keys: [UInt64] = []
    keys.reserveCapacity(cellsPerRegion)
    for level in 0..<levelCount {
      keys.removeAll(keepingCapacity: true)
      if collect(box, level: level, into: &keys) {
        for key in keys { body(key) }
        return level
      }
    }
    // Unreachable: level 15 is a single cell.
    return levelCount - 1
  }

  /// Collects the distinct cells of a box on one level; false when there are too many.
  private static func collect(_ box: RegionGeometry.Box, level: Int, into keys: inout [UInt64])
    -> Bool
  {
    let southBand = band(latitude: box.south, level: level)
    let northBand = band(latitude: box.north, level: level)
    if northBand - southBand + 1 > cellsPerRegion { return false }
    for b in southBand...northBand {
      let n = cellCount(level: level, band: b)
      // Cell ranges of the spans, merged where they overlap or touch.
      var ranges: [(lower: Int, upper: Int)] = box.spans.map {
        (cell(longitude: $0.lower, cells: n), cell(longitude: $0.upper, cells: n))
      }
      ranges.sort { $0.lower < $1.lower }
      var merged: [(lower: Int, upper: Int)] = []
      for range in ranges {
        if let last = merged.last, range.lower <= last.upper + 1 {
          merged[merged.count - 1].upper = max(last.upper, range.upper)
        } else {
          merged.append(range)
        }
      }
      for range in merged {
        if keys.count + (range.upper - range.lower + 1) > cellsPerRegion { return false }
        for c in range.lower...range.upper { keys.append(key(level: level, band: b, cell: c)) }
      }
    }
    return true
  }
}
