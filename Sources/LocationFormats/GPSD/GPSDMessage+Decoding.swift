/// Reads typed members out of one JSON object, noting members that are present but unusable.
struct GPSDFieldReader {
  let members: [String: GPSDJSONValue]
  var invalid: [String] = []

  init(_ members: [String: GPSDJSONValue]) { self.members = members }

  /// A finite number, optionally limited to a range; anything else present is invalid.
  mutating func number(_ name: String, in range: ClosedRange<Double>? = nil) -> Double? {
    guard let value = members[name] else { return nil }
    guard case .number(let number) = value, number.isFinite,
      range.map({ $0.contains(number) }) ?? true
    else {
      invalid.append(name)
      return nil
    }
    return number
  }

  /// A finite number that is not negative (uncertainties, speeds).
  mutating func nonNegative(_ name: String) -> Double? {
    number(name, in: 0...Double.greatestFiniteMagnitude)
  }

  /// An integral number that fits `range`.
  mutating func integer(_ name: String, in range: ClosedRange<Int>) -> Int? {
    guard let value = members[name] else { return nil }
    guard case .number(let number) = value, number.isFinite, number.rounded() == number,
      number >= Double(range.lowerBound), number <= Double(range.upperBound)
    else {
      invalid.append(name)
      return nil
    }
    return Int(number)
  }

  /// A string.
  mutating func string(_ name: String) -> String? {
    guard let value = members[name] else { return nil }
    guard case .string(let text) = value else {
      invalid.append(name)
      return nil
    }
    return text
  }

  /// An ISO 8601 time as seconds since 1970.
  mutating func time(_ name: String) -> Double? {
    guard let value = members[name] else { return nil }
    guard case .string(let text) = value, let time = GPSDTime.parse(text) else {
      invalid.append(name)
      return nil
    }
    return time
  }
}

extension GPSDMessage {
  /// Decodes a JSON object of gpsd's protocol, or nil when it has no string `class` member.
  static func decode(_ members: [String: GPSDJSONValue]) -> GPSDMessage? {
    guard case .string(let name)? = members["class"] else { return nil }
    var reader = GPSDFieldReader(members)
    switch name {
    case "VERSION":
      return .version(
        GPSDVersion(
          release: reader.string("release"), revision: reader.string("rev"),
          protocolMajor: reader.integer("proto_major", in: 0...Int(Int32.max)),
          protocolMinor: reader.integer("proto_minor", in: 0...Int(Int32.max))))
    case "TPV":
      return .tpv(GPSDTPV(&reader))
    case "SKY":
      return .sky(GPSDSky(&reader))
    case "ATT":
      return .attitude(GPSDAttitude(&reader))
    case "ERROR":
      return .error(reader.string("message") ?? "")
    default:
      return .other(name)
    }
  }
}

extension GPSDTPV {
  init(_ reader: inout GPSDFieldReader) {
    self.init()
    device = reader.string("device")
    mode = reader.integer("mode", in: 0...3)
    status = reader.integer("status", in: 0...Int(Int32.max))
    time = reader.time("time")
    latitude = reader.number("lat", in: -90...90)
    longitude = reader.number("lon", in: -180...180)
    altitudeHAE = reader.number("altHAE")
    altitudeMSL = reader.number("altMSL")
    altitude = reader.number("alt")
    geoidSeparation = reader.number("geoidSep")
    eph = reader.nonNegative("eph")
    epv = reader.nonNegative("epv")
    epx = reader.nonNegative("epx")
    epy = reader.nonNegative("epy")
    ept = reader.nonNegative("ept")
    speed = reader.nonNegative("speed")
    track = reader.number("track", in: 0...360)
    magneticTrack = reader.number("magtrack", in: 0...360)
    magneticVariation = reader.number("magvar", in: -180...180)
    climb = reader.number("climb")
    eps = reader.nonNegative("eps")
    epd = reader.nonNegative("epd")
    epc = reader.nonNegative("epc")
    invalidFields = reader.invalid
  }
}

extension GPSDSky {
  init(_ reader: inout GPSDFieldReader) {
    self.init()
    device = reader.string("device")
    time = reader.time("time")
    hdop = reader.nonNegative("hdop")
    vdop = reader.nonNegative("vdop")
    pdop = reader.nonNegative("pdop")
    satellitesVisible = reader.integer("nSat", in: 0...Int(Int32.max))
    satellitesUsed = reader.integer("uSat", in: 0...Int(Int32.max))
    if let value = reader.members["satellites"] {
      if case .array(let satellites) = value {
        if satellitesVisible == nil { satellitesVisible = satellites.count }
        if satellitesUsed == nil {
          satellitesUsed = satellites.count { satellite in
            if case .object(let members) = satellite, case .bool(true)? = members["used"] {
              return true
            }
            return false
          }
        }
      } else {
        reader.invalid.append("satellites")
      }
    }
    invalidFields = reader.invalid
  }
}

extension GPSDAttitude {
  init(_ reader: inout GPSDFieldReader) {
    self.init()
    device = reader.string("device")
    time = reader.time("time")
    heading = reader.number("heading", in: -360...360)
    magneticHeading = reader.number("mheading", in: -360...360)
    magneticStatus = reader.string("mag_st")
    pitch = reader.number("pitch")
    pitchStatus = reader.string("pitch_st")
    roll = reader.number("roll")
    rollStatus = reader.string("roll_st")
    yaw = reader.number("yaw")
    yawStatus = reader.string("yaw_st")
    rateOfTurn = reader.number("rot")
    dip = reader.number("dip")
    magneticLength = reader.number("mag_len")
    magneticX = reader.number("mag_x")
    magneticY = reader.number("mag_y")
    magneticZ = reader.number("mag_z")
    accelerationLength = reader.number("acc_len")
    accelerationX = reader.number("acc_x")
    accelerationY = reader.number("acc_y")
    accelerationZ = reader.number("acc_z")
    gyroX = reader.number("gyro_x")
    gyroY = reader.number("gyro_y")
    gyroZ = reader.number("gyro_z")
    temperature = reader.number("temp")
    depth = reader.number("depth")
    invalidFields = reader.invalid
  }
}
