import Geodesy
import LocationModel

extension LocationStore {
  /// The last known location of `app`, or the machine-wide one for `app` `""`; nil if none.
  /// - Parameter app: The app's identity, or `""` for the machine.
  /// - Returns: The fix as it was saved, or nil.
  /// - Throws: `StoreError` if the store cannot be read.
  package func lastKnownLocation(app: String) throws(StoreError) -> Fix? {
    try locked("lastKnownLocation") { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        SELECT latitude, longitude, altitude, ellipsoidal_altitude, horizontal_accuracy,
          vertical_accuracy, speed, speed_accuracy, course, course_accuracy, time, quality,
          satellites_used, floor, is_simulated, source
        FROM last_location WHERE app = ?
        """
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        guard try statement.step() else { return nil }
        return Fix(
          latitude: statement.double(at: 0),
          longitude: statement.double(at: 1),
          altitude: statement.optionalDouble(at: 2),
          ellipsoidalAltitude: statement.optionalDouble(at: 3),
          horizontalAccuracy: statement.double(at: 4),
          verticalAccuracy: statement.double(at: 5),
          speed: statement.double(at: 6),
          speedAccuracy: statement.double(at: 7),
          course: statement.double(at: 8),
          courseAccuracy: statement.double(at: 9),
          time: statement.double(at: 10),
          // A quality a later version added reads as an autonomous fix.
          quality: FixQuality(rawValue: Int(truncatingIfNeeded: statement.int64(at: 11)))
            ?? .autonomous,
          satellitesUsed: statement.optionalInt64(at: 12).map { Int(truncatingIfNeeded: $0) },
          floor: statement.optionalInt64(at: 13).map { Int(truncatingIfNeeded: $0) },
          isSimulated: statement.int64(at: 14) != 0,
          source: statement.text(at: 15))
      }
    }
  }

  /// Saves `fix` as the last known location of `app` (`""`: the machine), replacing the previous
  /// one; committed on return. Every field of `Fix` is kept, each in its own column.
  /// - Parameters:
  ///   - fix: The fix. Latitude must be finite and within -90...90, longitude within -180...180,
  ///     every other number finite.
  ///   - app: The app's identity, or `""` for the machine.
  /// - Throws: `StoreError` `.invalidValue` (nothing written) or a write failure.
  package func saveLastKnownLocation(_ fix: Fix, app: String) throws(StoreError) {
    do throws(StoreError) {
      try Validate.coordinate(latitude: fix.latitude, longitude: fix.longitude, of: "location")
      try Validate.finite(fix.horizontalAccuracy, "location horizontal accuracy")
      try Validate.finite(fix.verticalAccuracy, "location vertical accuracy")
      try Validate.finite(fix.speed, "location speed")
      try Validate.finite(fix.speedAccuracy, "location speed accuracy")
      try Validate.finite(fix.course, "location course")
      try Validate.finite(fix.courseAccuracy, "location course accuracy")
      try Validate.finite(fix.time, "location time")
      if let altitude = fix.altitude { try Validate.finite(altitude, "location altitude") }
      if let altitude = fix.ellipsoidalAltitude {
        try Validate.finite(altitude, "location ellipsoidal altitude")
      }
    } catch {
      var error = error
      error.operation = "saveLastKnownLocation"
      throw error
    }
    try writing("saveLastKnownLocation") { (connection) throws(StoreError) in
      try connection.withStatement(
        """
        INSERT OR REPLACE INTO last_location (app, latitude, longitude, altitude,
          ellipsoidal_altitude, horizontal_accuracy, vertical_accuracy, speed, speed_accuracy,
          course, course_accuracy, time, quality, satellites_used, floor, is_simulated, source)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
      ) { (statement) throws(StoreError) in
        try statement.bind(app, at: 1)
        try statement.bind(fix.latitude, at: 2)
        try statement.bind(fix.longitude, at: 3)
        try statement.bind(fix.altitude, at: 4)
        try statement.bind(fix.ellipsoidalAltitude, at: 5)
        try statement.bind(fix.horizontalAccuracy, at: 6)
        try statement.bind(fix.verticalAccuracy, at: 7)
        try statement.bind(fix.speed, at: 8)
        try statement.bind(fix.speedAccuracy, at: 9)
        try statement.bind(fix.course, at: 10)
        try statement.bind(fix.courseAccuracy, at: 11)
        try statement.bind(fix.time, at: 12)
        try statement.bind(Int64(fix.quality.rawValue), at: 13)
        try statement.bind(fix.satellitesUsed.map { Int64($0) }, at: 14)
        try statement.bind(fix.floor.map { Int64($0) }, at: 15)
        try statement.bind(Int64(fix.isSimulated ? 1 : 0), at: 16)
        try statement.bind(fix.source, at: 17)
        while try statement.step() {}
      }
    }
  }
}
