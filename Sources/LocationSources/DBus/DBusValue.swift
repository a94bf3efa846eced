import Foundation

/// The D-Bus values this package reads and writes (properties of GeoClue's, BlueZ's and
/// NetworkManager's objects and the bus daemon's answers). Types it does not use are read as `.other` with their signature.
enum DBusValue: Sendable, Equatable {
  /// One key and value of a `.dictionary`.
  struct Entry: Sendable, Equatable {
    /// The key (a basic value).
    var key: DBusValue
    /// The value.
    var value: DBusValue
  }

  /// `b`
  case bool(Bool)
  /// `y`
  case byte(UInt8)
  /// `n`
  case int16(Int16)
  /// `q`
  case uint16(UInt16)
  /// `i`
  case int32(Int32)
  /// `u`
  case uint32(UInt32)
  /// `x`
  case int64(Int64)
  /// `t`
  case uint64(UInt64)
  /// `d`
  case double(Double)
  /// `s`
  case string(String)
  /// `o`
  case objectPath(String)
  /// `(...)`: a struct's fields in order.
  case structure([DBusValue])
  /// `ay`: a byte array.
  case bytes([UInt8])
  /// `a{..}`: a dictionary's entries in the order they came, variants unwrapped (`a{sv}`, BlueZ's
  /// `a{qv}`).
  case dictionary([Entry])
  /// Any other type, skipped; its signature.
  case other(String)

  /// The value as a double (`d`, `u`, `t`, `i`, `x`, `n`, `q`, `y`), if it is a number.
  var doubleValue: Double? {
    switch self {
    case .double(let value): value
    case .uint64(let value): Double(value)
    default: integerValue.map(Double.init)
    }
  }

  /// The value as an integer (`u`, `t` up to `Int.max`, `i`, `x`, `n`, `q`, `y`), if it is an
  /// integer.
  var integerValue: Int? {
    switch self {
    case .byte(let value): Int(value)
    case .int16(let value): Int(value)
    case .uint16(let value): Int(value)
    case .int32(let value): Int(value)
    case .uint32(let value): Int(value)
    case .int64(let value): Int(value)
    case .uint64(let value): Int(exactly: value)
    case .bool, .double, .string, .objectPath, .structure, .bytes, .dictionary, .other: nil
    }
  }

  /// The value of the entry whose key is `key`, if this is a dictionary that has one.
  subscript(key: DBusValue) -> DBusValue? {
    guard case .dictionary(let entries) = self else { return nil }
    return entries.first { $0.key == key }?.value
  }

  /// The signature of a value that can be appended.
  var signature: String? {
    switch self {
    case .bool: "b"
    case .byte: "y"
    case .int16: "n"
    case .uint16: "q"
    case .int32: "i"
    case .uint32: "u"
    case .int64: "x"
    case .uint64: "t"
    case .double: "d"
    case .string: "s"
    case .objectPath: "o"
    case .bytes: "ay"
    case .structure, .dictionary, .other: nil
    }
  }

  /// Appends the value (basic types only) to `message`.
  func append(to message: DBusMessage) throws(DBusError) {
    switch self {
    case .bool(let value): try SDBus.appendBool(message, value)
    case .uint32(let value): try SDBus.appendUInt32(message, value)
    case .string(let value): try SDBus.appendString(message, "s", value)
    case .objectPath(let value): try SDBus.appendString(message, "o", value)
    case .byte, .int16, .uint16, .int32, .int64, .uint64, .double, .structure, .bytes, .dictionary,
      .other:
      throw DBusError(function: "sd_bus_message_append_basic", errno: ENOTSUP)
    }
  }

