import CPrefetch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Nearest-place search over the places of a gazetteer file, which are stored as an implicit
/// k-d tree (Bentley, "Multidimensional binary search trees used for associative searching",
/// CACM 1975): the node of the index range `[low, high)` is at `(low + high) / 2`, split on axis
/// `depth % 3`, with smaller coordinates to its left. Points are unit vectors, so the straight-line
/// (chord) distance orders places exactly as the great-circle distance does, with no special case
/// at the poles or the antimeridian.
///
/// A search spends its time waiting for memory: each level of the tree is a place record on a
/// cache line of its own, and which one comes next depends on the last. Three things shorten the
/// wait. The splitting coordinates of the top levels (at most `maximumTopLevels`, 8,191 nodes) are
/// copied, by the script that builds the file, into a section of their own (`TOPS`) in
/// breadth-first order (node `k` has children `2k` and `2k + 1`, the layout of Eytzinger's heap):
/// 32 KiB that stay in the processor's cache, read in place from the mapping. The
/// places at those nodes are not read on the way down: a node's place lies on its splitting plane,
/// so it is put on the stack with the plane's distance and read only if that distance is still
/// below the best once the nearer side has been searched, which it rarely is. And a subtree of at
/// most `bucketSize` places, which the implicit layout keeps in one contiguous index range, is
/// scanned whole, its lines fetched together instead of one after another. The range under the
/// copied levels that the nearer sides lead to (`firstLeaf(of:)`, about 18 places) is found from
/// the copy alone, so a caller can prefetch its lines before other work, and it is scanned first:
/// the best place there then rules out most far sides and planes on the way down, which are not
/// put on the stack.
package struct PlaceTree: Sendable {
  let places: ByteRegion
  let count: Int
  /// The splitting coordinates of the top levels' nodes, breadth-first from node 1, as the file
  /// holds them (`TOPS`), so that opening builds nothing.
  let top: ByteRegion
  /// The number of nodes in `top` (2 to the number of levels copied); nodes at or past it are
  /// below the copied levels.
  let topCount: Int

  init(places: ByteRegion, top: ByteRegion) {
    self.places = places
    count = min(places.count / GazetteerFormat.placeSize, Self.maximumCount)
    self.top = top
    // A file whose copy does not fit is refused when it is opened; `f32` reads past it as 0.
    topCount = Self.topNodes(placeCount: count)
  }

  /// The number of nodes of the copied top levels (with the unused node 0) for a tree of
  /// `placeCount` places: levels are copied while the ranges they split hold more than
  /// `bucketSize` places, at most `maximumTopLevels` of them. `scripts/build-gazetteer.py`
  /// (`tree_top`) copies by the same rule.
  static func topNodes(placeCount: Int) -> Int {
    let count = min(placeCount, maximumCount)
    var levels = 0
    while levels < maximumTopLevels, count >> (levels + 1) > bucketSize { levels += 1 }
    return 1 << levels
  }

  @inline(__always)
  func split(_ node: Int) -> Double { Double(top.f32(node &* 4)) }

  /// The unit vector of a latitude and longitude in degrees.
  package static func unitVector(latitude: Double, longitude: Double) -> SIMD3<Double> {
    let phi = latitude * .pi / 180
    let lambda = longitude * .pi / 180
    let cosPhi = cos(phi)
    return SIMD3(cosPhi * cos(lambda), cosPhi * sin(lambda), sin(phi))
  }

  @inline(__always)
  func coordinate(_ index: Int, _ axis: Int) -> Double {
    Double(places.f32(index * GazetteerFormat.placeSize + axis * 4))
  }

  @inline(__always)
  func region(_ index: Int) -> Int { regionField(index) & GazetteerFormat.regionMask }

  /// The clearance code of the place at `index` (`Gazetteer.clearanceMetres`).
  @inline(__always)
  func clearanceCode(_ index: Int) -> Int { regionField(index) >> GazetteerFormat.regionBits }

  @inline(__always)
  private func regionField(_ index: Int) -> Int {
    Int(places.u16(index * GazetteerFormat.placeSize + GazetteerFormat.placeRegionOffset))
  }

  /// A subtree of at most this many places is scanned whole instead of descended.
  static let bucketSize = 16
  /// The most levels copied (2^13 nodes of 4 bytes).
  static let maximumTopLevels = 13
  /// The most places a search reads (28 bits for an index in the packed stack entries).
  static let maximumCount = (1 << 28) - 1
  /// Entries on the search stack: 60 of 16 bytes, under the 1 KiB that
  /// `withUnsafeTemporaryAllocation` keeps on the machine stack. The depths of the ranges on the
  /// stack increase from its bottom to its top, so there are at most as many as the tree has levels
  /// (28 for 2^28 places), and at most one place per copied level (13) besides.
  static let stackSize = 60

  /// The nearest place to `target`, optionally only among the places of one land region.
  ///
  /// Depth-first, nearer side first, with an explicit stack, after the first leaf; a far side is
  /// visited only when the splitting plane is nearer than the best place so far, and a subtree of
  /// at most `bucketSize` places is scanned whole. Of equally near places, the first in the file
  /// that the search meets wins.
  ///
  /// - Parameters:
  ///   - target: A unit vector.
  ///   - region: The land region the place must lie in, or `nil` for any place.
  ///   - leaf: `firstLeaf(of: target)`, when the caller has it already.
  ///   - early: Called with the best place of the first leaf, when it has one, before the rest of
  ///     the search (which rarely finds a nearer one): a caller can start fetching what it will
  ///     read about the answer while the search goes on.
  /// - Returns: The place's index and its chord distance squared, or `nil` when no place
  ///   qualifies.
  package func nearest(
    to target: SIMD3<Double>, inRegion region: Int?, leaf: Range<Int>? = nil,
    early: (Int) -> Void = { _ in }
  ) -> (index: Int, chord2: Double)? {
    // Every index read is below `count`, and `count` whole records lie within the section.
    guard let base = places.base, count > 0 else { return nil }
    let first = leaf ?? firstLeaf(of: target)
    guard first.upperBound <= count else { return nil }
    return withUnsafeTemporaryAllocation(of: StackEntry.self, capacity: Self.stackSize) { stack in
      var search = NearestSearch(base: base, target: target, wanted: region ?? -1)
      search.run(tree: self, stack: stack, first: first, early: early)
      return search.bestIndex < 0 ? nil : (search.bestIndex, search.bestDistance)
    }
  }

  /// The range of places under the copied top levels that the nearer sides lead to from the
  /// root: for the shipped file about 18 places, contiguous in the implicit layout, found from the
  /// copy alone. A search scans it first, so that the best place found there prunes the far sides
  /// before they are put on the stack.
  ///
  /// - Parameter target: A unit vector.
  /// - Returns: The index range (empty for an empty tree).
  package func firstLeaf(of target: SIMD3<Double>) -> Range<Int> {
    guard count > 0 else { return 0..<0 }
    var low = 0
    var high = count
    var node = 1
    // One level down on the axis of `coordinate`; false below the copied levels or in a range
    // small enough to scan. The axes take turns, so three steps make one round.
    func step(_ coordinate: Double) -> Bool {
      guard node < topCount, high &- low > Self.bucketSize else { return false }
      let middle = (low &+ high) >> 1
      let left = coordinate < split(node)
      high = left ? middle : high
      low = left ? low : middle &+ 1
      node = node &* 2 &+ (left ? 0 : 1)
      return true
    }
    while step(target.x), step(target.y), step(target.z) {}
    return low..<high
  }

  /// Starts fetching the cache lines of a range of places without waiting for them, so that a
  /// caller with other work before the search (the country outline lookup) does it while they
  /// arrive (software prefetching: Mowry, Lam and Gupta, "Design and Evaluation of a Compiler
  /// Algorithm for Prefetching", ASPLOS 1992).
  ///
  /// - Parameter range: Places below `count` (`firstLeaf(of:)`).
  package func prefetch(_ range: Range<Int>) {
    guard let base = places.base, range.upperBound <= count else { return }
    // A prefetch never faults; `count` whole records lie within the section.
    var line = Int(bitPattern: base + range.lowerBound &* GazetteerFormat.placeSize) & ~63
    let end = Int(bitPattern: base + range.upperBound &* GazetteerFormat.placeSize)
    while line < end {
      cprefetch_read(UnsafeRawPointer(bitPattern: line))
      line &+= 64
    }
  }

  /// The great-circle distance in metres on a sphere of the mean Earth radius for a chord of
  /// length squared `chord2` between unit vectors.
  static func metres(chord2: Double) -> Double {
    2 * 6_371_008.8 * asin(min(1, chord2.squareRoot() / 2))
  }
}

