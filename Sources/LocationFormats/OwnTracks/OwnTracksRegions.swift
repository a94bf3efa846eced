import LocationModel

extension OwnTracksWaypoint {
  /// The waypoint for a circular region: `desc` is the region's identifier, `rad` its radius to
  /// the nearest metre (at least 1), `tst` when it was created.
  ///
  /// - Parameters:
  ///   - region: the region; a beacon region has no centre and radius to publish (nil).
  ///   - created: when the region was created, seconds since 1970 (rounded down), which its
  ///     transitions repeat as `wtst`.
  ///   - regionID: `rid`, a stable id of the region, if the publisher keeps one.
  /// - Returns: nil for a beacon region, or one without a valid centre, radius or time.
  package init?(region: RegionSpec, created: Double, regionID: String? = nil) {
    guard region.beacon == nil, region.latitude.isFinite, abs(region.latitude) <= 90,
      region.longitude.isFinite, abs(region.longitude) <= 180, region.radius.isFinite,
      region.radius > 0, region.radius < 1e12, created.isFinite, created >= 0,
      created < 9_007_199_254_740_992
    else { return nil }
    self.init(
      name: region.identifier, latitude: region.latitude, longitude: region.longitude,
      radius: max(1, Int(region.radius.rounded())), timestamp: Int(created.rounded(.down)),
      regionID: regionID)
  }
}

extension OwnTracksTransition {
  /// The transition for a region event: `enter` for an entry, `leave` for an exit, with where
  /// the device was (`lat`, `lon`, `acc` from the fix, rounded as a location's) and when
  /// (`tst`: the event's date, else the fix's time). Determinations are not transitions (nil).
  ///
  /// - Parameters:
  ///   - event: the region event.
  ///   - fix: the fix that decided it.
  ///   - waypoint: the region's waypoint (`desc`, `rid`, and its `tst` as `wtst`).
  ///   - trackerID: `tid`, if any.
  /// - Returns: nil for a determination, or a fix without a valid coordinate or time.
  package init?(
    event: RegionEvent, fix: Fix, waypoint: OwnTracksWaypoint, trackerID: String? = nil
  ) {
    let kind: Event
    switch event.kind {
    case .entered: kind = .enter
    case .exited: kind = .leave
    case .determined: return nil
    }
    var located = fix
    if let date = event.date { located.time = date }
    guard let location = try? OwnTracksLocation(fix: located) else { return nil }
    self.init(
      event: kind, name: waypoint.name, regionID: waypoint.regionID,
      waypointTimestamp: waypoint.timestamp, timestamp: location.timestamp,
      latitude: location.latitude, longitude: location.longitude, accuracy: location.accuracy,
      trackerID: trackerID, trigger: .circularRegion)
  }
}