  /// Reads the next value of `message`, whatever its type.
  static func read(from message: DBusMessage) throws(DBusError) -> DBusValue {
    guard let (type, contents) = try SDBus.peekType(message) else {
      throw DBusError(function: "sd_bus_message_peek_type", errno: ENXIO)
    }
    switch type {
    case "b": return .bool(try SDBus.readBool(message))
    case "y": return .byte(try SDBus.readByte(message))
    case "n": return .int16(try SDBus.readInt16(message))
    case "q": return .uint16(try SDBus.readUInt16(message))
    case "i": return .int32(try SDBus.readInt32(message))
    case "u": return .uint32(try SDBus.readUInt32(message))
    case "x": return .int64(try SDBus.readInt64(message))
    case "t": return .uint64(try SDBus.readUInt64(message))
    case "d": return .double(try SDBus.readDouble(message))
    case "s": return .string(try SDBus.readString(message, "s"))
    case "o": return .objectPath(try SDBus.readString(message, "o"))
    case "v":
      guard try SDBus.enterContainer(message, "v", contents: contents) else {
        throw DBusError(function: "sd_bus_message_enter_container", errno: ENXIO)
      }
      let inner = try read(from: message)
      try SDBus.exitContainer(message)
      return inner
    case "r":
      guard try SDBus.enterContainer(message, "r", contents: contents) else {
        throw DBusError(function: "sd_bus_message_enter_container", errno: ENXIO)
      }
      var fields: [DBusValue] = []
      while try SDBus.peekType(message) != nil {
        fields.append(try read(from: message))
      }
      try SDBus.exitContainer(message)
      return .structure(fields)
    case "a" where contents == "y":
      return .bytes(try SDBus.readByteArray(message))
    case "a" where contents?.first == "{":
      return try readEntries(from: message, contents: contents ?? "")
    default:
      try SDBus.skip(message, types: nil)
      return .other(String(type) + (contents ?? ""))
    }
  }

  /// Reads a dictionary `a{..}` whose entry signature is `contents` (`{qv}`).
  private static func readEntries(from message: DBusMessage, contents: String) throws(DBusError)
    -> DBusValue
  {
    guard try SDBus.enterContainer(message, "a", contents: contents) else {
      throw DBusError(function: "sd_bus_message_enter_container", errno: ENXIO)
    }
    let entry = String(contents.dropFirst().dropLast())
    var entries: [Entry] = []
    while try SDBus.enterContainer(message, "e", contents: entry) {
      let key = try read(from: message)
      entries.append(Entry(key: key, value: try read(from: message)))
      try SDBus.exitContainer(message)
    }
    try SDBus.exitContainer(message)
    return .dictionary(entries)
  }

  /// Appends an `a{sv}` dictionary of basic values (method arguments such as BlueZ's
  /// `SetDiscoveryFilter`), in the order of its keys.
  static func appendDictionary(
    _ dictionary: [String: DBusValue], to message: DBusMessage
  ) throws(DBusError) {
    try SDBus.openContainer(message, "a", contents: "{sv}")
    for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
      guard let signature = value.signature else {
        throw DBusError(function: "sd_bus_message_open_container", errno: ENOTSUP)
      }
      try SDBus.openContainer(message, "e", contents: "sv")
      try SDBus.appendString(message, "s", key)
      try SDBus.openContainer(message, "v", contents: signature)
      try value.append(to: message)
      try SDBus.closeContainer(message)
      try SDBus.closeContainer(message)
    }
    try SDBus.closeContainer(message)
  }

  /// Reads an `a{sv}` dictionary (the answer of `org.freedesktop.DBus.Properties.GetAll`).
  static func readDictionary(from message: DBusMessage) throws(DBusError) -> [String: DBusValue] {
    guard try SDBus.enterContainer(message, "a", contents: "{sv}") else {
      throw DBusError(function: "sd_bus_message_enter_container", errno: ENXIO)
    }
    var result: [String: DBusValue] = [:]
    while try SDBus.enterContainer(message, "e", contents: "sv") {
      let key = try SDBus.readString(message, "s")
      result[key] = try read(from: message)
      try SDBus.exitContainer(message)
    }
    try SDBus.exitContainer(message)
    return result
  }
}
