extension OwnTracksMessage {
  /// The longest message decoded, in bytes (1 MiB): a location is about 150 bytes, a list of a
  /// thousand waypoints about 100 KiB. Longer payloads are refused before they are parsed.
  package static let maximumLength = 1 << 20

  /// Decodes one message: the payload of one MQTT publish or one HTTP body.
  ///
  /// Our rules, where OwnTracks' documentation leaves room:
  /// - The JSON is parsed strictly (a member named twice, invalid UTF-8 or a lone surrogate is an
  ///   error): the payload comes from the network, and two readers must not see two messages.
  /// - Members that are not read are ignored (`batt`, `conn`, `inregions`, Queclink's many).
  /// - A `_type` this decoder does not read is ``other(type:)``, not an error.
  /// - A number may also be written as a string holding a number (`"rad": "50"`, as in the
  ///   booklet's own waypoint example). A member OwnTracks documents as an integer may have a
  ///   fraction: it is rounded to the nearest whole number (`tst`, `wtst`: down to the second).
  /// - `vel`, `cog` and `vac` below zero mean "unknown" (a phone's invalid speed, course or
  ///   altitude is -1): they are left out, not errors. A `cog` of 360 or more is wrapped into
  ///   0..<360. A negative `acc`, `rad` or time is an error.
  /// - A missing required member (`lat`, `lon`, `tst` of a location; `event`, `tst`, `wtst` of a
  ///   transition; `desc` and `tst` of a waypoint; `waypoints`; `tst` of a last will) is an error.
  ///
  /// Errors never quote a coordinate (CONTRIBUTING.md): they name the member and what is wrong.
  ///
  /// - Parameter payload: the bytes of the message (UTF-8 JSON).
  /// - Returns: the message.
  /// - Throws: `.malformed` when the payload is not JSON or not an object, or longer than
  ///   ``maximumLength``; `.missingField` and `.invalidValue` as above.
  package static func decode(_ payload: [UInt8]) throws(FormatError) -> OwnTracksMessage {
    guard payload.count <= maximumLength else {
      throw FormatError(
        .malformed, "message of \(payload.count) bytes, longer than \(maximumLength)")
    }
    let value: JSONValue
    do {
      value = try JSONParser.parse(payload, strict: true)
    } catch {
      throw FormatError(.malformed, "not JSON: \(error.reason) at byte \(error.offset)")
    }
    guard case .object(let members) = value else {
      throw FormatError(.malformed, "not a JSON object")
    }
    let reader = OwnTracksReader(members)
    guard let type = try reader.string("_type") else {
      throw FormatError(.missingField, "no _type member")
    }
    let message: OwnTracksMessage
    switch type {
    case "location": message = .location(try OwnTracksLocation(reader))
    case "transition": message = .transition(try OwnTracksTransition(reader))
    case "waypoint": message = .waypoint(try OwnTracksWaypoint(reader))
    case "waypoints": message = .waypoints(try OwnTracksWaypoints(reader))
    case "lwt": message = .lastWill(OwnTracksLastWill(timestamp: try reader.time("tst")))
    default: return .other(type: type)
    }
    try message.validate()
    return message
  }

  /// Decodes one message held in a string (see ``decode(_:)-([UInt8])``).
  package static func decode(_ payload: String) throws(FormatError) -> OwnTracksMessage {
    try decode(Array(payload.utf8))
  }
}

extension OwnTracksLocation {
  fileprivate init(_ reader: OwnTracksReader) throws(FormatError) {
    self.init(
      latitude: try reader.required("lat"),
      longitude: try reader.required("lon"),
      accuracy: try reader.whole("acc"),
      altitude: try reader.whole("alt"),
      verticalAccuracy: try reader.whole("vac", negativeIsUnknown: true),
      velocity: try reader.whole("vel", negativeIsUnknown: true),
      course: try reader.whole("cog", negativeIsUnknown: true).map { $0 % 360 },
      timestamp: try reader.time("tst"),
      trackerID: try reader.string("tid"),
      trigger: try reader.string("t").map(OwnTracksTrigger.init(rawValue:)))
  }
}

