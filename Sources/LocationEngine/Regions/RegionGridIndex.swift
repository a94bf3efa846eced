/// A static, compressed (CSR) cell index: for each non-empty cell of `RegionGrid`, the slots of the
/// regions filed there, contiguous in one array.
///
/// Cells are found through an open-addressing hash table with linear probing (Knuth, TAOCP vol. 3,
/// 6.4, algorithm L) keyed by the cell key mixed with the SplitMix64 finaliser (Steele, Lea and
/// Flood 2014). `starts` holds, per table slot, where its entries begin, so a cell's entries are
/// `entries[starts[i]..<starts[i + 1]]`: 12 bytes per table slot and 4 bytes per entry.
struct RegionGridIndex: Sendable {
  fileprivate var keys: [UInt64] = []
  fileprivate var starts: [UInt32] = [0]
  fileprivate var entries: [Int32] = []
  fileprivate var mask = 0
  /// Bit `L` is set when level `L` has at least one entry.
  private(set) var levelMask: UInt32 = 0

  /// An empty index.
  init() {}

  /// Bytes held by the index's arrays (their capacities).
  var storageBytes: Int {
    keys.capacity * 8 + starts.capacity * 4 + entries.capacity * 4
  }

  /// The number of (cell, region) entries.
  var entryCount: Int { entries.count }

  @inline(__always)
  fileprivate static func mix(_ key: UInt64) -> UInt64 {
    var z = key
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
  }

  /// Builds the index.
  /// - Parameters:
  ///   - slotCount: Slots are `0..<slotCount`.
  ///   - cells: Calls its second argument with every cell key of a slot (none for a removed slot)
  ///     and returns the level the slot was filed at; it is called twice per slot and must give the
  ///     same keys both times.
  init(slotCount: Int, cells: (Int, (UInt64) -> Void) -> Int) {
    // Pass 1: count the entries of every cell.
    var capacity = 1024
    var tableKeys = [UInt64](repeating: 0, count: capacity)
    var counts = [UInt32](repeating: 0, count: capacity)
    var used = 0
    var levels: UInt32 = 0
    for slot in 0..<slotCount {
      let level = cells(slot) { key in
        if (used + 1) * 2 > capacity {
          Self.grow(&tableKeys, &counts, &capacity)
        }
        let m = capacity - 1
        var i = Int(truncatingIfNeeded: Self.mix(key)) & m
        while tableKeys[i] != 0 && tableKeys[i] != key { i = (i + 1) & m }
        if tableKeys[i] == 0 {
          tableKeys[i] = key
          used += 1
        }
        counts[i] += 1
      }
      if level >= 0 { levels |= 1 << UInt32(level) }
    }
    // Starts: prefix sums in table order.
    var starts = [UInt32](repeating: 0, count: capacity + 1)
    var total: UInt32 = 0
    for i in 0..<capacity {
      starts[i] = total
      total += counts[i]
    }
    starts[capacity] = total
    // Pass 2: fill, reusing `counts` as the write cursor.
    for i in 0..<capacity { counts[i] = starts[i] }
    var entries = [Int32](repeating: -1, count: Int(total))
    let m = capacity - 1
    for slot in 0..<slotCount {
      _ = cells(slot) { key in
        var i = Int(truncatingIfNeeded: Self.mix(key)) & m
        while tableKeys[i] != key { i = (i + 1) & m }
        entries[Int(counts[i])] = Int32(truncatingIfNeeded: slot)
        counts[i] += 1
      }
    }
    self.keys = tableKeys
    self.starts = starts
    self.entries = entries
    self.mask = m
    self.levelMask = total == 0 ? 0 : levels
  }

  private static func grow(_ keys: inout [UInt64], _ counts: inout [UInt32], _ capacity: inout Int)
  {
    let newCapacity = capacity * 2
    var newKeys = [UInt64](repeating: 0, count: newCapacity)
    var newCounts = [UInt32](repeating: 0, count: newCapacity)
    let m = newCapacity - 1
    for i in 0..<capacity where keys[i] != 0 {
      var j = Int(truncatingIfNeeded: mix(keys[i])) & m
      while newKeys[j] != 0 { j = (j + 1) & m }
      newKeys[j] = keys[i]
      newCounts[j] = counts[i]
    }
    keys = newKeys
    counts = newCounts
    capacity = newCapacity
  }
}

extension RegionGridIndex {
  /// The positions in the entry array of the slots filed in a cell (empty when it has none).
  @inline(__always)
  func entries(inCell key: UInt64) -> Range<Int> {
    if keys.isEmpty { return 0..<0 }
    var i = Int(truncatingIfNeeded: Self.mix(key)) & mask
    while true {
      let k = keys[i]
      if k == key { return Int(starts[i])..<Int(starts[i + 1]) }
      if k == 0 { return 0..<0 }
      i = (i + 1) & mask
    }
  }

  /// The slot at a position of the entry array.
  @inline(__always)
  func slot(at position: Int) -> Int { Int(entries[position]) }
}
