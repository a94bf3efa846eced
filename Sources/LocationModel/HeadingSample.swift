/// One heading report from a source (a compass, a gyrocompass, a GNSS heading receiver, a replayed
/// log): the engine's own value type, independent of `CLHeading`.
///
/// `HeadingSample` lives in `LocationModel` beside ``Fix`` so that producers (`LocationSources`) and
/// the consumer (`LocationEngine`) share it (`docs/architecture.md`, "Layers").
///
/// Conventions:
/// - Headings are degrees clockwise from north of the device's reference axis (the top of the
///   device held in portrait, or a ship's bow); values outside 0..<360 are reduced by the
///   consumer, non-finite values are rejected by it.
/// - A source gives a magnetic heading, a true heading, or both. A source that measures true
///   heading (a gyrocompass, NMEA HDT or THS) sets ``trueHeading``; a magnetic compass sets
///   ``magneticHeading`` and leaves the true heading to the consumer (which adds the World
///   Magnetic Model's declination).
/// - ``accuracy`` is the largest expected error of the heading in degrees, as Apple's
///   `headingAccuracy`; negative means the source is not calibrated or does not say.
/// - ``x``, ``y``, ``z`` are the raw geomagnetic field along the device's axes in microtesla, when
///   the source has a magnetometer; nil otherwise.
/// - `time` is wall-clock time in seconds since 1970-01-01T00:00:00Z (UTC).
package struct HeadingSample: Sendable, Equatable {
  /// Time of the measurement: seconds since 1970-01-01T00:00:00Z.
  package var time: Double
  /// Heading relative to magnetic north, degrees clockwise, if the source measures it.
  package var magneticHeading: Double?
  /// Heading relative to true north, degrees clockwise, if the source measures it.
  package var trueHeading: Double?
  /// Largest expected error of the heading, degrees; negative: uncalibrated or unknown.
  package var accuracy: Double
  /// Geomagnetic field along the device's x axis, microtesla, if the source has a magnetometer.
  package var x: Double?
  /// Geomagnetic field along the device's y axis, microtesla, if the source has a magnetometer.
  package var y: Double?
  /// Geomagnetic field along the device's z axis, microtesla, if the source has a magnetometer.
  package var z: Double?
  /// The URL (or another stable name) of the source that produced the sample.
  package var source: String
  /// True when the sample was produced by software (replay, simulation) rather than a sensor.
  package var isSimulated: Bool

  /// Creates a sample; every optional measure defaults to "unknown".
  ///
  /// - Parameters:
  ///   - time: Seconds since 1970-01-01T00:00:00Z.
  ///   - magneticHeading: Degrees clockwise from magnetic north, if measured.
  ///   - trueHeading: Degrees clockwise from true north, if measured.
  ///   - accuracy: Degrees; negative when uncalibrated or unknown.
  ///   - x: Field along the device's x axis, microtesla.
  ///   - y: Field along the device's y axis, microtesla.
  ///   - z: Field along the device's z axis, microtesla.
  ///   - source: The producing source's URL or name.
  ///   - isSimulated: Whether software produced the sample.
  package init(
    time: Double,
    magneticHeading: Double? = nil,
    trueHeading: Double? = nil,
    accuracy: Double = -1,
    x: Double? = nil,
    y: Double? = nil,
    z: Double? = nil,
    source: String = "",
    isSimulated: Bool = false
  ) {
    self.time = time
    self.magneticHeading = magneticHeading
    self.trueHeading = trueHeading
    self.accuracy = accuracy
    self.x = x
    self.y = y
    self.z = z
    self.source = source
    self.isSimulated = isSimulated
  }

  /// The magnitude of the measured field, sqrt(x² + y² + z²) in microtesla, when all three
  /// components are present and finite; nil otherwise.
  package var fieldMagnitude: Double? {
    guard let x, let y, let z, x.isFinite, y.isFinite, z.isFinite else { return nil }
    return (x * x + y * y + z * z).squareRoot()
  }
}
