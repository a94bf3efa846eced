import CPrefetch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A gazetteer file mapped read-only into memory, split into its tagged sections.
///
/// Opening maps the file and reads the header only: nothing is built, and pages are read from disk
/// as lookups touch them. Every read is bounds-checked against its section (the nearest-place
/// search reads place records unchecked, with indices it keeps below the number of whole records
/// the section holds), so a truncated or corrupt file gives wrong answers or none, never a crash.
/// The layout is in `GazetteerFormat`.
package final class GazetteerFile: @unchecked Sendable {
  // @unchecked: the mapping is PROT_READ and MAP_PRIVATE, written by nobody after `init`, and
  // unmapped only in `deinit`, when no reader can hold the object any more.
  private let base: UnsafeMutableRawPointer?
  private let length: Int
  /// The sections by tag.
  let sections: [String: ByteRegion]
  /// The path the file was opened from.
  package let path: String

  /// Maps the file at `path` and reads its header.
  ///
  /// - Parameter path: The gazetteer file.
  /// - Throws: `GeocodingError` with code `.dataUnavailable` when the file cannot be opened or
  ///   mapped, or its header is not a gazetteer's.
  package init(path: String) throws(GeocodingError) {
    self.path = path
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw GeocodingError(
        .dataUnavailable,
        "cannot open the gazetteer file \(path): \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0, status.st_size > 0 else {
      throw GeocodingError(.dataUnavailable, "the gazetteer file \(path) is empty or unreadable")
    }
    let size = Int(status.st_size)
    guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0),
      mapped != MAP_FAILED
    else {
      throw GeocodingError(.dataUnavailable, "cannot map the gazetteer file \(path)")
    }
    base = mapped
    length = size
    let whole = ByteRegion(base: UnsafeRawPointer(mapped), count: size)
    do {
      sections = try GazetteerFile.readHeader(whole, path: path)
    } catch {
      munmap(mapped, size)
      throw error
    }
  }

  /// Creates a gazetteer over bytes already in memory (for tests of corrupt files). The bytes are
  /// copied into an anonymous mapping.
  ///
  /// - Parameter bytes: The file's contents.
  /// - Throws: `GeocodingError` with code `.dataUnavailable` for a header that is not a
  ///   gazetteer's.
  package init(bytes: [UInt8]) throws(GeocodingError) {
    path = "<memory>"
    let size = max(bytes.count, 1)
    guard
      let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
      mapped != MAP_FAILED
    else {
      throw GeocodingError(.dataUnavailable, "cannot map \(bytes.count) bytes")
    }
    bytes.withUnsafeBytes { source in
      if let address = source.baseAddress {
        mapped.copyMemory(from: address, byteCount: bytes.count)
      }
    }
    base = mapped
    length = size
    do {
      sections = try GazetteerFile.readHeader(
        ByteRegion(base: UnsafeRawPointer(mapped), count: bytes.count), path: path)
    } catch {
      munmap(mapped, size)
      throw error
    }
  }

  deinit {
    if let base { munmap(base, length) }
  }

  /// The bytes of a section, or an empty region when the file has no such section.
  func section(_ tag: String) -> ByteRegion {
    sections[tag] ?? ByteRegion(base: nil, count: 0)
  }

  /// The file's size in bytes.
  package var size: Int { length }

  private static func readHeader(_ whole: ByteRegion, path: String) throws(GeocodingError)
    -> [String: ByteRegion]
  {
    guard whole.count >= 16, whole.bytes(0, 8) == GazetteerFormat.magic else {
      throw GeocodingError(.dataUnavailable, "\(path) is not a gazetteer file (bad magic)")
    }
    let version = whole.u32(8)
    guard version == GazetteerFormat.version else {
      throw GeocodingError(
        .dataUnavailable,
        "\(path) has format version \(version); this build reads version \(GazetteerFormat.version)"
      )
    }
    let count = Int(whole.u32(12))
    guard count <= 64, 16 + 24 * count <= whole.count else {
      throw GeocodingError(.dataUnavailable, "\(path) has a truncated section table")
    }
    var sections: [String: ByteRegion] = [:]
    for index in 0..<count {
      let entry = 16 + 24 * index
      let tag = String(decoding: whole.bytes(entry, 4), as: UTF8.self)
      let offset = whole.u64(entry + 8)
      let size = whole.u64(entry + 16)
      guard offset <= UInt64(whole.count), size <= UInt64(whole.count) - offset else {
        throw GeocodingError(.dataUnavailable, "\(path): section \(tag) lies outside the file")
      }
      sections[tag] = whole.slice(Int(offset), Int(size))
    }
    for tag in GazetteerFormat.requiredSections where sections[tag] == nil {
      throw GeocodingError(.dataUnavailable, "\(path) lacks the section \(tag)")
    }
    let placeCount = (sections["PLAC"]?.count ?? 0) / GazetteerFormat.placeSize
    guard sections["TOPS"]?.count == 4 * PlaceTree.topNodes(placeCount: placeCount) else {
      throw GeocodingError(
        .dataUnavailable, "\(path): the place tree's top levels do not fit its places")
    }
    return sections
  }
}

