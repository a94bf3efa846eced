/// A heading ready for a client: what the public layer turns into a `CLHeading`.
///
/// ``magneticHeading`` is always valid (0..<360), as Apple's is; ``trueHeading`` is 0..<360 or -1
/// when it could not be determined (see ``limitation``). Both are already rotated for the
/// client's ``HeadingOrientation``.
package struct DeliveredHeading: Sendable, Equatable {
  /// Degrees clockwise from magnetic north of the reference edge, 0..<360.
  package var magneticHeading: Double
  /// Degrees clockwise from true north of the reference edge, 0..<360; -1 when unknown.
  package var trueHeading: Double
  /// Largest expected error of ``magneticHeading`` in degrees; negative: the heading is not to be
  /// trusted (uncalibrated source, magnetic interference, or a magnetic heading that stands in for
  /// a true one; see ``HeadingPipeline``).
  package var accuracy: Double
  /// Raw field along the device's x axis, microtesla; nil when the source has no magnetometer
  /// (the public layer reports 0).
  package var x: Double?
  /// Raw field along the device's y axis, microtesla; nil when the source has no magnetometer.
  package var y: Double?
  /// Raw field along the device's z axis, microtesla; nil when the source has no magnetometer.
  package var z: Double?
  /// Time of the measurement: seconds since 1970-01-01T00:00:00Z.
  package var time: Double
  /// The source that produced the sample.
  package var source: String
  /// Whether software produced the sample (replay, simulation).
  package var isSimulated: Bool
  /// The World Magnetic Model declination used to derive one heading from the other; nil when
  /// none was used.
  package var declination: MagneticDeclination?
  /// Why ``trueHeading`` is -1, or why ``magneticHeading`` is a true heading standing in for a
  /// magnetic one; nil when both are what they claim to be.
  package var limitation: HeadingLimitation?

  /// Creates a delivered heading.
  ///
  /// - Parameters:
  ///   - magneticHeading: Degrees, 0..<360.
  ///   - trueHeading: Degrees, 0..<360, or -1.
  ///   - accuracy: Degrees; negative when not to be trusted.
  ///   - x: Field along x, microtesla.
  ///   - y: Field along y, microtesla.
  ///   - z: Field along z, microtesla.
  ///   - time: Seconds since 1970-01-01T00:00:00Z.
  ///   - source: The producing source.
  ///   - isSimulated: Whether software produced it.
  ///   - declination: The declination used, if any.
  ///   - limitation: What could not be determined, if anything.
  package init(
    magneticHeading: Double, trueHeading: Double, accuracy: Double, x: Double? = nil,
    y: Double? = nil, z: Double? = nil, time: Double, source: String = "",
    isSimulated: Bool = false, declination: MagneticDeclination? = nil,
    limitation: HeadingLimitation? = nil
  ) {
    self.magneticHeading = magneticHeading
    self.trueHeading = trueHeading
    self.accuracy = accuracy
    self.x = x
    self.y = y
    self.z = z
    self.time = time
    self.source = source
    self.isSimulated = isSimulated
    self.declination = declination
    self.limitation = limitation
  }
}