extension OwnTracksTransition {
  fileprivate init(_ reader: OwnTracksReader) throws(FormatError) {
    guard let eventName = try reader.string("event") else {
      throw FormatError(.missingField, "transition without event")
    }
    guard let event = Event(rawValue: eventName) else {
      throw FormatError(
        .invalidValue, "event must be enter or leave, not '\(eventName.prefix(20))'")
    }
    self.init(
      event: event,
      name: try reader.string("desc"),
      regionID: try reader.string("rid"),
      waypointTimestamp: try reader.time("wtst"),
      timestamp: try reader.time("tst"),
      latitude: try reader.number("lat"),
      longitude: try reader.number("lon"),
      accuracy: try reader.whole("acc"),
      trackerID: try reader.string("tid"),
      trigger: try reader.string("t").map(OwnTracksTrigger.init(rawValue:)))
  }
}

extension OwnTracksWaypoint {
  fileprivate init(_ reader: OwnTracksReader) throws(FormatError) {
    guard let name = try reader.string("desc") else {
      throw FormatError(.missingField, "waypoint without desc")
    }
    self.init(
      name: name,
      latitude: try reader.number("lat"),
      longitude: try reader.number("lon"),
      radius: try reader.whole("rad"),
      timestamp: try reader.time("tst"),
      regionID: try reader.string("rid"))
  }
}

extension OwnTracksWaypoints {
  fileprivate init(_ reader: OwnTracksReader) throws(FormatError) {
    guard let value = reader.members["waypoints"] else {
      throw FormatError(.missingField, "waypoints without a waypoints array")
    }
    guard case .array(let elements) = value else {
      throw FormatError(.invalidValue, "waypoints must be an array")
    }
    var waypoints: [OwnTracksWaypoint] = []
    waypoints.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      guard case .object(let members) = element else {
        throw FormatError(.invalidValue, "waypoints[\(index)] is not an object")
      }
      let inner = OwnTracksReader(members)
      do throws(FormatError) {
        if let type = try inner.string("_type"), type != "waypoint" {
          throw FormatError(.invalidValue, "_type is not waypoint")
        }
        waypoints.append(try OwnTracksWaypoint(inner))
      } catch {
        throw FormatError(error.code, "waypoints[\(index)]: \(error.message)")
      }
    }
    self.init(waypoints: waypoints, creator: try reader.string("_creator"))
  }
}

/// Reads typed members out of one OwnTracks object.
struct OwnTracksReader {
  let members: [String: JSONValue]

  init(_ members: [String: JSONValue]) { self.members = members }

  /// A string member, or nil when absent (or `null`).
  func string(_ name: String) throws(FormatError) -> String? {
    switch members[name] {
    case nil, .null?: return nil
    case .string(let text)?: return text
    case .bool?, .number?, .array?, .object?:
      throw FormatError(.invalidValue, "\(name) must be a string")
    }
  }

  /// A finite number member (or a string holding one), or nil when absent (or `null`).
  func number(_ name: String) throws(FormatError) -> Double? {
    let number: Double
    switch members[name] {
    case nil, .null?: return nil
    case .number(let value)?: number = value
    case .string(let text)?:
      guard let value = Double(text.trimmingSpaces) else {
        throw FormatError(.invalidValue, "\(name) must be a number")
      }
      number = value
    case .bool?, .array?, .object?:
      throw FormatError(.invalidValue, "\(name) must be a number")
    }
    guard number.isFinite else { throw FormatError(.invalidValue, "\(name) must be finite") }
    return number
  }

  /// A required number.
  func required(_ name: String) throws(FormatError) -> Double {
    guard let number = try number(name) else {
      throw FormatError(.missingField, "no \(name) member")
    }
    return number
  }

  /// A whole number, rounded to the nearest; with `negativeIsUnknown`, a negative value is nil.
  func whole(_ name: String, negativeIsUnknown: Bool = false) throws(FormatError) -> Int? {
    guard let number = try number(name) else { return nil }
    if negativeIsUnknown, number < 0 { return nil }
    return try Self.integer(number.rounded(), name)
  }

  /// A required time in whole seconds, rounded down.
  func time(_ name: String) throws(FormatError) -> Int {
    try Self.integer(try required(name).rounded(.down), name)
  }

  /// An integral `Double` as an `Int`, refusing what a `Double` cannot hold exactly (2^53).
  static func integer(_ value: Double, _ name: String) throws(FormatError) -> Int {
    guard abs(value) <= 9_007_199_254_740_992 else {
      throw FormatError(.invalidValue, "\(name) is out of range")
    }
    return Int(value)
  }
}

extension String {
  /// Without leading and trailing spaces (no Foundation in this target's parsers).
  fileprivate var trimmingSpaces: Substring {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
    let end = lastIndex(where: { !isSpace($0) }) ?? start
    return self[start...end]
  }
}
