import Foundation
import LocationEngine
import LocationFormats
import LocationModel
import LocationStore

/// The regions and region events of the apps the machine's owner opted in (`publish-regions = yes`
/// in the app's section of `locationd.conf`; issue 18), on OwnTracks' topics (the booklet's
/// `docs/tech/json.md`, "Topics"):
///
/// - `TOPIC/event`: a `transition` (`enter`, `leave`) for each entry and exit the app is told of,
///   committed to the outbox in the same transaction as the event itself, so a crash keeps both
///   or neither. Its `lat`, `lon` and `acc` are the fix that decided it (the snapped location with
///   `approximate = yes`); `desc` is the region's identifier; `wtst` its creation time.
/// - `TOPIC/waypoint`: a `waypoint` when a region is added, or replaced with another centre or
///   radius (OwnTracks' rule: republished with its original creation time as `tst`), in the same
///   transaction as the region.
/// - `TOPIC/waypoints`: the list of every opted-in app's circles when one is removed, and when
///   publishing starts with a list other than the last one published (a digest in the store).
///
/// Beacon regions have no centre or radius to publish: their events and themselves are left out.
/// `rid` tells apart two regions with one identifier (two apps, or two `CLMonitor`s).
extension DevicePublisher {
  /// At most this many waypoints go in one `waypoints` list (logged when there are more).
  static let maximumListedWaypoints = 10_000

  /// The setting holding the digest of the last `waypoints` list submitted.
  private static let listDigestKey = "publishWaypointsDigest"

  /// Whether `app`'s regions and events are published.
  func publishesRegions(of app: String) -> Bool { regionApps.contains(app) }

  /// `rid`: FNV-1a, 64 bits (Fowler, Noll and Vo; IETF draft-eastlake-fnv) over the region's key,
  /// in hexadecimal: stable across restarts, and the same on every device for the same key.
  static func regionID(app: String, group: String, identifier: String) -> String {
    let hex = String(fnv1a("\(app)\u{0}\(group)\u{0}\(identifier)"), radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }

  /// FNV-1a, 64 bits, over the UTF-8 bytes of `text`.
  private static func fnv1a(_ text: String) -> UInt64 {
    text.utf8.reduce(UInt64(0xCBF2_9CE4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
  }

  /// The waypoint of a stored circle; nil for a beacon region (its `extra` names the beacon) or
  /// one without a creation time.
  static func waypoint(_ region: StoredRegion) -> OwnTracksWaypoint? {
    guard region.extra == nil, let created = region.created else { return nil }
    let spec = RegionSpec(
      identifier: region.identifier, latitude: region.latitude, longitude: region.longitude,
      radius: region.radius)
    return OwnTracksWaypoint(
      region: spec, created: created,
      regionID: regionID(app: region.app, group: region.group, identifier: region.identifier))
  }

  /// The `waypoint` message for a region just stored, when it is new or its circle changed.
  func waypointMessage(stored: StoredRegion, before: StoredRegion?) -> OutboxMessage? {
    if let before, before.latitude == stored.latitude, before.longitude == stored.longitude,
      before.radius == stored.radius, before.extra == stored.extra
    {
      return nil
    }
    guard let waypoint = Self.waypoint(stored),
      let payload = try? OwnTracksMessage.waypoint(waypoint).encoded()
    else { return nil }
    return OutboxMessage(
      topic: settings.topic + "/waypoint", payload: payload, kind: .event,
      time: Date().timeIntervalSince1970)
  }

  /// The `transition` messages for region events the app is told of: entries and exits of its
  /// circles, located by `fix` (nil: no fix yet, so nothing to say where).
  func transitionMessages(
    _ events: [RegionEvent], group: String, app: String, fix: Fix?, time: Double
  ) -> [OutboxMessage] {
    guard let fix else { return [] }
    let located = settings.approximate ? reducer.apply(fix) : fix
    var messages: [OutboxMessage] = []
    for event in events {
      guard event.shouldNotify,
        let stored = try? store.region(app: app, group: group, identifier: event.identifier),
        let waypoint = Self.waypoint(stored)
      else { continue }
      var dated = event
      dated.date = event.date ?? time
      guard
        let transition = OwnTracksTransition(
          event: dated, fix: located, waypoint: waypoint, trackerID: settings.effectiveTrackerID),
        let payload = try? OwnTracksMessage.transition(transition).encoded()
      else { continue }
      messages.append(
        OutboxMessage(
          topic: settings.topic + "/event", payload: payload, kind: .event, time: time))
    }
    return messages
  }

  /// Commits the `waypoints` list of every opted-in app's circles to the outbox when it differs
  /// from the last one committed (`always`: even when it does not). Failures are logged.
  func submitWaypointList(always: Bool = false) {
    guard !regionApps.isEmpty else { return }
    do {
      var waypoints: [OwnTracksWaypoint] = []
      for app in regionApps.sorted() {
        waypoints += try store.regions(app: app).compactMap(Self.waypoint)
      }
      if waypoints.count > Self.maximumListedWaypoints {
        DaemonLog.write(
          "publish: \(waypoints.count) regions to list; the first "
            + "\(Self.maximumListedWaypoints) are published")
        waypoints.removeLast(waypoints.count - Self.maximumListedWaypoints)
      }
      let payload = try OwnTracksMessage.waypoints(
        OwnTracksWaypoints(waypoints: waypoints, creator: "locationd")
      ).encoded()
      let digest = String(Self.fnv1a(payload), radix: 16)
      if !always, try store.setting(Self.listDigestKey) == digest { return }
      try store.transaction {
        try outbox.submit([
          OutboxMessage(
            topic: settings.topic + "/waypoints", payload: payload, kind: .event,
            time: Date().timeIntervalSince1970)
        ])
        try store.setSetting(Self.listDigestKey, digest)
      }
    } catch {
      DaemonLog.write("publish: the list of regions was not published: \(error)")
    }
  }
}
