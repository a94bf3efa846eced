import Geodesy
import LocationModel

/// One client's heading updates: turns source samples into the headings the client sees
/// (README, "Behaviour beyond Apple's documentation", Heading). A value type; time and location come in with each sample.
///
/// For each sample, in this order:
///
/// 1. **Validity.** A sample with no finite heading is dropped (`.none(.noHeading)`). NMEA input
///    is mapped before this (see `HeadingSample.fromHDG(...)` and its siblings): THS with mode
///    `V` and HDG without a heading give no sample at all.
/// 2. **Declination.** When it is needed, the World Magnetic Model gives the declination and the
///    total intensity at the latest valid location (its ellipsoidal height, else its altitude,
///    else 0 m) on the **sample's** date, so a replayed 2018 recording gets WMM2015v2
///    (`MagneticModel` picks the model by date). The latest location is used however old it is
///    (the engine's last known location); one that is not valid (`Fix.hasValidCoordinate`)
///    counts as no location.
/// 3. **Interference.** See ``InterferenceMonitor``: the first sample of an episode gives
///    `.interference` instead of a heading; later samples of the episode are delivered with
///    accuracy -1.
/// 4. **The two headings.** Rules:
///
///    | the source gives | condition | magneticHeading | trueHeading | accuracy |
///    | --- | --- | --- | --- | --- |
///    | magnetic | location updates running, location known, model valid | magnetic | magnetic + declination | the source's |
///    | magnetic | location updates off | magnetic | -1 (`.locationUpdatesOff`) | the source's |
///    | magnetic | no location | magnetic | -1 (`.noLocation`) | the source's |
///    | magnetic | model has no answer | magnetic | -1 (`.magneticModelUnavailable`) | the source's |
///    | true | location known, model valid | true - declination | true | the source's |
///    | true | no location | true (stands in) | true | -1 (`.noLocation`) |
///    | true | model has no answer | true (stands in) | true | -1 (`.magneticModelUnavailable`) |
///    | both | always | magnetic | true | the source's |
///
///    The first four rows follow Apple's documentation of `CLHeading.trueHeading`: negative when
///    it cannot be determined, and valid only while location updates are also enabled for the
///    manager. The rest are ours: a true heading that a source measured (gyrocompass, GNSS
///    heading, NMEA HDT/THS) needs no location, so it is delivered even when location updates
///    are off; its magnetic heading is derived from the latest known location
///    whether or not updates are running. Without a declination, `magneticHeading` (which Apple
///    never leaves invalid) carries the true value and the accuracy is -1, so that a client which
///    checks `headingAccuracy < 0` does not take a true heading for a magnetic one, while
///    `trueHeading` stays usable. A model with no answer never gives a silent guess: the derived
///    heading is withheld as above and ``DeliveredHeading/limitation`` says why.
/// 5. **Orientation.** Both headings are rotated for ``orientation`` (see ``HeadingOrientation``)
///    and reduced to 0..<360; -1 stays -1.
/// 6. **Filter.** The heading is delivered when it is the first since ``restart()``, when
///    ``headingFilter`` is not positive (`kCLHeadingFilterNone` is -1), or when the magnetic
///    heading after rotation is at least ``headingFilter`` degrees from the last delivered one,
///    measured on the circle (359° to 1° is 2°). A heading whose true heading or accuracy turns
///    from valid to invalid or back is delivered whatever the filter says (ours: the change
///    matters to the client even when the direction does not).
package struct HeadingPipeline: Sendable {
  /// What one sample gives the client.
  package enum Action: Sendable, Equatable {
    /// Nothing to deliver.
    case none(Skip)
    /// Deliver this heading.
    case deliver(DeliveredHeading)
    /// An interference episode began: report `CLError.headingFailure` and offer the calibration
    /// display (once per episode).
    case interference(HeadingInterference)
  }

  /// Why a sample gave nothing.
  package enum Skip: Sendable, Equatable {
    /// Within ``HeadingPipeline/headingFilter`` of the last delivered heading.
    case filtered
    /// The sample had no finite heading.
    case noHeading
  }

  /// Minimum change in degrees between delivered headings (Apple's `headingFilter`, default 1);
  /// zero, negative (`kCLHeadingFilterNone` is -1) or NaN delivers every sample.
  package var headingFilter: Double = 1

  /// The orientation last set by the client (what `headingOrientation` reads back).
  package private(set) var orientation: HeadingOrientation = .portrait

  /// The rotation in force, degrees (0, 90, 180 or -90): the one of the last orientation that
  /// defines one (see ``HeadingOrientation``).
  package private(set) var rotation: Double = 0

  /// The last heading delivered, the reference of the filter.
  package private(set) var lastDelivered: DeliveredHeading?

  /// The interference watch.
  package private(set) var interference = InterferenceMonitor()

  /// Creates a pipeline with Apple's defaults: filter 1°, portrait.
  ///
  /// - Parameters:
  ///   - headingFilter: Degrees; see ``headingFilter``.
  ///   - orientation: See ``setOrientation(_:)``.
  package init(headingFilter: Double = 1, orientation: HeadingOrientation = .portrait) {
    self.headingFilter = headingFilter
    setOrientation(orientation)
  }

  /// Sets the reference orientation. `unknown`, `faceUp` and `faceDown` are remembered as set but
  /// keep the rotation in force (see ``HeadingOrientation``).
  ///
  /// - Parameter orientation: The client's `headingOrientation`.
  package mutating func setOrientation(_ orientation: HeadingOrientation) {
    self.orientation = orientation
    if let rotation = orientation.rotation { self.rotation = rotation }
  }

  /// Forgets the last delivered heading and any interference episode (heading updates were
  /// stopped and started again): the next heading is delivered whatever the filter says.
  package mutating func restart() {
    lastDelivered = nil
    interference.reset()
  }

  /// Runs one sample through the pipeline.
  ///
  /// - Parameters:
  ///   - sample: The source's sample.
  ///   - location: The latest location known to the engine, if any.
  ///   - locationUpdatesRunning: Whether the client (or the manager it belongs to) has location
  ///     updates running: Apple's condition for a derived true heading.
  /// - Returns: A heading to deliver, nothing, or the start of an interference episode.
  package mutating func receive(
    _ sample: HeadingSample, location: Fix?, locationUpdatesRunning: Bool
  ) -> Action {
    let magnetic = sample.magneticHeading.flatMap { $0.isFinite ? $0 : nil }
    let measuredTrue = sample.trueHeading.flatMap { $0.isFinite ? $0 : nil }
    guard magnetic != nil || measuredTrue != nil else { return .none(.noHeading) }

    var model = ModelLookup(location: location, time: sample.time)

    var accuracy = sample.accuracy.isFinite ? sample.accuracy : -1
    let magnitude = sample.fieldMagnitude
    if magnitude != nil {
      switch interference.observe(magnitude: magnitude, expected: model.expectedIntensity()) {
      case .began(let report):
        return .interference(report)
      case .none, .ended:
        break
      }
    }
    switch interference.state {
    case .clear: break
    case .disturbed: accuracy = -1
    }

    // The two headings before rotation; nil: unknown.
    let magneticOut: Double
    var trueOut: Double?
    var declinationUsed: MagneticDeclination?
    var limitation: HeadingLimitation?
    switch (magnetic, measuredTrue) {
    case (let magnetic?, let measuredTrue?):
      magneticOut = magnetic
      trueOut = measuredTrue
    case (let magnetic?, nil):
      magneticOut = magnetic
      if !locationUpdatesRunning {
        limitation = .locationUpdatesOff
      } else {
        switch model.declination() {
        case .found(let declination):
          trueOut = magnetic + declination.degrees
          declinationUsed = declination
        case .missing(let missing):
          limitation = missing
        }
      }
    case (nil, let measuredTrue?):
      trueOut = measuredTrue
      switch model.declination() {
      case .found(let declination):
        magneticOut = measuredTrue - declination.degrees
        declinationUsed = declination
      case .missing(let missing):
        magneticOut = measuredTrue
        accuracy = -1
        limitation = missing
      }
    case (nil, nil):
      return .none(.noHeading)
    }

    let heading = DeliveredHeading(
      magneticHeading: Self.reduce(magneticOut + rotation),
      trueHeading: trueOut.map { Self.reduce($0 + rotation) } ?? -1,
      accuracy: accuracy, x: sample.x, y: sample.y, z: sample.z, time: sample.time,
      source: sample.source, isSimulated: sample.isSimulated, declination: declinationUsed,
      limitation: limitation)

    guard passesFilter(heading) else { return .none(.filtered) }
    lastDelivered = heading
    return .deliver(heading)
  }

  /// The filter rule (step 6 of the type's documentation).
  private func passesFilter(_ heading: DeliveredHeading) -> Bool {
    guard let last = lastDelivered else { return true }
    if !(headingFilter > 0) { return true }
    if (last.trueHeading < 0) != (heading.trueHeading < 0) { return true }
    if (last.accuracy < 0) != (heading.accuracy < 0) { return true }
    return Self.angularDistance(last.magneticHeading, heading.magneticHeading) >= headingFilter
  }

  /// An angle reduced to 0..<360 degrees.
  ///
  /// - Parameter degrees: A finite angle.
  /// - Returns: The same direction in 0..<360.
  package static func reduce(_ degrees: Double) -> Double {
    var result = degrees.truncatingRemainder(dividingBy: 360)
    if result < 0 { result += 360 }
    // -1e-17 + 360 rounds to 360.
    return result >= 360 ? 0 : result
  }

  /// The distance between two directions on the circle, 0...180 degrees (359° and 1° are 2° apart).
  ///
  /// - Parameters:
  ///   - a: A direction, degrees.
  ///   - b: Another direction, degrees.
  /// - Returns: The smaller of the two angles between them.
  package static func angularDistance(_ a: Double, _ b: Double) -> Double {
    let difference = reduce(a - b)
    return min(difference, 360 - difference)
  }
}

