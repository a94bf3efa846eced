/// The layout of a gazetteer file, version 3, as `scripts/build-gazetteer.py` writes it. All
/// numbers are little-endian; sections start on 8-byte boundaries.
///
/// Header: the magic `CLGAZ\0\0\1`, u32 version (3), u32 section count, then per section
/// (24 bytes) its 4-byte tag, u32 reserved, u64 offset and u64 length.
///
/// | tag | record | contents |
/// | --- | --- | --- |
/// | `PLAC` | 32 B | places in k-d tree order: f32 x, y, z (unit vector), u32 name, u32 population (bit 31: the place is a district, a key of `SECT`), u16 admin1, u16 admin2, u16 time zone, u16 country, u16 land region (bits 0-9) and clearance code (bits 10-15, `Gazetteer.clearanceMetres`), u16 radius (10 m) |
/// | `TOPS` | 4 B | the place tree's top levels: f32 splitting coordinate per node, breadth-first from node 1 (node 0 unused), `PlaceTree.topNodes(placeCount:)` of them |
/// | `SECT` | 12 B | districts, sorted by place: u32 place, u32 the city it is part of, u32 the district's own name |
/// | `NAMH`, `NAMP` | 8 B, 4 B | name index: FNV-1a 64 of each name key, sorted, and the place it names (equal hashes by population, largest first) |
/// | `CTRY` | 30 B | countries: ISO alpha-2, alpha-3, pad, u32 name, u32 key, u32 aliases (keys joined by `\|`), u32 population, i32 label latitude and longitude (1e-5°) |
/// | `ADM1` | 24 B | first-level areas: u16 country, pad, u32 name, u32 key, u32 GeoNames code, u32 most populous place, u32 population |
/// | `ADM2` | 4 B | second-level area names (index 0: none) |
/// | `TZID` | 4 B | IANA time zone identifiers |
/// | `LRGN`, `SRGN` | 8 B | land (country outline) and sea regions: u32 name, u16 country (0xFFFF: none), u8 flags (1 sea, 2 inland water, 4 has places); region 0 is "none" |
/// | `LIV`, `SIV` | 8 B | outline vertices: i32 latitude, i32 longitude (microdegrees); each ring closed |
/// | `LIR`, `SIR` | 8 B | rings: u32 first vertex, u16 region |
/// | `LIT`, `SIT` | 4 B | the 360 x 180 top cells of 1°, row-major from (-90, -180) |
/// | `LIC`, `SIC` | 4 B | child cells, 16 per split cell, row-major from its south-west |
/// | `LIL`, `SIL` | 11 B | leaves: u32 first edge, u16 edge count, u8 reference offset, u16 region, u16 second region |
/// | `LIE`, `SIE` | 4 B | edges of leaves: the index of the edge's first vertex |
/// | `STRS` | | strings: u16 byte length and UTF-8 bytes; offset 0 is the empty string |
///
/// A cell entry is kind (top two bits: 0 uniform, 1 leaf, 2 split) and a 30-bit payload (the
/// region; the leaf; the first child).
enum GazetteerFormat {
  static let magic: [UInt8] = Array("CLGAZ".utf8) + [0, 0, 1]
  static let version: UInt32 = 3
  static let requiredSections = [
    "PLAC", "TOPS", "SECT", "NAMH", "NAMP", "CTRY", "ADM1", "ADM2", "TZID", "LRGN", "SRGN", "STRS",
    "LIV ", "LIR ", "LIT ", "LIC ", "LIL ", "LIE ", "SIV ", "SIR ", "SIT ", "SIC ", "SIL ", "SIE ",
  ]

  static let placeSize = 32
  static let countrySize = 30
  static let admin1Size = 24
  static let regionSize = 8
  static let leafSize = 11
  /// Where a place record's land-region field lies.
  static let placeRegionOffset = 28
  /// The bits of a place's land-region field that hold the region; the six above hold its
  /// clearance code.
  static let regionBits = 10
  static let regionMask = (1 << regionBits) - 1

  /// Where in its cell a leaf's reference point lies (fractions of the cell's height and width);
  /// the same table is in the build script. A switch, not an array, so that a lookup needs no
  /// lazily initialized global.
  ///
  /// - Parameter which: The leaf's reference offset number.
  /// - Returns: The fractions, or `nil` for a number the format does not define.
  static func referenceOffset(_ which: Int) -> (Double, Double)? {
    switch which {
    case 0: (0.5, 0.5)
    case 1: (0.3, 0.3)
    case 2: (0.7, 0.7)
    case 3: (0.3, 0.7)
    case 4: (0.7, 0.3)
    case 5: (0.41, 0.59)
    case 6: (0.59, 0.41)
    case 7: (0.2, 0.5)
    case 8: (0.5, 0.2)
    case 9: (0.8, 0.5)
    case 10: (0.5, 0.8)
    default: nil  // a corrupt file's number
    }
  }
}