/// A range still to visit: `[low, high)`, the axis it is split on and its node in the copied top
/// levels (0 below them), and the squared distance to its splitting plane, a lower bound of the
/// distance to any point in it (rounded down to single precision, so that it never prunes a range
/// that could hold a nearer place).
private struct StackEntry {
  var low: Int32
  var high: Int32
  var axisAndNode: Int32
  var bound: Float

  init(low: Int, high: Int, axis: Int, node: Int, bound: Double) {
    self.low = Int32(truncatingIfNeeded: low)
    self.high = Int32(truncatingIfNeeded: high)
    axisAndNode = Int32(truncatingIfNeeded: node << 2 | axis)
    let single = Float(bound)
    self.bound = Double(single) > bound ? single.nextDown : single
  }

  var axis: Int { Int(axisAndNode & 3) }
  var node: Int { Int(axisAndNode >> 2) }
}

/// The state of one nearest-place search: the best place so far, and how to read a place's
/// position without bounds checks (the caller keeps indices below the record count).
private struct NearestSearch {
  let base: UnsafeRawPointer
  let target: SIMD3<Double>
  let wanted: Int
  var bestIndex = -1
  var bestDistance = Double.infinity

  init(base: UnsafeRawPointer, target: SIMD3<Double>, wanted: Int) {
    self.base = base
    self.target = target
    self.wanted = wanted
  }

