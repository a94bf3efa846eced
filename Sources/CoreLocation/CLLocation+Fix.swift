import Foundation
internal import Geodesy
package import LocationModel

// Mapping between the engine's `Fix` and the public `CLLocation`. `Fix` follows CLLocation's
// conventions (68 % accuracies, negative for unknown), so the mapping is mostly a copy; the rules
// below cover what `Fix` says differently (optional altitudes, Unix time, an integer floor).

extension CLLocation {
  /// Creates the location that Core Location delivers for a fix.
  ///
  /// - `timestamp` is `fix.time` (seconds since 1970).
  /// - The altitudes: when the fix has neither, both are 0 and `verticalAccuracy` is -1 (invalid).
  ///   When it has only one, the other repeats it (the geoid separation is not modelled). When it
  ///   has an altitude but a zero or negative vertical accuracy, the accuracy stays as given, so
  ///   the altitudes read as invalid.
  /// - `floor` is set when the fix knows it.
  /// - `sourceInformation` is always set: simulated by software when `fix.isSimulated`, never
  ///   produced by an accessory.
  ///
  /// - Parameter fix: The fix from the engine.
  package convenience init(fix: Fix) {
    let altitude = fix.altitude ?? fix.ellipsoidalAltitude
    let ellipsoidal = fix.ellipsoidalAltitude ?? fix.altitude
    let values = Values(
      coordinate: CLLocationCoordinate2D(latitude: fix.latitude, longitude: fix.longitude),
      altitude: altitude ?? 0,
      ellipsoidalAltitude: ellipsoidal ?? 0,
      horizontalAccuracy: fix.horizontalAccuracy,
      verticalAccuracy: altitude == nil ? -1 : fix.verticalAccuracy,
      course: fix.course,
      courseAccuracy: fix.courseAccuracy,
      speed: fix.speed,
      speedAccuracy: fix.speedAccuracy,
      timestamp: Date(timeIntervalSince1970: fix.time))
    self.init(
      values: values,
      floor: fix.floor.map { CLFloor(level: $0) },
      sourceInformation: CLLocationSourceInformation(
        softwareSimulationState: fix.isSimulated, andExternalAccessoryState: false))
  }
}

extension Fix {
  /// Creates the fix that stands for a location given through the public API (a simulated
  /// environment, an injected location).
  ///
  /// - The altitudes are `nil` unless `verticalAccuracy` is positive.
  /// - `isSimulated` comes from `sourceInformation` (`false` without it).
  /// - `quality` is `.none` for an invalid coordinate (negative horizontal accuracy),
  ///   `.simulated` for a location simulated by software, and `.manual` otherwise: the location
  ///   was built by a program, not measured by a receiver.
  ///
  /// - Parameters:
  ///   - location: The location to convert.
  ///   - source: The name of the source to record in the fix.
  package init(location: CLLocation, source: String) {
    let altitudeIsValid = location.verticalAccuracy > 0
    let isSimulated = location.sourceInformation?.isSimulatedBySoftware ?? false
    let quality: FixQuality
    if location.horizontalAccuracy < 0 {
      quality = .none
    } else if isSimulated {
      quality = .simulated
    } else {
      quality = .manual
    }
    self.init(
      latitude: location.coordinate.latitude,
      longitude: location.coordinate.longitude,
      altitude: altitudeIsValid ? location.altitude : nil,
      ellipsoidalAltitude: altitudeIsValid ? location.ellipsoidalAltitude : nil,
      horizontalAccuracy: location.horizontalAccuracy,
      verticalAccuracy: location.verticalAccuracy,
      speed: location.speed,
      speedAccuracy: location.speedAccuracy,
      course: location.course,
      courseAccuracy: location.courseAccuracy,
      time: location.timestamp.timeIntervalSince1970,
      quality: quality,
      floor: location.floor?.level,
      isSimulated: isSimulated,
      source: source)
  }
}
