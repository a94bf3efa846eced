import LocationModel
import LocationServices
import LocationStore

/// The regions of an app the owner opted in (`publish-regions`; issue 18): published with the
/// device's positions (`DevicePublisher+Regions.swift`).
extension AppHost {
  /// The publisher when this app's regions are published (`publish-regions`), else nil.
  var regionPublisher: DevicePublisher? {
    publisher().flatMap { $0.publishesRegions(of: app) ? $0 : nil }
  }

  /// Stores a region the hub has added; for an app whose regions are published, its `waypoint`
  /// (when it is new or its circle changed) is committed to the outbox in the same transaction.
  func saveRegion(_ spec: RegionSpec, state: RegionState, group: String, base: any HubPersistence)
    throws(StoreError)
  {
    guard let publisher = regionPublisher else {
      try base.saveRegion(spec, state: state, group: group, app: app)
      return
    }
    let app = app
    do {
      try store.transaction { () throws -> Void in
        let before = try store.region(app: app, group: group, identifier: spec.identifier)
        try base.saveRegion(spec, state: state, group: group, app: app)
        if let stored = try store.region(app: app, group: group, identifier: spec.identifier),
          let message = publisher.waypointMessage(stored: stored, before: before)
        {
          try publisher.outbox.submit([message])
        }
      }
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(code: .other, message: "\(error)", operation: "saveRegion")
    }
  }

  /// A region of the app was removed: the `waypoints` list is published again, for an app whose
  /// regions are published (soon after, once for a run of removals).
  func regionDeleted() {
    regionPublisher?.scheduleWaypointList()
  }
}
