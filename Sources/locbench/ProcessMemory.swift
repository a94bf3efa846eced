import Foundation

/// This process's resident memory, read from /proc without allocating: the memory benchmarks
/// measure the heap, and a reader that allocated (the text of /proc/self/smaps, its lines) would
/// leave its own blocks among the pages it measures.
enum ProcessMemory {
  /// The buffer /proc files are read into, allocated (and touched) once, at the first
  /// measurement, so that it is part of every baseline.
  nonisolated(unsafe) private static let buffer: UnsafeMutableRawBufferPointer = {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    buffer.initializeMemory(as: UInt8.self, repeating: 0)
    return buffer
  }()

  /// glibc's `malloc_trim`, looked up with `dlsym` (Swift's Glibc module leaves out malloc.h).
  private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
  }()

  /// A mapping's header line in /proc/self/smaps: `address perms offset device inode [path]`.
  struct Header {
    let bytes: UnsafeRawBufferPointer

    /// Whether the line has no path (an anonymous mapping) or the path `[heap]`.
    var isAnonymous: Bool {
      var count = 0
      var index = 0
      var lastStart = 0
      while index < bytes.count {
        while index < bytes.count, bytes[index] == 0x20 { index += 1 }
        guard index < bytes.count else { break }
        count += 1
        lastStart = index
        while index < bytes.count, bytes[index] != 0x20 { index += 1 }
      }
      return count == 5 || (count == 6 && ends(with: "[heap]") && index - lastStart == 6)
    }

    /// Whether the line ends with `suffix`.
    func ends(with suffix: String) -> Bool {
      let tail = Array(suffix.utf8)
      guard tail.count <= bytes.count else { return false }
      return bytes[(bytes.count - tail.count)...].elementsEqual(tail)
    }
  }

  /// The resident size of this process's anonymous mappings (`[heap]` and those without a file:
  /// the heap's arenas and its large blocks), after `malloc_trim(0)` has given freed pages back,
  /// so that what is left is about the heap in use.
  static func heapInUse() -> Double {
    _ = mallocTrim?(0)
    return smapsResident { $0.isAnonymous }
  }

  /// The resident size of this process's mapping of `path` (its `Rss` in /proc/self/smaps): the
  /// file's pages this process has touched, whatever else the page cache holds.
  static func mappedResidentBytes(path: String) -> Double {
    let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    return smapsResident { $0.ends(with: resolved) || $0.ends(with: path) }
  }

  /// The resident size (`Rss` in /proc/self/smaps) of this process's mappings whose header line
  /// satisfies `counted`, read a buffer at a time.
  static func smapsResident(_ counted: (Header) -> Bool) -> Double {
    let descriptor = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0, let base = buffer.baseAddress else { return 0 }
    defer { close(descriptor) }
    let rss = Array("Rss:".utf8)
    var total = 0.0
    var inside = false
    var filled = 0
    while true {
      let count = read(descriptor, base + filled, buffer.count - filled)
      guard count > 0 else { break }
      filled += count
      var lineStart = 0
      while let end = buffer[lineStart..<filled].firstIndex(of: 0x0A) {
        let line = UnsafeRawBufferPointer(rebasing: buffer[lineStart..<end])
        lineStart = end + 1
        guard let first = line.first else { continue }
        let isHex = (0x30...0x39).contains(first) || (0x61...0x66).contains(first)
        if isHex, line.contains(0x2D) {
          inside = counted(Header(bytes: line))
        } else if inside, line.starts(with: rss) {
          var kilobytes = 0
          for byte in line.dropFirst(rss.count) where (0x30...0x39).contains(byte) {
            kilobytes = kilobytes * 10 + Int(byte - 0x30)
          }
          total += Double(kilobytes) * 1024
        }
      }
      // The unfinished line moves to the start; a line longer than the buffer is dropped.
      let rest = filled - lineStart
      if rest == buffer.count {
        filled = 0
      } else {
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[lineStart..<filled]))
        filled = rest
      }
    }
    return total
  }

  /// The process's resident set size, from /proc/self/statm.
  static func residentBytes() -> Double {
    let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0, let base = buffer.baseAddress else { return 0 }
    defer { close(descriptor) }
    var field = 0
    var pages = 0
    let count = read(descriptor, base, 256)
    for byte in buffer.prefix(max(count, 0)) {
      if byte == 0x20 {
        field += 1
        if field > 1 { break }
      } else if field == 1, (0x30...0x39).contains(byte) {
        pages = pages * 10 + Int(byte - 0x30)
      }
    }
    return Double(pages) * Double(sysconf(Int32(_SC_PAGESIZE)))
  }
}