/// The World Magnetic Model at one location and date, asked at most once per sample.
private struct ModelLookup {
  let location: Fix?
  let time: Double
  private var cached: Result<MagneticField, MagneticModelError>??

  init(location: Fix?, time: Double) {
    self.location = location.flatMap { $0.hasValidCoordinate ? $0 : nil }
    self.time = time
  }

  /// The field, or nil without a location, or the model's error.
  mutating func field() -> Result<MagneticField, MagneticModelError>? {
    if let cached { return cached }
    var result: Result<MagneticField, MagneticModelError>?
    if let location {
      result = Result { () throws(MagneticModelError) -> MagneticField in
        try MagneticModel.field(
          latitude: location.latitude, longitude: location.longitude,
          height: Self.height(of: location), unixTime: time)
      }
    }
    cached = .some(result)
    return result
  }

  /// The total intensity in microtesla, or nil when the model gives none here.
  mutating func expectedIntensity() -> Double? {
    switch field() {
    case .success(let field)?: return field.totalIntensity / 1_000
    case .failure?, nil: return nil
    }
  }

  /// The declination, or what kept the model from giving one.
  enum Declination {
    case found(MagneticDeclination)
    case missing(HeadingLimitation)
  }

  mutating func declination() -> Declination {
    switch field() {
    case nil:
      return .missing(.noLocation)
    case .failure(let error)?:
      return .missing(.magneticModelUnavailable(error))
    case .success(let field)?:
      return .found(MagneticDeclination(degrees: field.declination, modelName: field.modelName))
    }
  }

  /// Height above the ellipsoid for the model: the ellipsoidal height, else the altitude above
  /// sea level (the geoid is within about 110 m of the ellipsoid, far below what the declination
  /// notices), else 0.
  static func height(of location: Fix) -> Double {
    if let height = location.ellipsoidalAltitude, height.isFinite { return height }
    if let height = location.altitude, height.isFinite { return height }
    return 0
  }
}
