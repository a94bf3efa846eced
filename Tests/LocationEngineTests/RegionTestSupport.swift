import Foundation
import Geodesy
import LocationModel

@testable import LocationEngine

/// The obvious implementation of region monitoring: every region, every fix, exact distance.
struct ReferenceMonitor {
  var order: [String] = []
  var regions: [String: (spec: RegionSpec, machine: RegionStateMachine)] = [:]
  var lastFix: (latitude: Double, longitude: Double, accuracy: Double)?
  var maximumRadius = RegionSpec.defaultMaximumRadius

  private func evidence(
    _ spec: RegionSpec, _ fix: (latitude: Double, longitude: Double, accuracy: Double)
  )
    -> RegionEvidence
  {
    let d = Geodesic.wgs84.distance(
      latitude1: fix.latitude, longitude1: fix.longitude, latitude2: spec.latitude,
      longitude2: spec.longitude)
    return .of(
      distance: d, radius: spec.radius, accuracy: fix.accuracy, hysteresis: spec.hysteresis)
  }

  private static func events(_ spec: RegionSpec, _ action: RegionStateMachine.Action)
    -> [RegionEvent]
  {
    func make(_ kind: RegionEvent.Kind) -> RegionEvent {
      RegionEvent(
        identifier: spec.identifier, kind: kind, notifyOnEntry: spec.notifyOnEntry,
        notifyOnExit: spec.notifyOnExit)
    }
    switch action {
    case .none: return []
    case .determine(let state): return [make(.determined(state))]
    case .enter: return [make(.entered), make(.determined(.inside))]
    case .exit: return [make(.exited), make(.determined(.outside))]
    }
  }

  mutating func add(_ spec: RegionSpec, initialState: RegionState) -> [RegionEvent]? {
    if spec.validate(maximumRadius: maximumRadius) != nil { return nil }
    if regions[spec.identifier] == nil { order.append(spec.identifier) }
    var machine = RegionStateMachine(state: initialState)
    var result: [RegionEvent] = []
    if let fix = lastFix { result = Self.events(spec, machine.observe(evidence(spec, fix))) }
    regions[spec.identifier] = (spec, machine)
    return result
  }

  mutating func remove(_ identifier: String) -> RegionSpec? {
    guard let entry = regions.removeValue(forKey: identifier) else { return nil }
    order.removeAll { $0 == identifier }
    return entry.spec
  }

  mutating func evaluate(latitude: Double, longitude: Double, accuracy: Double) -> [RegionEvent] {
    guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180,
      accuracy >= 0
    else { return [] }
    let fix = (latitude: latitude, longitude: longitude, accuracy: accuracy)
    lastFix = fix
    var result: [RegionEvent] = []
    for identifier in order {
      guard var entry = regions[identifier] else { continue }
      let action = entry.machine.observe(evidence(entry.spec, fix))
      regions[identifier] = entry
      result += Self.events(entry.spec, action)
    }
    return result
  }

  var specs: [RegionSpec] { order.compactMap { regions[$0]?.spec } }
  var states: [RegionState] { order.compactMap { regions[$0]?.machine.state } }
}

/// A point at a geodesic distance (metres, approximately) and bearing from another, on the sphere.
func destination(latitude: Double, longitude: Double, distance: Double, bearing: Double)
  -> (latitude: Double, longitude: Double)
{
  let r = 6_371_008.8
  let delta = distance / r
  let phi1 = latitude * .pi / 180
  let lambda1 = longitude * .pi / 180
  let theta = bearing * .pi / 180
  let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta))
  let lambda2 =
    lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
  var lon = lambda2 * 180 / .pi
  lon = (lon + 540).truncatingRemainder(dividingBy: 360) - 180
  return (max(-90, min(90, phi2 * 180 / .pi)), max(-180, min(180, lon)))
}
