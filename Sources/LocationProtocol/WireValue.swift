import LocationFormats

/// A value that is one JSON member: a number, a flag, a string, a name, an array or an object.
package protocol WireValue {
  /// Reads the value of the member `key` of the object `coder` reads.
  /// - Throws: `malformed` when the JSON is not of this type.
  static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> Self
  /// Writes the value.
  func wireEncode(into writer: inout JSONWriter)
}

/// A value that is a JSON object, its members described once by ``wire(_:)``.
package protocol WireObject: WireValue {
  /// The value decoding starts from; members left at their defaults keep its values.
  static var wireBlank: Self { get }
  /// Reads or writes the members (the field table of this type).
  mutating func wire(_ coder: inout WireCoder) throws(DaemonProtocolError)
}

extension WireObject {
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> Self
  {
    guard case .object(let members) = json else { throw coder.malformed(key, "must be an object") }
    var nested = WireCoder(decoding: members, path: coder.name(key), type: coder.type)
    var value = wireBlank
    try value.wire(&nested)
    return value
  }

  package func wireEncode(into writer: inout JSONWriter) {
    writer.beginObject()
    var coder = WireCoder(encodingInto: JSONWriter(capacity: 0))
    swap(&coder.writer, &writer)
    var copy = self
    // An encoding coder never throws: it writes every member as it is.
    try? copy.wire(&coder)
    swap(&coder.writer, &writer)
    writer.endObject()
  }
}

/// A value written as one of a fixed set of names (an enumeration).
package protocol WireName: WireValue, CaseIterable {
  /// The name on the wire.
  var wireName: String { get }
}

extension WireName {
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> Self
  {
    if case .string(let name) = json, let value = allCases.first(where: { $0.wireName == name }) {
      return value
    }
    let names = allCases.map { "\"\($0.wireName)\"" }.joined(separator: ", ")
    throw coder.malformed(key, "must be one of \(names)")
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.string(wireName) }
}

extension WireName where Self: RawRepresentable, RawValue == String {
  package var wireName: String { rawValue }
}

// MARK: Scalars

extension Double: WireValue {
  /// A number, or one of the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (JSON has no
  /// non-finite numbers; our rule, for both sides).
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> Double
  {
    switch json {
    case .number(let number): return number
    case .string("NaN"): return .nan
    case .string("Infinity"): return .infinity
    case .string("-Infinity"): return -.infinity
    case .null, .bool, .string, .array, .object: throw coder.malformed(key, "must be a number")
    }
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.double(self) }
}

extension Int: WireValue {
  /// An integral number within ±2^53 (the integers a double holds exactly).
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> Int
  {
    guard case .number(let number) = json, let integer = integer(number) else {
      throw coder.malformed(key, "must be an integer")
    }
    return integer
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.int(self) }

  /// An integer's value when a double is integral and within ±2^53.
  package static func integer(_ number: Double) -> Int? {
    guard number.isFinite, number == number.rounded(), abs(number) <= 9_007_199_254_740_992 else {
      return nil
    }
    return Int(number)
  }
}

extension Int64: WireValue {
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> Int64
  {
    Int64(try Int.wireDecode(json, key: key, in: coder))
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.int64(self) }
}

extension Int32: WireValue {
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> Int32
  {
    guard let narrow = Int32(exactly: try Int.wireDecode(json, key: key, in: coder)) else {
      throw coder.malformed(key, "is out of range")
    }
    return narrow
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.int(Int(self)) }
}

extension Bool: WireValue {
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> Bool
  {
    guard case .bool(let flag) = json else { throw coder.malformed(key, "must be true or false") }
    return flag
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.bool(self) }
}

extension String: WireValue {
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> String
  {
    guard case .string(let text) = json else { throw coder.malformed(key, "must be a string") }
    return text
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.string(self) }
}

extension Array: WireValue where Element: WireValue {
  /// An array whose elements are named `key[i]` in errors.
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> [Element]
  {
    guard case .array(let elements) = json else { throw coder.malformed(key, "must be an array") }
    var values: [Element] = []
    values.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      values.append(try Element.wireDecode(element, key: "\(key)[\(index)]", in: coder))
    }
    return values
  }

  package func wireEncode(into writer: inout JSONWriter) {
    writer.beginArray()
    for element in self { element.wireEncode(into: &writer) }
    writer.endArray()
  }
}
