import Geodesy
import LocationFormats
import LocationModel

// The field tables of the model's values on the wire (`docs/protocol.md`). Optional values are
// written as `null` so that the peer rebuilds the same value; the decoder also accepts them absent.

extension Fix: WireObject {
  package static var wireBlank: Fix {
    Fix(latitude: 0, longitude: 0, horizontalAccuracy: -1, time: 0)
  }

  /// A `FIX`: every member of `Fix`.
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("latitude", &latitude)
    try c.field("longitude", &longitude)
    try c.optional("altitude", &altitude)
    try c.optional("ellipsoidalAltitude", &ellipsoidalAltitude)
    try c.field("horizontalAccuracy", &horizontalAccuracy)
    try c.field("verticalAccuracy", &verticalAccuracy, default: -1)
    try c.field("speed", &speed, default: -1)
    try c.field("speedAccuracy", &speedAccuracy, default: -1)
    try c.field("course", &course, default: -1)
    try c.field("courseAccuracy", &courseAccuracy, default: -1)
    try c.field("time", &time)
    try c.field("quality", &quality, default: .autonomous)
    try c.optional("satellitesUsed", &satellitesUsed)
    try c.optional("floor", &floor)
    try c.field("isSimulated", &isSimulated, default: false)
    try c.field("source", &source, default: "")
  }
}

extension FixQuality: WireName {
  /// The name written in a `FIX`'s `quality` member: the case name.
  package var wireName: String {
    switch self {
    case .none: "none"
    case .autonomous: "autonomous"
    case .differential: "differential"
    case .precise: "precise"
    case .rtkFixed: "rtkFixed"
    case .rtkFloat: "rtkFloat"
    case .estimated: "estimated"
    case .manual: "manual"
    case .simulated: "simulated"
    case .network: "network"
    }
  }
}

extension RegionSpec: WireObject {
  package static var wireBlank: RegionSpec {
    RegionSpec(identifier: "", latitude: 0, longitude: 0, radius: 0)
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("identifier", &identifier)
    try c.field("latitude", &latitude)
    try c.field("longitude", &longitude)
    try c.field("radius", &radius)
    try c.field("hysteresis", &hysteresis, default: RegionSpec.defaultHysteresis)
    try c.field("notifyOnEntry", &notifyOnEntry, default: true)
    try c.field("notifyOnExit", &notifyOnExit, default: true)
    // A beacon region (left out for a circle).
    try c.omittable("beacon", &beacon)
  }
}

extension Visit: WireObject {
  package static var wireBlank: Visit {
    Visit(latitude: 0, longitude: 0, horizontalAccuracy: -1, arrival: nil, departure: nil)
  }

  /// A `VISIT`: the place, its accuracy, and the arrival and departure (seconds since 1970;
  /// `null` for an unknown arrival and for a stay that goes on).
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("latitude", &latitude)
    try c.field("longitude", &longitude)
    try c.field("horizontalAccuracy", &horizontalAccuracy)
    try c.optional("arrival", &arrival)
    try c.optional("departure", &departure)
  }
}

extension RegionState: WireName {
  /// The name on the wire: `unknown`, `inside` or `outside`.
  package var wireName: String {
    switch self {
    case .unknown: "unknown"
    case .inside: "inside"
    case .outside: "outside"
    }
  }
}

extension AuthorizationSnapshot: WireObject {
  package static var wireBlank: AuthorizationSnapshot {
    AuthorizationSnapshot(status: .notDetermined)
  }

  /// `status` and `accuracy` are Apple's raw values (`CLAuthorizationStatus`,
  /// `CLAccuracyAuthorization`).
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("status", &status)
    try c.field("accuracy", &accuracy, default: .fullAccuracy)
    try c.field("servicesEnabled", &servicesEnabled, default: true)
    // Written only while a question is open, so that every other line stays as it was.
    var inProgress: Bool? = requestInProgress ? true : nil
    try c.omittable("requestInProgress", &inProgress)
    requestInProgress = inProgress ?? false
  }
}

extension AuthorizationStatus: WireValue {
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> AuthorizationStatus
  {
    guard
      let status = AuthorizationStatus(rawValue: try Int32.wireDecode(json, key: key, in: coder))
    else { throw coder.malformed(key, "must be 0...4") }
    return status
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.int(Int(rawValue)) }
}

extension AccuracyAuthorization: WireValue {
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> AccuracyAuthorization
  {
    guard
      let accuracy = AccuracyAuthorization(rawValue: try Int.wireDecode(json, key: key, in: coder))
    else { throw coder.malformed(key, "must be 0 or 1") }
    return accuracy
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.int(rawValue) }
}