/// A bounds-checked window on mapped bytes: every read outside it returns zero.
struct ByteRegion: @unchecked Sendable {
  // @unchecked: the pointer is into a read-only mapping owned by a `GazetteerFile`, which its
  // users keep alive.
  let base: UnsafeRawPointer?
  let count: Int

  /// The bytes `[offset, offset + length)` as a window of their own (empty when out of range).
  func slice(_ offset: Int, _ length: Int) -> ByteRegion {
    guard let base, offset >= 0, length >= 0, offset <= count, length <= count - offset else {
      return ByteRegion(base: nil, count: 0)
    }
    return ByteRegion(base: base + offset, count: length)
  }

  /// A copy of `length` bytes from `offset` (empty when out of range).
  func bytes(_ offset: Int, _ length: Int) -> [UInt8] {
    let window = slice(offset, length)
    guard let start = window.base else { return [] }
    return Array(UnsafeRawBufferPointer(start: start, count: window.count))
  }

  @inline(__always)
  private func contains(_ offset: Int, _ size: Int) -> Bool {
    offset >= 0 && offset <= count &- size
  }

  @inline(__always)
  func u8(_ offset: Int) -> UInt8 {
    guard let base, contains(offset, 1) else { return 0 }
    return base.load(fromByteOffset: offset, as: UInt8.self)
  }

  @inline(__always)
  func u16(_ offset: Int) -> UInt16 {
    guard let base, contains(offset, 2) else { return 0 }
    return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
  }

  @inline(__always)
  func u32(_ offset: Int) -> UInt32 {
    guard let base, contains(offset, 4) else { return 0 }
    return UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
  }

  @inline(__always)
  func i32(_ offset: Int) -> Int32 { Int32(bitPattern: u32(offset)) }

  @inline(__always)
  func u64(_ offset: Int) -> UInt64 {
    guard let base, contains(offset, 8) else { return 0 }
    return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }

  @inline(__always)
  func f32(_ offset: Int) -> Float { Float(bitPattern: u32(offset)) }

  /// Starts fetching the cache line at `offset` without waiting for it (nothing out of range).
  @inline(__always)
  func prefetch(_ offset: Int) {
    guard let base, offset >= 0, offset < count else { return }
    cprefetch_read(base + offset)
  }

  /// The string at `offset` of a string blob: a u16 byte length and UTF-8 bytes (invalid UTF-8 is
  /// repaired, a length past the end gives the empty string).
  func string(_ offset: Int) -> String {
    let length = Int(u16(offset))
    let window = slice(offset + 2, length)
    guard let start = window.base, window.count > 0 else { return "" }
    return String(
      decoding: UnsafeRawBufferPointer(start: start, count: window.count), as: UTF8.self)
  }

  /// Whether the string at `offset` of a string blob has exactly the bytes `key`.
  func stringEquals(_ offset: Int, _ key: [UInt8]) -> Bool {
    guard Int(u16(offset)) == key.count else { return false }
    let window = slice(offset + 2, key.count)
    guard let start = window.base, window.count == key.count else { return key.isEmpty }
    return key.withUnsafeBytes { bytes in
      guard let keyStart = bytes.baseAddress else { return false }
      return memcmp(start, keyStart, key.count) == 0
    }
  }
}
