#if canImport(Geodesy)
  import Geodesy
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Decodes NMEA 0183 sentences into fixes, headings and satellite views.
///
/// Works on bytes: no `String` per field and no Foundation. Understands GGA, RMC, GNS, GLL, GSA,
/// GSV, VTG, ZDA, GST and the heading sentences HDT, HDG, HDM and THS from any two-letter talker
/// (GP, GN, GL, GA, GB, BD, GQ, HC, HE, IN, II, ...).
///
/// Rules (ours):
/// - **Checksums.** A sentence is used only when its `*hh` checksum matches (upper or lower case
///   hex). Sentences without a checksum are skipped and counted, unless
///   `Options.acceptMissingChecksum` is set. Proprietary (`$P...`) and unknown sentences with a good
///   checksum are skipped and counted. A sentence whose fields are not valid (letters in a number,
///   minutes of 60, hour 24, a missing hemisphere) is skipped whole and counted as malformed: it
///   never contributes part of a fix. `statistics.firstBadLine` names the first bad line.
/// - **Epochs.** GGA, RMC, GNS and GLL carry a time of fix. A sentence with a time other than the
///   open epoch's closes that epoch (its fix is returned) and opens a new one; sentences without a
///   time (GSA, VTG, GLL of NMEA 1.x) join the open epoch. GST joins the epoch of its own time (it
///   may come before the epoch's first position sentence). ZDA only dates; it never opens an epoch.
///   `finish()` closes the last epoch. An epoch with a valid position gives one `.fix`; one whose
///   sentences only said "no fix" gives `.noFix`.
/// - **Merging.** The position comes from GGA, GNS, RMC or GLL: the one written with the most
///   decimals of minutes wins, and among equally precise ones the last sentence of the epoch (as
///   gpsd does; receivers that give RMC fewer decimals than GGA keep GGA's finer position).
///   The fix quality is GGA's indicator or GNS's best mode letter, else RMC's or GLL's mode
///   letter. Altitude above sea level and geoid separation come from GGA/GNS; the ellipsoidal
///   altitude is their sum, and unknown when the separation field is empty (no geoid model is
///   guessed). Speed and course come from RMC or VTG, the last one in the epoch winning.
///   Satellites used: GGA/GNS's count, else the IDs listed by the epoch's GSA sentences.
/// - **Accuracy.** With a GST in the epoch, `horizontalAccuracy` is the root sum square of its
///   latitude and longitude standard deviations (the distance RMS, about 65 % for a round error
///   ellipse), else of its ellipse's semi-axes; `verticalAccuracy` is its altitude standard
///   deviation. Otherwise `horizontalAccuracy` is HDOP (GGA/GNS, else the last GSA) times the user
///   range error of the fix quality (`Options.userRangeError` for autonomous fixes, see
///   `userRangeError(for:)`), and `verticalAccuracy` is VDOP times it when the last GSA said 3D.
///   Without GST or DOP the horizontal accuracy is the conservative `defaultAccuracy(for:)`.
///   Speed and course accuracies are unknown (-1).
/// - **Dates.** RMC and ZDA date the time of fix they carry; every epoch is dated from the latest
///   date so learned, taking the day that puts it within 12 hours of that date's time of fix (so
///   midnight rolls over). RMC's two-digit year is 19yy for 80...99 and 20yy otherwise. Dates are
///   reported as decoded: the GPS week rollover of old receivers (a date 1024 weeks early) is not
///   "corrected". Before any date is known, epochs are held (up to `Options.maximumHeldEpochs`)
///   and released, dated, when the first date arrives; with `Options.defaultDate` they are dated
///   from it at once. Fixes that can never be dated come out as `.undatedFix` (time of day only);
///   undated `.noFix` epochs are dropped.
/// - **Streams.** `decode(bytes:)` takes any chunking and keeps a partial line between calls;
///   lines end at LF (CR, spaces and NULs at either end are ignored). Lines longer than
///   `maximumLineLength` are dropped and counted. Bytes before a `$` on a line (binary noise) are
///   skipped; when a line feed is lost, both sentences of the line are read, and a sentence cut
///   short by the next one counts as missing its checksum.
package struct NMEADecoder: Sendable {
  /// Settings for a decoder.
  package struct Options: Sendable, Equatable {
    /// The date to use before (or without) any RMC or ZDA date. Nil: hold epochs until one comes.
    package var defaultDate: NMEADate?
    /// User range error (1 sigma, metres) of an autonomous fix: HDOP times this is the horizontal
    /// accuracy when the epoch has no GST. Default 4 m, a typical single-frequency figure.
    package var userRangeError: Double
    /// Use sentences that have no `*hh` checksum at all (default false: they are skipped, as gpsd
    /// does).
    package var acceptMissingChecksum: Bool
    /// Return `.satellites` for each complete GSV group (default true).
    package var reportSatellites: Bool
    /// How many epochs to hold while waiting for a first date before giving them out undated.
    package var maximumHeldEpochs: Int
    /// The `source` written into every fix.
    package var source: String
    /// A live stream: report an epoch as soon as its last sentence has arrived, instead of when
    /// the next epoch's first sentence arrives (a whole fix interval later). The last sentence is
    /// learned from the stream, as gpsd does: the sentence type that came just before each
    /// change of time. Sentences of an epoch already reported that come after it are ignored.
    /// Default false (logs and replays close epochs on the change of time).
    package var reportsAtCycleEnd: Bool

    /// Creates options.
    /// - Parameters:
    ///   - defaultDate: the date to assume before an RMC or ZDA date is seen; nil holds epochs.
    ///   - userRangeError: 1-sigma user range error of an autonomous fix, metres.
    ///   - acceptMissingChecksum: use sentences without a checksum.
    ///   - reportSatellites: return `.satellites` for complete GSV groups.
    ///   - maximumHeldEpochs: epochs held while waiting for a date.
    ///   - source: the `source` of every fix.
    ///   - reportsAtCycleEnd: report each epoch at its last sentence (live streams).
    package init(
      defaultDate: NMEADate? = nil, userRangeError: Double = 4, acceptMissingChecksum: Bool = false,
      reportSatellites: Bool = true, maximumHeldEpochs: Int = 30, source: String = "",
      reportsAtCycleEnd: Bool = false
    ) {
      self.defaultDate = defaultDate
      self.userRangeError = userRangeError
      self.acceptMissingChecksum = acceptMissingChecksum
      self.reportSatellites = reportSatellites
      self.maximumHeldEpochs = maximumHeldEpochs
      self.source = source
      self.reportsAtCycleEnd = reportsAtCycleEnd
    }
  }

  /// Lines longer than this many bytes are dropped (NMEA allows 82; this leaves room for noise).
  package static let maximumLineLength = 4096

  /// The decoder's settings.
  package let options: Options
  /// What has been decoded and skipped so far.
  package internal(set) var statistics = NMEAStatistics()

  // Stream state.
  var partial: [UInt8] = []
  var partialOverlong = false
  var lineNumber = 0

  // Epoch state.
  var epoch = Epoch(timeOfDay: 0)
  var epochOpen = false
  /// The type of the sentence handled last, and the learned last type of a cycle
  /// (`Options.reportsAtCycleEnd`).
  var previousType: UInt32?
  var cycleEnder: UInt32?
  /// The time of day of an epoch reported at its cycle end, whose late sentences are ignored.
  var reportedTime: Int64?
  var anchorDay = 0
  var anchorTimeOfDay: Int64 = 0
  var hasAnchor = false
  var held: [Held] = []
  var pendingGST: GSTValues?

  // Receiver state that outlives an epoch (GSA may come before or after the epoch's GGA).
  var lastHDOP: Double?
  var lastVDOP: Double?
  var lastFixType = 0

  // GSV group being assembled.
  var skyTalker: (UInt8, UInt8) = (0, 0)
  var skyTotal = 0
  var skyNext = 0
  var skyInView = 0
  var skySatellites: [NMEASatellite] = []

  static let microsPerDay: Int64 = 86_400_000_000
  static let halfDay: Int64 = 43_200_000_000

  /// Creates a decoder.
  /// - Parameter options: its settings.
  package init(options: Options = .init()) {
    self.options = options
  }

  /// A copy of the decoder for a rehearsal (`NMEASession.rehearse`): given the last read's bytes
  /// again, it decodes them as new, with no partial line before them, and reports the epoch they
  /// end (this decoder ignores them as late sentences of an epoch it reported).
  package var rehearsal: NMEADecoder {
    var copy = self
    copy.reportedTime = nil
    copy.epochOpen = false
    copy.partial = []
    copy.partialOverlong = false
    return copy
  }

  /// Decodes one sentence (one line, with or without CR/LF).
  ///
  /// Do not mix with `decode(bytes:)` while that holds a partial line.
  /// - Parameter line: the bytes of the line.
  /// - Returns: what the line completed: usually nothing, the previous epoch's fix when the line
  ///   opens a new epoch, a heading, or a satellite view.
  package mutating func decode(line: UnsafeRawBufferPointer) -> [NMEAOutput] {
    var out: [NMEAOutput] = []
    guard let raw = line.baseAddress else {
      lineNumber &+= 1
      statistics.lines &+= 1
      statistics.otherLines &+= 1
      return out
    }
    if line.count > NMEADecoder.maximumLineLength {
      countOverlong()
    } else {
      processLine(raw.assumingMemoryBound(to: UInt8.self), line.count, &out)
    }
    return out
  }

  /// Decodes a chunk of a stream. Lines may be split anywhere between chunks.
  /// - Parameter bytes: the next bytes of the stream.
  /// - Returns: everything the chunk completed.
  package mutating func decode(bytes: UnsafeRawBufferPointer) -> [NMEAOutput] {
    var out: [NMEAOutput] = []
    guard let raw = bytes.baseAddress, bytes.count > 0 else { return out }
    // Room for what a chunk of a log usually completes (a fix and a satellite view per epoch of
    // a few hundred bytes), so that the array does not grow, copying itself, as it fills.
    if bytes.count >= 1024 { out.reserveCapacity(bytes.count / 256) }
    let base = raw.assumingMemoryBound(to: UInt8.self)
    let count = bytes.count
    var start = 0
    if !partial.isEmpty || partialOverlong {
      let index = NMEADecoder.lineFeed(base, from: 0, to: count)
      appendPartial(base, index)
      if index == count { return out }
      finishPartialLine(&out)
      start = index &+ 1
    }
    while start < count {
      let index = NMEADecoder.lineFeed(base, from: start, to: count)
      if index == count {
        appendPartial(base + start, count &- start)
        break
      }
      let length = index &- start
      if length > NMEADecoder.maximumLineLength {
        countOverlong()
      } else {
        processLine(base + start, length, &out)
      }
      start = index &+ 1
    }
    return out
  }

  /// The index of the first line feed in `from..<to`, or `to` when there is none (C `memchr`).
  @inline(__always)
  static func lineFeed(_ base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int {
    guard from < to, let found = memchr(base + from, 0x0A, to &- from) else { return to }
    return UnsafeRawPointer(found) - UnsafeRawPointer(base)
  }

  /// Ends the stream: decodes a last line without a line feed, closes the open epoch and gives
  /// out any held epochs (undated when no date ever came).
  /// - Returns: the remaining outputs.
  package mutating func finish() -> [NMEAOutput] {
    var out: [NMEAOutput] = []
    if !partial.isEmpty || partialOverlong { finishPartialLine(&out) }
    if epochOpen { closeEpoch(&out) }
    releaseHeldUndated(&out, keeping: 0)
    skyTotal = 0
    skySatellites.removeAll()
    return out
  }

  /// Decodes a whole log.
  /// - Parameters:
  ///   - bytes: the log's bytes.
  ///   - options: decoder settings.
  /// - Returns: every output in order, and the statistics.
  package static func decodeLog(_ bytes: [UInt8], options: Options = .init()) -> (
    outputs: [NMEAOutput], statistics: NMEAStatistics
  ) {
    var decoder = NMEADecoder(options: options)
    var outputs = bytes.withUnsafeBytes { decoder.decode(bytes: $0) }
    outputs.append(contentsOf: decoder.finish())
    return (outputs, decoder.statistics)
  }

  // MARK: Lines

  mutating func appendPartial(_ base: UnsafePointer<UInt8>, _ count: Int) {
    if partialOverlong { return }
    if partial.count &+ count > NMEADecoder.maximumLineLength {
      partialOverlong = true
      partial.removeAll(keepingCapacity: true)
      return
    }
    partial.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
  }

  mutating func finishPartialLine(_ out: inout [NMEAOutput]) {
    if partialOverlong {
      countOverlong()
    } else {
      var line = partial
      line.withUnsafeBufferPointer { buffer in
        if let base = buffer.baseAddress { processLine(base, buffer.count, &out) }
      }
      line.removeAll()
    }
    partial.removeAll(keepingCapacity: true)
    partialOverlong = false
  }

  mutating func countOverlong() {
    lineNumber &+= 1
    statistics.lines &+= 1
    statistics.overlongLines &+= 1
    statistics.malformed &+= 1
    statistics.noteBad(line: lineNumber, "line too long")
  }

  @inline(__always)
  static func isSentenceStart(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!")
  }

  mutating func processLine(_ base: UnsafePointer<UInt8>, _ count: Int, _ out: inout [NMEAOutput]) {
    lineNumber &+= 1
    statistics.lines &+= 1
    var end = count
    while end > 0 && base[end &- 1] <= 0x20 { end &-= 1 }
    var start = 0
    while start < end && !NMEADecoder.isSentenceStart(base[start]) { start &+= 1 }
    if start == end {
      statistics.otherLines &+= 1
      return
    }
    while start < end {
      // XOR of everything between the start character and `*` (NMEA 0183, 5.2.1).
      let (index, sum) = NMEADecoder.checksum(
        base, from: start &+ 1, to: end, readable: count)
      if index < end {
        let high = index &+ 1 < end ? NMEADecoder.hexValue(base[index &+ 1]) : 0xFF
        let low = index &+ 2 < end ? NMEADecoder.hexValue(base[index &+ 2]) : 0xFF
        if high < 16 && low < 16 && (high << 4 | low) == sum {
          handleSentence(base, start &+ 1, index, readable: count, &out)
        } else if let inner = NMEADecoder.lastSentenceStart(base, after: start, before: index) {
          // A sentence cut short and run into the next one: the first part has no checksum.
          statistics.missingChecksum &+= 1
          start = inner
          continue
        } else {
          statistics.checksumErrors &+= 1
          statistics.noteBad(line: lineNumber, "checksum mismatch")
        }
      } else if let inner = NMEADecoder.lastSentenceStart(base, after: start, before: index) {
        statistics.missingChecksum &+= 1
        start = inner
        continue
      } else if options.acceptMissingChecksum {
        handleSentence(base, start &+ 1, index, readable: count, &out)
      } else {
        statistics.missingChecksum &+= 1
      }
      var next = index &+ 1
      while next < end && !NMEADecoder.isSentenceStart(base[next]) { next &+= 1 }
      start = next
    }
  }

  /// XOR of the bytes from `from` up to the first `*` (or `to`), and where that `*` is.
  ///
  /// Eight bytes at a time (the "has a zero byte" test of H. S. Warren, "Hacker's Delight", 6-1,
  /// on the word XOR `**...*`, whose lowest flagged byte is the first `*`): the word holding the
  /// `*` or the end is XORed up to it under a mask. Bytes up to `readable` may be loaded (the
  /// line's end, past `to`); the last few bytes of a line go byte by byte.
  @inline(__always)
  static func checksum(
    _ base: UnsafePointer<UInt8>, from: Int, to end: Int, readable: Int
  ) -> (Int, UInt8) {
    var index = from
    var wide: UInt64 = 0
    var done = false
    while index &+ 8 <= readable {
      let word = NMEAFieldCursor.load8(base + index)
      let stars = word ^ 0x2A2A_2A2A_2A2A_2A2A
      let found = (stars &- 0x0101_0101_0101_0101) & ~stars & 0x8080_8080_8080_8080
      let take = min(found.trailingZeroBitCount &>> 3, end &- index)
      if take >= 8 {
        wide ^= word
        index &+= 8
        continue
      }
      // Two shifts, so that a `take` of 0 keeps nothing.
      wide ^= word & ((UInt64.max &>> 1) &>> UInt64(truncatingIfNeeded: 63 &- 8 &* take))
      index &+= take
      done = true
      break
    }
    wide ^= wide >> 32
    wide ^= wide >> 16
    wide ^= wide >> 8
    var sum = UInt8(truncatingIfNeeded: wide)
    if done { return (index, sum) }
    while index < end {
      let byte = base[index]
      if byte == UInt8(ascii: "*") { break }
      sum ^= byte
      index &+= 1
    }
    return (index, sum)
  }

  /// The last `$` or `!` strictly between `after` and `before`, if any.
  static func lastSentenceStart(_ base: UnsafePointer<UInt8>, after: Int, before: Int) -> Int? {
    var index = before &- 1
    while index > after {
      if isSentenceStart(base[index]) { return index }
      index &-= 1
    }
    return nil
  }

  @inline(__always)
  static func hexValue(_ byte: UInt8) -> UInt8 {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte &- UInt8(ascii: "0")
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte &- UInt8(ascii: "A") &+ 10
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte &- UInt8(ascii: "a") &+ 10
    default: return 0xFF
    }
  }

  /// Sentence types packed as three bytes, for one switch.
  @inline(__always)
  static func code(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt32 {
    UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)
  }

  /// - Parameter readable: how many bytes from `base` may be read (the whole line), which lets
  ///   the field cursor load eight bytes at a time past the end of a field.
  mutating func handleSentence(
    _ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, readable: Int,
    _ out: inout [NMEAOutput]
  ) {
    var addressEnd = start
    while addressEnd < end && base[addressEnd] != UInt8(ascii: ",") { addressEnd &+= 1 }
    let addressLength = addressEnd &- start
    if base[start &- 1] == UInt8(ascii: "$") && addressLength > 0
      && base[start] == UInt8(ascii: "P")
    {
      statistics.proprietary &+= 1
      return
    }
    guard base[start &- 1] == UInt8(ascii: "$") && addressLength == 5 else {
      statistics.unknown &+= 1
      return
    }
    let talker = (base[start], base[start &+ 1])
    let type = NMEADecoder.code(base[start &+ 2], base[start &+ 3], base[start &+ 4])
    var fields = NMEAFieldCursor(
      base: base, start: min(addressEnd &+ 1, end), end: end, readable: readable,
      hasFields: addressEnd < end)
    let kind: NMEASentenceKind
    let ok: Bool
    switch type {
    case NMEADecoder.code(71, 71, 65):  // GGA
      kind = .gga
      ok = decodeGGA(&fields, &out)
    case NMEADecoder.code(82, 77, 67):  // RMC
      kind = .rmc
      ok = decodeRMC(&fields, &out)
    case NMEADecoder.code(71, 78, 83):  // GNS
      kind = .gns
      ok = decodeGNS(&fields, &out)
    case NMEADecoder.code(71, 76, 76):  // GLL
      kind = .gll
      ok = decodeGLL(&fields, &out)
    case NMEADecoder.code(71, 83, 65):  // GSA
      kind = .gsa
      ok = decodeGSA(&fields)
    case NMEADecoder.code(71, 83, 86):  // GSV
      kind = .gsv
      ok = decodeGSV(&fields, talker: talker, &out)
    case NMEADecoder.code(86, 84, 71):  // VTG
      kind = .vtg
      ok = decodeVTG(&fields)
    case NMEADecoder.code(90, 68, 65):  // ZDA
      kind = .zda
      ok = decodeZDA(&fields, &out)
    case NMEADecoder.code(71, 83, 84):  // GST
      kind = .gst
      ok = decodeGST(&fields)
    case NMEADecoder.code(72, 68, 84):  // HDT
      kind = .hdt
      ok = decodeHeading(&fields, kind: .hdt, talker: talker, &out)
    case NMEADecoder.code(72, 68, 71):  // HDG
      kind = .hdg
      ok = decodeHeading(&fields, kind: .hdg, talker: talker, &out)
    case NMEADecoder.code(72, 68, 77):  // HDM
      kind = .hdm
      ok = decodeHeading(&fields, kind: .hdm, talker: talker, &out)
    case NMEADecoder.code(84, 72, 83):  // THS
      kind = .ths
      ok = decodeHeading(&fields, kind: .ths, talker: talker, &out)
    default:
      statistics.unknown &+= 1
      return
    }
    if options.reportsAtCycleEnd {
      if ok, epochOpen, type == cycleEnder {
        reportedTime = epoch.timeOfDay
        closeEpoch(&out)
      }
      previousType = type
    }
    if ok {
      statistics.sentences &+= 1
      statistics.perKind[kind.rawValue] &+= 1
    } else {
      statistics.malformed &+= 1
      statistics.noteBad(line: lineNumber, "malformed field")
    }
  }
}
