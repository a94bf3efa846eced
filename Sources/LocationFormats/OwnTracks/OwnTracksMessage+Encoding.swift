extension OwnTracksMessage {
  /// The message as one line of compact JSON (no line feed), as OwnTracks publishes it:
  /// `_type` first, then the other members in alphabetical order; a member whose value is
  /// unknown (nil) is left out.
  ///
  /// Coordinates are written in the shortest form that reads back as the same number (no
  /// rounding: a coarser position is the publisher's choice, made before encoding); the members
  /// OwnTracks documents as integers are integers already (``OwnTracksLocation``).
  ///
  /// - Throws: `.invalidValue` when a value has no place in the format (see ``validate()``);
  ///   `.invalidValue` for ``other(type:)``, which has nothing to encode.
  package func encoded() throws(FormatError) -> String {
    try validate()
    if case .other(let type) = self {
      throw FormatError(.invalidValue, "a message of _type '\(type)' cannot be encoded")
    }
    var writer = JSONObjectWriter()
    writer.add("_type", type)
    switch self {
    case .location(let location): location.addMembers(to: &writer)
    case .transition(let transition): transition.addMembers(to: &writer)
    case .waypoint(let waypoint): waypoint.addMembers(to: &writer)
    case .waypoints(let list):
      writer.add("_creator", list.creator)
      let waypoints = list.waypoints.map { waypoint in
        var element = JSONObjectWriter()
        element.add("_type", "waypoint")
        waypoint.addMembers(to: &element)
        return element.result
      }
      writer.add("waypoints", json: "[" + waypoints.joined(separator: ",") + "]")
    case .lastWill(let will): writer.add("tst", will.timestamp)
    case .other: break
    }
    return writer.result
  }

  /// Checks what the decoder checks too, so that what one writes the other reads: coordinates
  /// finite and in range (latitude -90...90, longitude -180...180); accuracies, radius, speed and
  /// times not negative; course 0..<360; a transition's `lat` and `lon` together or not at all.
  ///
  /// - Throws: `.invalidValue` naming the member (never its value: coordinates stay out of
  ///   errors).
  package func validate() throws(FormatError) {
    switch self {
    case .location(let location):
      try OwnTracksCheck.coordinate(location.latitude, location.longitude)
      try OwnTracksCheck.notNegative(location.accuracy, "acc")
      try OwnTracksCheck.notNegative(location.verticalAccuracy, "vac")
      try OwnTracksCheck.notNegative(location.velocity, "vel")
      try OwnTracksCheck.notNegative(location.timestamp, "tst")
      if let course = location.course, !(0..<360).contains(course) {
        throw FormatError(.invalidValue, "cog must be 0 to 359 degrees")
      }
    case .transition(let transition):
      try OwnTracksCheck.optionalCoordinate(transition.latitude, transition.longitude)
      try OwnTracksCheck.notNegative(transition.accuracy, "acc")
      try OwnTracksCheck.notNegative(transition.timestamp, "tst")
      try OwnTracksCheck.notNegative(transition.waypointTimestamp, "wtst")
    case .waypoint(let waypoint):
      try waypoint.validate()
    case .waypoints(let list):
      for waypoint in list.waypoints { try waypoint.validate() }
    case .lastWill(let will):
      try OwnTracksCheck.notNegative(will.timestamp, "tst")
    case .other:
      break
    }
  }
}

extension OwnTracksLocation {
  /// The members after `_type`, in alphabetical order.
  fileprivate func addMembers(to writer: inout JSONObjectWriter) {
    writer.add("acc", accuracy)
    writer.add("alt", altitude)
    writer.add("cog", course)
    writer.add("lat", latitude)
    writer.add("lon", longitude)
    writer.add("t", trigger?.rawValue)
    writer.add("tid", trackerID)
    writer.add("tst", timestamp)
    writer.add("vac", verticalAccuracy)
    writer.add("vel", velocity)
  }
}

extension OwnTracksTransition {
  /// The members after `_type`, in alphabetical order.
  fileprivate func addMembers(to writer: inout JSONObjectWriter) {
    writer.add("acc", accuracy)
    writer.add("desc", name)
    writer.add("event", event.rawValue)
    writer.add("lat", latitude)
    writer.add("lon", longitude)
    writer.add("rid", regionID)
    writer.add("t", trigger?.rawValue)
    writer.add("tid", trackerID)
    writer.add("tst", timestamp)
    writer.add("wtst", waypointTimestamp)
  }
}

extension OwnTracksWaypoint {
  /// The members after `_type`, in alphabetical order.
  fileprivate func addMembers(to writer: inout JSONObjectWriter) {
    writer.add("desc", name)
    writer.add("lat", latitude)
    writer.add("lon", longitude)
    writer.add("rad", radius)
    writer.add("rid", regionID)
    writer.add("tst", timestamp)
  }

  fileprivate func validate() throws(FormatError) {
    try OwnTracksCheck.optionalCoordinate(latitude, longitude)
    try OwnTracksCheck.notNegative(radius, "rad")
    try OwnTracksCheck.notNegative(timestamp, "tst")
  }
}

/// The checks shared by the encoder and the decoder.
enum OwnTracksCheck {
  static func coordinate(_ latitude: Double, _ longitude: Double) throws(FormatError) {
    guard latitude.isFinite, abs(latitude) <= 90 else {
      throw FormatError(.invalidValue, "lat must be a latitude, -90 to 90 degrees")
    }
    guard longitude.isFinite, abs(longitude) <= 180 else {
      throw FormatError(.invalidValue, "lon must be a longitude, -180 to 180 degrees")
    }
  }

  static func optionalCoordinate(_ latitude: Double?, _ longitude: Double?) throws(FormatError) {
    switch (latitude, longitude) {
    case (nil, nil): return
    case (let latitude?, let longitude?): try coordinate(latitude, longitude)
    case (nil, _?): throw FormatError(.missingField, "lon without lat")
    case (_?, nil): throw FormatError(.missingField, "lat without lon")
    }
  }

  static func notNegative(_ value: Int?, _ name: String) throws(FormatError) {
    if let value, value < 0 { throw FormatError(.invalidValue, "\(name) must not be negative") }
  }
}
