/// One message of OwnTracks' JSON format (the OwnTracks booklet, `docs/tech/json.md`): what the
/// OwnTracks apps publish over MQTT or HTTP and what Home Assistant, the OwnTracks Recorder and
/// Traccar read.
///
/// The values hold what is on the wire, in OwnTracks' units: degrees, whole metres, whole
/// kilometres per hour, whole degrees, whole seconds since 1970-01-01T00:00:00Z. Conversions from
/// and to our `Fix` are in `OwnTracksLocation+Fix.swift`, the codec in
/// `OwnTracksMessage+Encoding.swift` and `OwnTracksMessage+Decoding.swift`.
package enum OwnTracksMessage: Sendable, Equatable {
  /// `_type: location`: where the device is.
  case location(OwnTracksLocation)
  /// `_type: transition`: the device entered or left a region (a waypoint).
  case transition(OwnTracksTransition)
  /// `_type: waypoint`: one region the device monitors.
  case waypoint(OwnTracksWaypoint)
  /// `_type: waypoints`: the list of the regions the device monitors.
  case waypoints(OwnTracksWaypoints)
  /// `_type: lwt`: the last will the broker publishes when it loses the device.
  case lastWill(OwnTracksLastWill)
  /// Any other `_type` (`card`, `cmd`, `status`, `encrypted`, a type of the future): not decoded
  /// here, reported with its name so that a receiver can count it and go on.
  case other(type: String)

  /// The message's `_type`.
  package var type: String {
    switch self {
    case .location: return "location"
    case .transition: return "transition"
    case .waypoint: return "waypoint"
    case .waypoints: return "waypoints"
    case .lastWill: return "lwt"
    case .other(let type): return type
    }
  }
}

/// `_type: location`.
///
/// OwnTracks documents `acc`, `alt`, `vac`, `vel`, `cog` and `tst` as integers: the values are
/// whole numbers here too (see ``init(fix:trackerID:trigger:)`` for how a fix is rounded).
package struct OwnTracksLocation: Sendable, Equatable {
  /// `lat`: latitude in degrees (WGS-84), required.
  package var latitude: Double
  /// `lon`: longitude in degrees (WGS-84), required.
  package var longitude: Double
  /// `acc`: the accuracy of the position, metres (the radius of 68 % confidence for our fixes,
  /// as the phones' own location APIs report it).
  package var accuracy: Int?
  /// `alt`: altitude above sea level, metres.
  package var altitude: Int?
  /// `vac`: the accuracy of `alt`, metres.
  package var verticalAccuracy: Int?
  /// `vel`: ground speed, kilometres per hour.
  package var velocity: Int?
  /// `cog`: course over ground, degrees clockwise from true north.
  package var course: Int?
  /// `tst`: the time of the fix, seconds since 1970-01-01T00:00:00Z, required.
  package var timestamp: Int
  /// `tid`: the tracker id (two characters by convention: the initials shown on a map).
  package var trackerID: String?
  /// `t`: what triggered the report (``OwnTracksTrigger``); absent for an automatic update.
  package var trigger: OwnTracksTrigger?

  /// Creates a location message.
  package init(
    latitude: Double,
    longitude: Double,
    accuracy: Int? = nil,
    altitude: Int? = nil,
    verticalAccuracy: Int? = nil,
    velocity: Int? = nil,
    course: Int? = nil,
    timestamp: Int,
    trackerID: String? = nil,
    trigger: OwnTracksTrigger? = nil
  ) {
    self.latitude = latitude
    self.longitude = longitude
    self.accuracy = accuracy
    self.altitude = altitude
    self.verticalAccuracy = verticalAccuracy
    self.velocity = velocity
    self.course = course
    self.timestamp = timestamp
    self.trackerID = trackerID
    self.trigger = trigger
  }
}

/// The `t` member: what triggered a `location` or `transition` message. OwnTracks documents
/// single letters; other publishers (qtripp's Queclink trackers) use more, so any string is kept.
package struct OwnTracksTrigger: RawRepresentable, Sendable, Equatable, Hashable {
  /// The letter on the wire.
  package var rawValue: String
  /// Wraps a letter.
  package init(rawValue: String) { self.rawValue = rawValue }

  /// `p`: a ping, issued by a background timer.
  package static let ping = OwnTracksTrigger(rawValue: "p")
  /// `c`: a circular region was entered or left.
  package static let circularRegion = OwnTracksTrigger(rawValue: "c")
  /// `b`: a beacon region was entered or left.
  package static let beaconRegion = OwnTracksTrigger(rawValue: "b")
  /// `r`: the answer to a `reportLocation` command.
  package static let response = OwnTracksTrigger(rawValue: "r")
  /// `u`: published by hand.
  package static let user = OwnTracksTrigger(rawValue: "u")
  /// `t`: a timer in move mode.
  package static let timer = OwnTracksTrigger(rawValue: "t")
  /// `l`: a transition found by a location update (Android's transitions).
  package static let locationUpdate = OwnTracksTrigger(rawValue: "l")
}

