/// A monitored region as the store keeps it: a circle owned by an app, in a group, with its last
/// known state.
///
/// The key is (`app`, `group`, `identifier`): saving a region with the key of a stored one replaces
/// it (Apple's rule: regions are replaced by identifier).
package struct StoredRegion: Sendable, Equatable {
  /// The owning app (the executable's identity as the daemon or the process knows it).
  package var app: String
  /// The group: `"manager"` for `CLLocationManager` regions, `"monitor:<name>"` for a `CLMonitor`.
  package var group: String
  /// The region's identifier, unique within (`app`, `group`).
  package var identifier: String
  /// Centre latitude on WGS-84, degrees, -90...90.
  package var latitude: Double
  /// Centre longitude on WGS-84, degrees, -180...180.
  package var longitude: Double
  /// Radius in metres, not negative.
  package var radius: Double
  /// The margin in metres a fix must clear to count as evidence (README, "Behaviour beyond Apple's documentation", Regions).
  package var hysteresis: Double
  /// Whether entering the region is reported.
  package var notifyOnEntry: Bool
  /// Whether leaving the region is reported.
  package var notifyOnExit: Bool
  /// Last state: 0 unknown, 1 inside, 2 outside (`CLRegionState`'s raw values).
  package var state: Int
  /// Wall-clock time of the last state change, seconds since 1970, if known.
  package var stateTime: Double?
  /// A JSON object for kinds of region and options a later version adds; stored as given.
  package var extra: String?
  /// When the region was first stored, seconds since 1970: kept when a region with its key
  /// replaces it. Given as nil, the stored one's time is kept, else the time of the write.
  package var created: Double?

  /// Creates a region record.
  /// - Parameters:
  ///   - app: The owning app.
  ///   - group: `"manager"` or `"monitor:<name>"`.
  ///   - identifier: The identifier, unique within app and group.
  ///   - latitude: Centre latitude, degrees.
  ///   - longitude: Centre longitude, degrees.
  ///   - radius: Radius in metres.
  ///   - hysteresis: Margin in metres (default 5, Apple's default `desiredAccuracy` for regions).
  ///   - notifyOnEntry: Report entries (default true).
  ///   - notifyOnExit: Report exits (default true).
  ///   - state: 0 unknown (default), 1 inside, 2 outside.
  ///   - stateTime: Time of the last state change, if any.
  ///   - extra: A JSON blob for future kinds, if any.
  ///   - created: When it was first stored (nil: kept, or now for a new region).
  package init(
    app: String,
    group: String,
    identifier: String,
    latitude: Double,
    longitude: Double,
    radius: Double,
    hysteresis: Double = 5,
    notifyOnEntry: Bool = true,
    notifyOnExit: Bool = true,
    state: Int = 0,
    stateTime: Double? = nil,
    extra: String? = nil,
    created: Double? = nil
  ) {
    self.app = app
    self.group = group
    self.identifier = identifier
    self.latitude = latitude
    self.longitude = longitude
    self.radius = radius
    self.hysteresis = hysteresis
    self.notifyOnEntry = notifyOnEntry
    self.notifyOnExit = notifyOnExit
    self.state = state
    self.stateTime = stateTime
    self.extra = extra
    self.created = created
  }
}