  mutating func run(
    tree: PlaceTree, stack: UnsafeMutableBufferPointer<StackEntry>, first: Range<Int>,
    early: (Int) -> Void
  ) {
    let count = tree.count
    let topCount = tree.topCount
    // The first leaf, whole (its lines were fetched early): the best place there prunes most far
    // sides on the way down, instead of every one being put on the stack and taken off again.
    for index in first { _ = visit(index) }
    if bestIndex >= 0 { early(bestIndex) }
    let firstLow = first.lowerBound
    let firstHigh = first.upperBound
    // The way down from the root to the first leaf, through the copied levels only: the far
    // sides, and the places on the planes, that the best so far does not rule out, deepest last
    // (so first off the stack).
    var entries = 0
    var low = 0
    var high = count
    var axis = 0
    var node = 1
    // One level down on the axis of `coordinate` (`next` is the axis after it), as in
    // `PlaceTree.firstLeaf(of:)`; false below the copied levels or in a range small enough to scan.
    func step(_ coordinate: Double, _ next: Int) -> Bool {
      guard node < topCount, high &- low > PlaceTree.bucketSize else { return false }
      let middle = (low &+ high) >> 1
      let difference = coordinate - tree.split(node)
      let bound = difference * difference
      axis = next
      if bound < bestDistance, entries &+ 2 <= stack.count {
        let farther = difference < 0 ? node &* 2 &+ 1 : node &* 2
        stack[entries] = StackEntry(
          low: difference < 0 ? middle &+ 1 : low, high: difference < 0 ? high : middle,
          axis: next, node: farther < topCount ? farther : 0, bound: bound)
        stack[entries &+ 1] = StackEntry(
          low: middle, high: middle &+ 1, axis: 0, node: 0, bound: bound)
        entries &+= 2
      }
      let left = difference < 0
      high = left ? middle : high
      low = left ? low : middle &+ 1
      node = node &* 2 &+ (left ? 0 : 1)
      return true
    }
    while step(target.x, 1), step(target.y, 2), step(target.z, 0) {}
    // The range reached is the first leaf when the caller's `first` is this target's; if not,
    // it is searched like any other.
    if low < firstLow || high > firstHigh, entries < stack.count {
      stack[entries] = StackEntry(
        low: low, high: high, axis: axis, node: node < topCount ? node : 0, bound: 0)
      entries &+= 1
    }
    while entries > 0 {
      entries -= 1
      let entry = stack[entries]
      guard Double(entry.bound) < bestDistance else { continue }
      var low = Int(entry.low)
      var high = Int(entry.high)
      var axis = entry.axis
      var node = entry.node
      // Ranges nest: one within the first leaf has been visited already.
      while high - low > PlaceTree.bucketSize, low < firstLow || high > firstHigh {
        let middle = (low + high) >> 1
        let split: Double
        if node > 0, node < topCount {
          split = tree.split(node)
        } else {
          let point = visit(middle)
          split = axis == 0 ? point.x : axis == 1 ? point.y : point.z
        }
        let difference = (axis == 0 ? target.x : axis == 1 ? target.y : target.z) - split
        let bound = difference * difference
        axis = axis == 2 ? 0 : axis + 1
        if bound < bestDistance {
          let left = 2 * node
          let farther = difference < 0 ? left + 1 : left
          if entries < stack.count {
            stack[entries] = StackEntry(
              low: difference < 0 ? middle + 1 : low, high: difference < 0 ? high : middle,
              axis: axis, node: farther < topCount ? farther : 0, bound: bound)
            entries += 1
          }
          // The node's own place, on the plane: later, if still near enough (a range of one).
          if node > 0, node < topCount {
            if entries < stack.count {
              stack[entries] = StackEntry(
                low: middle, high: middle + 1, axis: 0, node: 0, bound: bound)
              entries += 1
            } else {
              _ = visit(middle)
            }
          }
        }
        let nearer = difference < 0 ? 2 * node : 2 * node + 1
        if difference < 0 { high = middle } else { low = middle + 1 }
        node = nearer < topCount ? nearer : 0
      }
      guard low < firstLow || high > firstHigh else { continue }
      for index in low..<max(low, high) { _ = visit(index) }
    }
  }

  /// Reads place `index` from the file, considers it, and returns its position.
  @inline(__always)
  mutating func visit(_ index: Int) -> SIMD3<Double> {
    let record = base + index &* GazetteerFormat.placeSize
    func float(_ offset: Int) -> Double {
      Double(
        Float(
          bitPattern: UInt32(
            littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt32.self))))
    }
    let point = SIMD3(float(0), float(4), float(8))
    let region = UInt16(
      littleEndian: record.loadUnaligned(
        fromByteOffset: GazetteerFormat.placeRegionOffset, as: UInt16.self))
    if wanted < 0 || Int(region) & GazetteerFormat.regionMask == wanted {
      let delta = point - target
      let distance = delta.x * delta.x + delta.y * delta.y + delta.z * delta.z
      // Equally near places: the first in the file, whichever the search met first.
      if distance < bestDistance || (distance == bestDistance && index < bestIndex) {
        bestDistance = distance
        bestIndex = index
      }
    }
    return point
  }
}
