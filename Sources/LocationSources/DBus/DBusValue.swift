import Foundation

/// The D-Bus values this package reads and writes (properties of GeoClue's objects and the bus
/// daemon's answers). Types it does not use are read as `.other` with their signature.
enum DBusValue: Sendable, Equatable {
  /// `b`
  case bool(Bool)
  /// `u`
  case uint32(UInt32)
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
  /// Any other type, skipped; its signature.
  case other(String)

  /// The value as a double (`d`, `u`, `t`), if it is a number.
  var doubleValue: Double? {
    switch self {
    case .double(let value): value
    case .uint32(let value): Double(value)
    case .uint64(let value): Double(value)
    case .bool, .string, .objectPath, .structure, .other: nil
    }
  }

  /// The signature of a value that can be appended.
  var signature: String? {
    switch self {
    case .bool: "b"
    case .uint32: "u"
    case .uint64: "t"
    case .double: "d"
    case .string: "s"
    case .objectPath: "o"
    case .structure, .other: nil
    }
  }

  /// Appends the value (basic types only) to `message`.
  func append(to message: DBusMessage) throws(DBusError) {
    switch self {
    case .bool(let value): try SDBus.appendBool(message, value)
    case .uint32(let value): try SDBus.appendUInt32(message, value)
    case .string(let value): try SDBus.appendString(message, "s", value)
    case .objectPath(let value): try SDBus.appendString(message, "o", value)
    case .uint64, .double, .structure, .other:
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
    case "u": return .uint32(try SDBus.readUInt32(message))
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
    default:
      try SDBus.skip(message, types: nil)
      return .other(String(type) + (contents ?? ""))
    }
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
