import LocationModel

extension DaemonProtocol {
  /// `[FIX, ...]` byte for byte as `[Fix].wireEncode(into:)` writes it (members in `Fix`'s wire
  /// order, the writer's numbers and strings), but straight into one buffer: the member names are
  /// constant bytes, and nothing goes through the generic coder. `locationd` encodes every fix
  /// it sends between reading the receiver and its `send` (`locbench latency`), where a shorter
  /// path runs faster on a cold cache; a test holds it to the generic encoding.
  /// - Parameter fixes: The fixes.
  /// - Returns: The array's bytes.
  static func encodeFixesDirectly(_ fixes: [Fix]) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(16 + 448 * fixes.count)
    bytes.append(UInt8(ascii: "["))
    for (index, fix) in fixes.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      append(#"{"latitude":"#, fix.latitude, to: &bytes)
      append(#","longitude":"#, fix.longitude, to: &bytes)
      append(#","altitude":"#, fix.altitude, to: &bytes)
      append(#","ellipsoidalAltitude":"#, fix.ellipsoidalAltitude, to: &bytes)
      append(#","horizontalAccuracy":"#, fix.horizontalAccuracy, to: &bytes)
      append(#","verticalAccuracy":"#, fix.verticalAccuracy, to: &bytes)
      append(#","speed":"#, fix.speed, to: &bytes)
      append(#","speedAccuracy":"#, fix.speedAccuracy, to: &bytes)
      append(#","course":"#, fix.course, to: &bytes)
      append(#","courseAccuracy":"#, fix.courseAccuracy, to: &bytes)
      append(#","time":"#, fix.time, to: &bytes)
      append(#","quality":"#, to: &bytes)
      JSONWriter.appendString(fix.quality.wireName, to: &bytes)
      append(#","satellitesUsed":"#, integer: fix.satellitesUsed, to: &bytes)
      append(#","floor":"#, integer: fix.floor, to: &bytes)
      append(#","isSimulated":"#, to: &bytes)
      append(fix.isSimulated ? "true" : "false", to: &bytes)
      append(#","source":"#, to: &bytes)
      JSONWriter.appendString(fix.source, to: &bytes)
      bytes.append(UInt8(ascii: "}"))
    }
    bytes.append(UInt8(ascii: "]"))
    return bytes
  }

  private static func append(_ text: StaticString, to bytes: inout [UInt8]) {
    bytes.append(
      contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
  }

  private static func append(_ key: StaticString, _ value: Double?, to bytes: inout [UInt8]) {
    append(key, to: &bytes)
    if let value { JSONWriter.appendDouble(value, to: &bytes) } else { append("null", to: &bytes) }
  }

  private static func append(_ key: StaticString, integer value: Int?, to bytes: inout [UInt8]) {
    append(key, to: &bytes)
    if let value {
      JSONWriter.appendInteger(Int64(value), to: &bytes)
    } else {
      append("null", to: &bytes)
    }
  }
}
