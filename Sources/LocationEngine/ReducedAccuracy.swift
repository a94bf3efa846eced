import Geodesy
import LocationModel

/// Approximate locations for apps with reduced accuracy authorization (`accuracy: 1`,
/// `CLAccuracyAuthorization.reducedAccuracy`): every fix is moved to a fixed point of the ~3 km
/// cell it falls in (`docs/security.md`, "Reduced accuracy").
///
/// Rules (ours):
/// - **Grid.** Latitude is cut into `bandCount` bands of equal angular height (`180° / bandCount`,
///   about `cellSize` on the ground). A band is cut into `n = max(1, ⌊C / cellSize⌋)` cells of equal
///   longitude width, where `C` is the length of the parallel through the band's middle on a
///   sphere of the Earth's mean radius, so cells are about `cellSize` wide everywhere and a little
///   more, never less. Column 0 starts at -180°, so the antimeridian is always a cell edge and 180°
///   is filed as -180° (the same meridian); the band at each pole is cut into a few wedges.
///   Distances are on a sphere of the mean radius R1 = 6,371,008.8 m (IUGG); the grid needs no
///   better.
/// - **Output.** A fix in a cell comes out at the cell's centre moved by the cell's own offset, at
///   most `maximumOffset` (a third of a cell) in a direction and distance drawn from a hash of the
///   secret and the cell's indices (SplitMix64, Steele, Lea & Flood, "Fast splittable pseudorandom
///   number generators", OOPSLA 2014; constants of Vigna's reference `splitmix64.c`). Every fix in
///   one cell gives the same coordinate, so averaging many fixes recovers nothing finer than the
///   cell; the offset keeps the output off a regular lattice whose points would give the grid
///   away. SplitMix64 is not a cryptographic function: the protection is the snapping, and the
///   offset only adds uncertainty about where the cell is.
/// - **Measures.** `horizontalAccuracy` becomes `max(original, cellSize)`; altitude, ellipsoidal
///   altitude, speed, course and their accuracies, floor and satellites become unknown (`nil`, or
///   -1 for the measures whose unknown is negative). Time, quality, `isSimulated` and `source`
///   are kept.
/// - **Invalid fixes** stay invalid and carry nothing precise: a fix with a negative (or NaN)
///   accuracy keeps that accuracy, but its coordinate, if finite with a latitude within ±90°, is
///   snapped like any other, and its other measures are cleared all the same. A coordinate that
///   is not finite, or a latitude beyond ±90°, is not a position and passes unchanged. Longitudes
///   outside ±180° are brought into range first. Nothing here traps.
package struct ReducedAccuracy: Sendable {
  /// The nominal side of a cell in metres: reduced fixes are this accurate at best.
  package static let cellSize: Double = 3000
  /// The largest distance in metres between a cell's centre and its output point (a third of a
  /// cell).
  package static let maximumOffset: Double = cellSize / 3
  /// Metres per degree on the sphere of mean radius R1 = 6,371,008.8 m (IUGG).
  static let metresPerDegree: Double = 6_371_008.8 * .pi / 180
  /// The number of latitude bands (6,672: bands of about 2,999.9 m).
  static let bandCount = Int((180 * metresPerDegree / cellSize).rounded())
  /// The height of a band in degrees.
  static let bandHeight: Double = 180 / Double(bandCount)

  /// One cell of the grid.
  struct Cell: Sendable, Equatable {
    /// The band, 0 (at the south pole) ..< `bandCount`.
    var band: Int
    /// The column, 0 (starting at -180°) ..< `columns`.
    var column: Int
    /// The number of cells in the band.
    var columns: Int

    /// The southern edge, degrees.
    var south: Double { -90 + Double(band) * ReducedAccuracy.bandHeight }
    /// The northern edge, degrees.
    var north: Double { south + ReducedAccuracy.bandHeight }
    /// The western edge, degrees (-180 ..< 180).
    var west: Double { -180 + Double(column) * width }
    /// The width in degrees of longitude.
    var width: Double { 360 / Double(columns) }
    /// The latitude of the centre.
    var centreLatitude: Double { south + ReducedAccuracy.bandHeight / 2 }
    /// The longitude of the centre.
    var centreLongitude: Double { west + width / 2 }
  }

  private let secret: UInt64

  /// Creates the reduction for a secret.
  /// - Parameter secret: chooses every cell's offset; keep it (the daemon keeps it in its store)
  ///   so that a cell's output stays the same across restarts, and keep it private.
  package init(secret: UInt64) {
    self.secret = secret
  }

  /// Reduces a fix: the cell's output point, an accuracy of at least `cellSize`, and nothing else
  /// that could be precise (see the rules above).
  /// - Parameter fix: a fix as a source produced it.
  /// - Returns: the fix an app with reduced accuracy receives.
  package func apply(_ fix: Fix) -> Fix {
    var reduced = fix
    reduced.altitude = nil
    reduced.ellipsoidalAltitude = nil
    reduced.verticalAccuracy = -1
    reduced.speed = -1
    reduced.speedAccuracy = -1
    reduced.course = -1
    reduced.courseAccuracy = -1
    reduced.floor = nil
    reduced.satellitesUsed = nil
    guard let cell = Self.cell(latitude: fix.latitude, longitude: fix.longitude) else { return fix }
    let point = output(of: cell)
    reduced.latitude = point.latitude
    reduced.longitude = point.longitude
    if fix.horizontalAccuracy >= 0 {
      reduced.horizontalAccuracy = max(fix.horizontalAccuracy, Self.cellSize)
    }
    return reduced
  }

  /// The cell of a coordinate; nil when it is not a position (not finite, latitude beyond ±90°).
  static func cell(latitude: Double, longitude: Double) -> Cell? {
    guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90 else { return nil }
    let band = min(bandCount - 1, Int((latitude + 90) / bandHeight))
    let columns = columnCount(band: band)
    // Longitude east of -180°, in [0, 360): the antimeridian is column 0's western edge.
    var east = (longitude + 180).truncatingRemainder(dividingBy: 360)
    if east < 0 { east += 360 }
    let column = min(columns - 1, Int(east / 360 * Double(columns)))
    return Cell(band: band, column: column, columns: columns)
  }

  /// The number of cells in a band: `max(1, ⌊C / cellSize⌋)` for the parallel through its middle.
  static func columnCount(band: Int) -> Int {
    let middle = -90 + (Double(band) + 0.5) * bandHeight
    let cosine = RegionGeometry.sinCos(degrees: middle).cos
    let circumference = 360 * metresPerDegree * max(0, cosine)
    return max(1, Int(circumference / cellSize))
  }

  /// The cell's output point: its centre moved by its offset.
  func output(of cell: Cell) -> (latitude: Double, longitude: Double) {
    // The cell's own generator: the secret, mixed once, then keyed by the cell's indices.
    var keyed = SplitMix64(seed: secret)
    let key =
      (UInt64(truncatingIfNeeded: cell.band) << 32) | UInt64(truncatingIfNeeded: cell.column)
    var generator = SplitMix64(seed: keyed.next() ^ key)
    // A point uniform in the disc of radius maximumOffset: direction uniform, distance R √u.
    let direction = generator.unit() * 360
    let distance = Self.maximumOffset * generator.unit().squareRoot()
    let (sine, cosine) = RegionGeometry.sinCos(degrees: direction)
    let north = distance * cosine
    let east = distance * sine
    let latitude = cell.centreLatitude + north / Self.metresPerDegree
    // The centre's parallel is never at a pole (the centre is half a band away).
    let parallel = RegionGeometry.sinCos(degrees: cell.centreLatitude).cos
    var longitude = cell.centreLongitude + east / (Self.metresPerDegree * parallel)
    longitude = (longitude + 180).truncatingRemainder(dividingBy: 360)
    if longitude < 0 { longitude += 360 }
    longitude -= 180
    return (min(90, max(-90, latitude)), min(180, max(-180, longitude)))
  }
}
