import Foundation
internal import LocationEngine
internal import LocationModel
import LocationServices

// Heading (README, "Behaviour beyond Apple's documentation", Heading; the engine's `HeadingPipeline` holds the rules: true north from
// the World Magnetic Model, the filter on the circle, the orientation table, interference).
//
// Calibration on Linux: when a magnetometer reads a field far from the Earth's (the World Magnetic
// Model's total intensity at the place), the delegate receives `CLError.headingFailure` and is
// asked `locationManagerShouldDisplayHeadingCalibration(_:)` once per episode. "Displaying" means:
// one line on standard error asking for the usual figure-eight away from metal, and, until
// `dismissHeadingCalibrationDisplay()` (or the next start of heading updates), every heading is
// delivered with `headingAccuracy` -1, which the app reads in `didUpdateHeading`.

/// A manager's heading settings and last heading.
struct HeadingState {
  var filter: CLLocationDegrees = 1
  var orientation: CLDeviceOrientation = .portrait
  var updating = false
  var calibrationDisplayed = false
  var last: UncheckedHeading?
}

/// A delivered heading kept for `CLLocationManager.heading`. `CLHeading` is immutable once made.
struct UncheckedHeading: @unchecked Sendable {
  let heading: CLHeading
}

extension ManagerCore {
  func startHeading() {
    guard let id else { return }
    let settings = headingState.withLock { state -> (Double, HeadingOrientation) in
      state.updating = true
      state.calibrationDisplayed = false
      return (state.filter, state.orientation.modelValue)
    }
    environment.hub.send(.startHeading(id, filter: settings.0, orientation: settings.1))
  }

  func stopHeading() {
    guard let id else { return }
    headingState.withLock { $0.updating = false }
    environment.hub.send(.stopHeading(id))
  }

  func updateHeadingSettings(_ change: (inout HeadingState) -> Void) {
    let (updating, filter, orientation) = headingState.withLock { state in
      change(&state)
      return (state.updating, state.filter, state.orientation.modelValue)
    }
    if updating, let id {
      environment.hub.send(.changeHeading(id, filter: filter, orientation: orientation))
    }
  }

  func deliverHeading(_ delivery: HubDelivery, target: DeliveryTarget) {
    switch delivery {
    case .heading(let delivered):
      target.run { [self] in
        guard let manager = managerReference else { return }
        let calibrating = headingState.withLock { $0.calibrationDisplayed }
        let heading = CLHeading(
          magneticHeading: delivered.magneticHeading, trueHeading: delivered.trueHeading,
          headingAccuracy: calibrating ? -1 : delivered.accuracy, x: delivered.x ?? 0,
          y: delivered.y ?? 0, z: delivered.z ?? 0,
          timestamp: Date(timeIntervalSince1970: delivered.time))
        let box = UncheckedHeading(heading: heading)
        headingState.withLock { $0.last = box }
        delegate?.locationManager(manager, didUpdateHeading: heading)
      }
    case .headingInterference(let interference):
      target.run { [self] in
        guard let manager = managerReference else { return }
        var description = String(
          format: "magnetic interference: the compass reads %.0f µT", interference.measured)
        if let expected = interference.expected {
          description += String(format: " where the Earth's field is %.0f µT", expected)
        }
        delegate?.locationManager(
          manager,
          didFailWithError: CLError(
            .headingFailure, userInfo: [NSLocalizedDescriptionKey: description]))
        if delegate?.locationManagerShouldDisplayHeadingCalibration(manager) == true {
          headingState.withLock { $0.calibrationDisplayed = true }
          FileHandle.standardError.write(
            Data(
              ("corelocation: heading calibration: \(description); move the device in a figure-eight, "
                + "away from metal and magnets\n").utf8))
        }
      }
    case .locations, .error, .authorization, .regionEvents, .regionStarted, .regionFailed,
      .regionState, .deferredFinished, .paused, .resumed, .visit, .beacons, .rangingFailed:
      break
    }
  }
}
