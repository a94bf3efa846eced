/// A static cell index: for each non-empty cell of `RegionGrid`, the slots of the regions filed
/// there, contiguous in one array (a compressed sparse row layout).
///
/// Built by sorting packed `(cell key, slot)` words, so entries are grouped by cell and, within a
/// cell, in slot order. Cells are found through an open-addressing hash table with linear probing
/// (Knuth, TAOCP vol. 3, 6.4, algorithm L) keyed by the cell key mixed with the SplitMix64
/// finaliser (Steele, Lea and Flood 2014); a table slot holds the key, the first entry and the
/// count in 16 bytes, so a lookup touches one cache line. Entries take 4 bytes each.
struct RegionGridIndex: Sendable {
  /// One table slot: a cell and where its entries are (`key == 0`: empty).
  struct Cell {
    var key: UInt64
    var start: UInt32
    var count: UInt32
  }

  /// The most slots the packing can hold (28 bits).
  static let maximumSlots = 1 << 28

  private var table: [Cell] = []
  private var entries: [Int32] = []
  private var mask = 0
  /// Bit `L` is set when level `L` has at least one entry.
  private(set) var levelMask: UInt32 = 0

  /// An empty index.
  init() {}

  /// Bytes held by the index's arrays (their capacities).
  var storageBytes: Int {
    table.capacity * MemoryLayout<Cell>.stride + entries.capacity * 4
  }

  /// The number of (cell, region) entries.
  var entryCount: Int { entries.count }

  @inline(__always)
  private static func mix(_ key: UInt64) -> UInt64 {
    var z = key
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
  }

  /// The positions in the entry array of the slots filed in a cell (empty when it has none).
  @inline(__always)
  func entries(inCell key: UInt64) -> Range<Int> {
    if table.isEmpty { return 0..<0 }
    var i = Int(truncatingIfNeeded: Self.mix(key)) & mask
    while true {
      let cell = table[i]
      if cell.key == key { return Int(cell.start)..<Int(cell.start + cell.count) }
      if cell.key == 0 { return 0..<0 }
      i = (i + 1) & mask
    }
  }

  /// The slot at a position of the entry array.
  @inline(__always)
  func slot(at position: Int) -> Int { Int(entries[position]) }

  /// Builds the index.
  /// - Parameters:
  ///   - slotCount: Slots are `0..<slotCount`, fewer than `maximumSlots`.
  ///   - expectedEntries: A hint for the number of entries.
  ///   - cells: Calls its second argument with every cell key of a slot (none for a removed slot;
  ///     keys below `RegionGrid.keyLimit`) and returns the level the slot was filed at, or -1.
  init(slotCount: Int, expectedEntries: Int, cells: (Int, (UInt64) -> Void) -> Int) {
    precondition(slotCount <= Self.maximumSlots, "RegionMonitor enforces maximumCount")
    var packed: [UInt64] = []
    packed.reserveCapacity(expectedEntries)
    var levels: UInt32 = 0
    for slot in 0..<slotCount {
      let word = UInt64(slot)
      let level = cells(slot) { key in packed.append(key << 28 | word) }
      if level >= 0 { levels |= 1 << UInt32(level) }
    }
    packed.sort()
    var distinct = 0
    var previous: UInt64 = 0
    for word in packed where word >> 28 != previous {
      previous = word >> 28
      distinct += 1
    }
    var capacity = 16
    while capacity < distinct * 2 { capacity <<= 1 }
    var table = [Cell](repeating: Cell(key: 0, start: 0, count: 0), count: capacity)
    var entries = [Int32](repeating: 0, count: packed.count)
    let m = capacity - 1
    var groupStart = 0
    while groupStart < packed.count {
      let key = packed[groupStart] >> 28
      var groupEnd = groupStart
      while groupEnd < packed.count && packed[groupEnd] >> 28 == key {
        entries[groupEnd] = Int32(truncatingIfNeeded: packed[groupEnd] & 0xfff_ffff)
        groupEnd += 1
      }
      var i = Int(truncatingIfNeeded: Self.mix(key)) & m
      while table[i].key != 0 { i = (i + 1) & m }
      table[i] = Cell(
        key: key, start: UInt32(truncatingIfNeeded: groupStart),
        count: UInt32(truncatingIfNeeded: groupEnd - groupStart))
      groupStart = groupEnd
    }
    self.table = table
    self.entries = entries
    self.mask = m
    self.levelMask = packed.isEmpty ? 0 : levels
  }
}