/// `_type: transition`: an enter or leave event of a region.
package struct OwnTracksTransition: Sendable, Equatable {
  /// `event`.
  package enum Event: String, Sendable, Equatable, CaseIterable {
    /// `enter`: the device entered the region.
    case enter
    /// `leave`: the device left the region.
    case leave
  }

  /// `event`, required.
  package var event: Event
  /// `desc`: the region's name.
  package var name: String?
  /// `rid`: the region's id.
  package var regionID: String?
  /// `wtst`: when the region was created, seconds since 1970 (its `waypoint`'s `tst`), required.
  package var waypointTimestamp: Int
  /// `tst`: when the event happened, seconds since 1970, required.
  package var timestamp: Int
  /// `lat`: where the event happened, degrees.
  package var latitude: Double?
  /// `lon`: where the event happened, degrees.
  package var longitude: Double?
  /// `acc`: the accuracy of `lat` and `lon`, metres (documented as required; absent in some of
  /// OwnTracks' own examples, so optional here).
  package var accuracy: Int?
  /// `tid`: the tracker id.
  package var trackerID: String?
  /// `t`: what found the event (``OwnTracksTrigger/circularRegion``, ``OwnTracksTrigger/beaconRegion``,
  /// ``OwnTracksTrigger/locationUpdate``).
  package var trigger: OwnTracksTrigger?

  /// Creates a transition message.
  package init(
    event: Event,
    name: String? = nil,
    regionID: String? = nil,
    waypointTimestamp: Int,
    timestamp: Int,
    latitude: Double? = nil,
    longitude: Double? = nil,
    accuracy: Int? = nil,
    trackerID: String? = nil,
    trigger: OwnTracksTrigger? = nil
  ) {
    self.event = event
    self.name = name
    self.regionID = regionID
    self.waypointTimestamp = waypointTimestamp
    self.timestamp = timestamp
    self.latitude = latitude
    self.longitude = longitude
    self.accuracy = accuracy
    self.trackerID = trackerID
    self.trigger = trigger
  }
}

/// `_type: waypoint`: a circular region.
package struct OwnTracksWaypoint: Sendable, Equatable {
  /// `desc`: the region's name, required.
  package var name: String
  /// `lat`: the centre's latitude, degrees.
  package var latitude: Double?
  /// `lon`: the centre's longitude, degrees.
  package var longitude: Double?
  /// `rad`: the radius, metres.
  package var radius: Int?
  /// `tst`: when the region was created, seconds since 1970 (the `wtst` of its transitions),
  /// required.
  package var timestamp: Int
  /// `rid`: the region's id.
  package var regionID: String?

  /// Creates a waypoint message.
  package init(
    name: String,
    latitude: Double? = nil,
    longitude: Double? = nil,
    radius: Int? = nil,
    timestamp: Int,
    regionID: String? = nil
  ) {
    self.name = name
    self.latitude = latitude
    self.longitude = longitude
    self.radius = radius
    self.timestamp = timestamp
    self.regionID = regionID
  }
}

/// `_type: waypoints`: a list of regions.
package struct OwnTracksWaypoints: Sendable, Equatable {
  /// `waypoints`, required (may be empty).
  package var waypoints: [OwnTracksWaypoint]
  /// `_creator`: what made the list.
  package var creator: String?

  /// Creates a waypoints message.
  package init(waypoints: [OwnTracksWaypoint], creator: String? = nil) {
    self.waypoints = waypoints
    self.creator = creator
  }
}

/// `_type: lwt`: the last will and testament, published by the broker when the device's
/// connection is lost.
package struct OwnTracksLastWill: Sendable, Equatable {
  /// `tst`: when the device connected, seconds since 1970, required.
  package var timestamp: Int

  /// Creates a last will.
  package init(timestamp: Int) { self.timestamp = timestamp }
}
