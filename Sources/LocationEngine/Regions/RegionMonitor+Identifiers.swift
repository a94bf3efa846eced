import LocationModel

/// Identifiers (an open-addressing table over their UTF-8 bytes) and compaction of removed slots.
extension RegionMonitor {
  // MARK: - Identifiers

  func identifier(ofSlot slot: Int) -> String {
    let start = Int(identifierStarts[slot])
    let end = Int(identifierStarts[slot + 1])
    return String(decoding: identifierBytes[start..<end], as: UTF8.self)
  }

  @inline(__always)
  static func withBytes<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R)
    -> R
  {
    if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
    return Array(string.utf8).withUnsafeBufferPointer(body)
  }

  /// FNV-1a, 64 bits (Fowler, Noll and Vo; IETF draft-eastlake-fnv), folded.
  @inline(__always)
  static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
      h ^= UInt64(byte)
      h = h &* 0x0000_0100_0000_01b3
    }
    return h ^ (h >> 29)
  }

  func slot(of identifier: String) -> Int? {
    Self.withBytes(of: identifier) { bytes in findSlot(bytes, hash: Self.hash(bytes)) }
  }

  func findSlot(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int? {
    findPosition(bytes, hash: hash).map { Int(identifierTable[$0]) }
  }

  /// The identifier table position holding a live slot with these bytes.
  func findPosition(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int? {
    if identifierTable.isEmpty { return nil }
    let mask = identifierTable.count - 1
    var i = Int(truncatingIfNeeded: hash) & mask
    while true {
      let entry = identifierTable[i]
      if entry == Self.emptyEntry { return nil }
      if entry >= 0 && identifierMatches(slot: Int(entry), bytes) { return i }
      i = (i + 1) & mask
    }
  }

  func identifierMatches(slot: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    let start = Int(identifierStarts[slot])
    let end = Int(identifierStarts[slot + 1])
    guard end - start == bytes.count else { return false }
    return identifierBytes.withUnsafeBufferPointer { stored in
      for i in 0..<bytes.count where stored[start + i] != bytes[i] { return false }
      return true
    }
  }

  mutating func insertIdentifier(slot: Int, hash: UInt64) {
    if (identifierTableUsed + 1) * 2 > identifierTable.count {
      var capacity = 16
      while capacity < (liveCount + 1) * 4 { capacity <<= 1 }
      rehashIdentifiers(capacity: capacity)
    }
    let mask = identifierTable.count - 1
    var i = Int(truncatingIfNeeded: hash) & mask
    while identifierTable[i] >= 0 { i = (i + 1) & mask }
    if identifierTable[i] == Self.emptyEntry { identifierTableUsed += 1 }
    identifierTable[i] = Int32(truncatingIfNeeded: slot)
  }

  /// Rebuilds the identifier table from the live slots (dropping tombstones).
  mutating func rehashIdentifiers(capacity: Int) {
    var table = [Int32](repeating: Self.emptyEntry, count: capacity)
    let mask = capacity - 1
    var used = 0
    identifierBytes.withUnsafeBufferPointer { all in
      for slot in 0..<hot.count where hot[slot].bits & Self.aliveBit != 0 {
        let start = Int(identifierStarts[slot])
        let end = Int(identifierStarts[slot + 1])
        let h = Self.hash(UnsafeBufferPointer(rebasing: all[start..<end]))
        var i = Int(truncatingIfNeeded: h) & mask
        while table[i] != Self.emptyEntry { i = (i + 1) & mask }
        table[i] = Int32(truncatingIfNeeded: slot)
        used += 1
      }
    }
    identifierTable = table
    identifierTableUsed = used
  }

  // MARK: - Compaction

  /// Drops the removed slots, keeping order, and rebuilds the lists, the table and the index.
  mutating func compact() {
    var newHot: [Hot] = []
    var newExact: [Exact] = []
    var newBytes: [UInt8] = []
    var newStarts: [UInt32] = [0]
    newHot.reserveCapacity(liveCount)
    newExact.reserveCapacity(liveCount)
    newStarts.reserveCapacity(liveCount + 1)
    unknownList = []
    insideList = []
    dirtyList = []
    for slot in 0..<hot.count where hot[slot].bits & Self.aliveBit != 0 {
      var h = hot[slot]
      h.bits &= ~Self.listBits
      newHot.append(h)
      newExact.append(exact[slot])
      let start = Int(identifierStarts[slot])
      let end = Int(identifierStarts[slot + 1])
      newBytes.append(contentsOf: identifierBytes[start..<end])
      newStarts.append(UInt32(truncatingIfNeeded: newBytes.count))
    }
    hot = newHot
    exact = newExact
    identifierBytes = newBytes
    identifierStarts = newStarts
    deadCount = 0
    for slot in 0..<hot.count { enlist(slot) }
    var capacity = 16
    while capacity < liveCount * 2 { capacity <<= 1 }
    rehashIdentifiers(capacity: capacity)
    buildIndex()
  }
}
