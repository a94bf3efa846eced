/// Point in polygon over many outlines at once: which region (country or sea) holds a point.
///
/// The world is cut into 1° cells; a cell crossed by many outline edges is split 4 x 4, down to
/// 1/256°. A cell that no edge touches is wholly inside one region (or none). Any other cell is a
/// leaf that lists every edge touching it and has a reference point whose regions are known
/// (computed when the file was built). A point's regions are the reference point's, toggled by
/// each edge that the segment from the point to the reference point crosses: crossing parity
/// (Shimrat, CACM 1962, "Algorithm 112") along a path that stays inside the cell, so only the
/// cell's own edges can cross it (the grid method of Haines, "Point in Polygon Strategies",
/// Graphics Gems IV, 1994). Coordinates are integer microdegrees and every orientation test is
/// exact in 64-bit integers; a vertex exactly on the segment counts as lying to its left
/// (symbolic perturbation), so touching a vertex never miscounts. Where outlines overlap, the
/// lowest region number wins.
package struct GazetteerCells: Sendable {
  let vertices: ByteRegion
  let rings: ByteRegion
  let top: ByteRegion
  let children: ByteRegion
  let leaves: ByteRegion
  let edges: ByteRegion

  init(file: GazetteerFile, prefix: String) {
    vertices = file.section(prefix + "V ")
    rings = file.section(prefix + "R ")
    top = file.section(prefix + "T ")
    children = file.section(prefix + "C ")
    leaves = file.section(prefix + "L ")
    edges = file.section(prefix + "E ")
  }

  private static let micro: Int64 = 1_000_000

  /// The region holding the point, or 0 for none.
  ///
  /// - Parameters:
  ///   - latitude: Degrees, -90...90.
  ///   - longitude: Degrees, -180...180.
  package func region(latitude: Double, longitude: Double) -> Int {
    let qLat = Int64((latitude * 1e6).rounded())
    let qLon = Int64((longitude * 1e6).rounded())
    let row = Int(min(max((qLat + 90 * Self.micro) / Self.micro, 0), 179))
    let column = Int(min(max((qLon + 180 * Self.micro) / Self.micro, 0), 359))
    var entry = top.u32((row * 360 + column) * 4)
    var south = Double(Int64(row) * Self.micro - 90 * Self.micro)
    var west = Double(Int64(column) * Self.micro - 180 * Self.micro)
    var size = Double(Self.micro)
    var depth = 0
    while entry >> 30 == 2 {
      depth += 1
      guard depth <= 8 else { return 0 }  // a corrupt file could loop
      size /= 4
      let r = min(max(Int(((Double(qLat) - south) / size).rounded(.down)), 0), 3)
      let c = min(max(Int(((Double(qLon) - west) / size).rounded(.down)), 0), 3)
      south += Double(r) * size
      west += Double(c) * size
      entry = children.u32((Int(entry & 0x3FFF_FFFF) + r * 4 + c) * 4)
    }
    let payload = Int(entry & 0x3FFF_FFFF)
    switch entry >> 30 {
    case 0: return payload
    case 1:
      return leafRegion(
        leaf: payload, qLat: qLat, qLon: qLon, south: south, west: west, size: size)
    default: return 0
    }
  }

  private func leafRegion(
    leaf: Int, qLat: Int64, qLon: Int64, south: Double, west: Double, size: Double
  ) -> Int {
    let record = leaf * GazetteerFormat.leafSize
    let first = Int(leaves.u32(record))
    let count = Int(leaves.u16(record + 4))
    let which = Int(leaves.u8(record + 6))
    guard let offset = GazetteerFormat.referenceOffset(which) else { return 0 }
    let rLat = Int64((south + offset.0 * size + 0.5).rounded(.down))
    let rLon = Int64((west + offset.1 * size + 0.5).rounded(.down))
    var parity = RegionParity()
    parity.toggle(Int(leaves.u16(record + 7)))
    parity.toggle(Int(leaves.u16(record + 9)))
    for index in 0..<count {
      let k = Int(edges.u32((first + index) * 4))
      let aLat = Int64(vertices.i32(k * 8))
      let aLon = Int64(vertices.i32(k * 8 + 4))
      let bLat = Int64(vertices.i32(k * 8 + 8))
      let bLon = Int64(vertices.i32(k * 8 + 12))
      let sideA = Self.orient(qLat, qLon, rLat, rLon, aLat, aLon) >= 0
      let sideB = Self.orient(qLat, qLon, rLat, rLon, bLat, bLon) >= 0
      guard sideA != sideB else { continue }
      let sideQ = Self.orient(aLat, aLon, bLat, bLon, qLat, qLon) > 0
      let sideR = Self.orient(aLat, aLon, bLat, bLon, rLat, rLon) > 0
      guard sideQ != sideR else { continue }
      parity.toggle(ringRegion(ofVertex: k))
    }
    return parity.lowest
  }

  /// The sign of the cross product (p1 - p0) x (x - p0), with (longitude, latitude) as (x, y):
  /// positive when x lies to the left of p0 -> p1. Exact: coordinates are below 2^29 in magnitude.
  @inline(__always)
  static func orient(
    _ p0Lat: Int64, _ p0Lon: Int64, _ p1Lat: Int64, _ p1Lon: Int64, _ xLat: Int64, _ xLon: Int64
  ) -> Int64 {
    let a = (p1Lon &- p0Lon) &* (xLat &- p0Lat)
    let b = (p1Lat &- p0Lat) &* (xLon &- p0Lon)
    return a &- b
  }

  /// The region of the ring that holds vertex `k` (binary search over the rings' first vertices).
  private func ringRegion(ofVertex k: Int) -> Int {
    var low = 0
    var high = rings.count / 8
    while high - low > 1 {
      let middle = (low + high) / 2
      if Int(rings.u32(middle * 8)) <= k { low = middle } else { high = middle }
    }
    return Int(rings.u16(low * 8 + 4))
  }
}

/// The regions holding a point as a parity set of at most eight regions (outlines rarely overlap;
/// more would only happen in a corrupt file, and are dropped).
private struct RegionParity {
  private var slots: InlineArray<8, Int> = .init(repeating: 0)
  private var used = 0

  mutating func toggle(_ region: Int) {
    guard region != 0 else { return }
    for index in 0..<used where slots[index] == region {
      slots[index] = slots[used - 1]
      used -= 1
      return
    }
    guard used < 8 else { return }
    slots[used] = region
    used += 1
  }

  var lowest: Int {
    var best = 0
    for index in 0..<used where best == 0 || slots[index] < best { best = slots[index] }
    return best
  }
}