extension HeadingOrientation: WireValue {
  /// A `CLDeviceOrientation` raw value; one Apple does not define is `unknown`.
  package static func wireDecode(_ json: JSONValue, key: String, in coder: WireCoder)
    throws(DaemonProtocolError) -> HeadingOrientation
  {
    HeadingOrientation(rawValue: try Int32.wireDecode(json, key: key, in: coder)) ?? .unknown
  }

  package func wireEncode(into writer: inout JSONWriter) { writer.int(Int(rawValue)) }
}

extension UpdateRequest: WireObject {
  /// Apple's defaults: best accuracy, no filter, pausing on, activity `other`.
  package static var wireBlank: UpdateRequest { UpdateRequest(pausesAutomatically: true) }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("desiredAccuracy", &desiredAccuracy, default: -1)
    try c.field("distanceFilter", &distanceFilter, default: -1)
    try c.field("pausesAutomatically", &pausesAutomatically, default: true)
    try c.field("activity", &activity, default: .other)
  }
}

extension ActivityType: WireName {}

extension HeadingInterference {
  /// Members of the `headingInterference` message itself.
  mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("measured", &measured)
    try c.optional("expected", &expected)
  }
}

extension RegionFailure {
  /// What kind of failure (`failure`), with `message`.
  private enum Name: String, WireName {
    case invalid, denied, notStored
  }

  /// Members of the `regionFailed` message itself.
  mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    var name: Name
    var message: String
    switch self {
    case .invalid(let text):
      name = .invalid
      message = text
    case .denied:
      name = .denied
      message = "the app may not monitor regions"
    case .notStored(let text):
      name = .notStored
      message = text
    }
    try c.field("failure", &name)
    try c.field("message", &message, default: "")
    switch name {
    case .invalid: self = .invalid(message)
    case .denied: self = .denied
    case .notStored: self = .notStored(message)
    }
  }
}

extension DeliveredHeading: WireObject {
  package static var wireBlank: DeliveredHeading {
    DeliveredHeading(magneticHeading: 0, trueHeading: -1, accuracy: -1, time: 0)
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("magneticHeading", &magneticHeading)
    try c.field("trueHeading", &trueHeading)
    try c.field("accuracy", &accuracy)
    try c.optional("x", &x)
    try c.optional("y", &y)
    try c.optional("z", &z)
    try c.field("time", &time)
    try c.field("source", &source, default: "")
    try c.field("isSimulated", &isSimulated, default: false)
    try c.optional("declination", &declination)
    try c.optional("limitation", &limitation)
  }
}

extension MagneticDeclination: WireObject {
  package static var wireBlank: MagneticDeclination {
    MagneticDeclination(degrees: 0, modelName: "")
  }

  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    try c.field("degrees", &degrees)
    try c.field("model", &modelName, default: "")
  }
}

extension HeadingLimitation: WireObject {
  /// The kinds of limitation on the wire (`kind`).
  private enum Name: String, WireName {
    case locationUpdatesOff, noLocation, magneticModelUnavailable
  }

  /// Why the World Magnetic Model had no answer (`code`).
  private enum Code: String, WireName {
    case outOfValidRange, invalidInput
  }

  package static var wireBlank: HeadingLimitation { .noLocation }

  /// `{"kind": ...}`; `magneticModelUnavailable` adds `code` and `message`.
  package mutating func wire(_ c: inout WireCoder) throws(DaemonProtocolError) {
    var name: Name
    var error = MagneticModelError(code: .outOfValidRange, message: "")
    switch self {
    case .locationUpdatesOff: name = .locationUpdatesOff
    case .noLocation: name = .noLocation
    case .magneticModelUnavailable(let failure):
      name = .magneticModelUnavailable
      error = failure
    }
    try c.field("kind", &name)
    switch name {
    case .locationUpdatesOff: self = .locationUpdatesOff
    case .noLocation: self = .noLocation
    case .magneticModelUnavailable:
      var code: Code
      switch error.code {
      case .outOfValidRange: code = .outOfValidRange
      case .invalidInput: code = .invalidInput
      }
      try c.field("code", &code, default: .outOfValidRange)
      try c.field("message", &error.message, default: "")
      switch code {
      case .outOfValidRange: error.code = .outOfValidRange
      case .invalidInput: error.code = .invalidInput
      }
      self = .magneticModelUnavailable(error)
    }
  }
}
