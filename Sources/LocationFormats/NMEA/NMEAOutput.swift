import LocationModel

#if canImport(Geodesy)
  import Geodesy
#endif

/// One result of decoding NMEA 0183: a fix, a heading, a satellite view, or news of no fix.
package enum NMEAOutput: Sendable, Equatable {
  /// A dated position fix: all sentences of one time of fix merged (see `NMEADecoder`).
  case fix(Fix)
  /// A fix whose date was never learned (no RMC or ZDA in the log and no `Options.defaultDate`):
  /// `time` holds the seconds since midnight UTC, 0..<86_401, not Unix time.
  case undatedFix(Fix)
  /// An epoch whose sentences said "no position" (RMC status V, GGA quality 0, GNS mode N, ...).
  /// - Parameter time: Unix time of the epoch (seconds, UTC).
  case noFix(time: Double)
  /// A heading from HDT, HDG, HDM or THS, passed on as soon as it is decoded.
  case heading(NMEAHeading)
  /// One complete GSV group (all of its messages) from one talker.
  case satellites(NMEASkyView)
}

/// The kinds of sentence the decoder understands; used for per-kind counts and in `NMEAHeading`.
package enum NMEASentenceKind: Int, Sendable, Equatable, CaseIterable {
  /// Global positioning system fix data.
  case gga
  /// Recommended minimum specific GNSS data.
  case rmc
  /// GNSS fix data (multi-constellation GGA).
  case gns
  /// Geographic position, latitude and longitude.
  case gll
  /// DOP and active satellites.
  case gsa
  /// Satellites in view.
  case gsv
  /// Course over ground and ground speed.
  case vtg
  /// Time and date.
  case zda
  /// Pseudorange error statistics (the error ellipse).
  case gst
  /// Heading, true.
  case hdt
  /// Heading, deviation and variation.
  case hdg
  /// Heading, magnetic.
  case hdm
  /// True heading and status.
  case ths
}

/// How a THS heading (or another sentence's mode indicator) was obtained.
package enum NMEAHeadingMode: Sendable, Equatable {
  /// Autonomous (`A`).
  case autonomous
  /// Estimated, dead reckoning (`E`).
  case estimated
  /// Entered by hand (`M`).
  case manual
  /// Simulator (`S`).
  case simulated
  /// Data not valid (`V`).
  case invalid
}

/// A heading decoded from one sentence. Angles are degrees clockwise from north, 0..<360.
///
/// Rules (ours): HDG's magnetic heading is the sensor reading plus the deviation when one is
/// given (east positive); its true heading is that plus the variation when one is given. HDT, HDM
/// and THS carry the one heading they name. A THS with mode `V` is still reported, with
/// `mode == .invalid`, so that the consumer decides.
package struct NMEAHeading: Sendable, Equatable {
  /// The sentence this came from (`.hdt`, `.hdg`, `.hdm` or `.ths`).
  package var kind: NMEASentenceKind
  /// The two-letter talker (`HE`, `HC`, `GP`, `IN`, `II`, ...).
  package var talker: String
  /// Heading relative to true north, if known.
  package var trueHeading: Double?
  /// Heading relative to magnetic north, if known.
  package var magneticHeading: Double?
  /// HDG only: the magnetic sensor's raw reading, before deviation.
  package var sensorHeading: Double?
  /// HDG only: magnetic deviation of the sensor, degrees, east positive.
  package var deviation: Double?
  /// HDG only: magnetic variation (declination), degrees, east positive.
  package var variation: Double?
  /// THS only: the mode indicator.
  package var mode: NMEAHeadingMode?
  /// Unix time of the epoch the heading arrived in, when the epoch's time and date are known.
  package var time: Double?

  /// Creates a heading; every measure defaults to unknown.
  package init(
    kind: NMEASentenceKind, talker: String, trueHeading: Double? = nil,
    magneticHeading: Double? = nil, sensorHeading: Double? = nil, deviation: Double? = nil,
    variation: Double? = nil, mode: NMEAHeadingMode? = nil, time: Double? = nil
  ) {
    self.kind = kind
    self.talker = talker
    self.trueHeading = trueHeading
    self.magneticHeading = magneticHeading
    self.sensorHeading = sensorHeading
    self.deviation = deviation
    self.variation = variation
    self.mode = mode
    self.time = time
  }
}

/// One satellite of a GSV message. Missing values are nil.
package struct NMEASatellite: Sendable, Equatable {
  /// The satellite ID as sent (PRN for GPS; 65...96 GLONASS etc., talker-dependent).
  package var id: Int
  /// Elevation, degrees, 0...90.
  package var elevation: Double?
  /// Azimuth, degrees true, 0..<360.
  package var azimuth: Double?
  /// Signal-to-noise ratio, dB-Hz; nil when not tracked.
  package var snr: Double?

  /// Creates a satellite record.
  package init(id: Int, elevation: Double? = nil, azimuth: Double? = nil, snr: Double? = nil) {
    self.id = id
    self.elevation = elevation
    self.azimuth = azimuth
    self.snr = snr
  }
}

/// The satellites of one complete GSV group from one talker.
package struct NMEASkyView: Sendable, Equatable {
  /// The two-letter talker (`GP` GPS, `GL` GLONASS, `GA` Galileo, `GB`/`BD` BeiDou, ...).
  package var talker: String
  /// Satellites in view, as the group's first field says.
  package var inView: Int
  /// The satellites listed, in order.
  package var satellites: [NMEASatellite]

  /// Creates a sky view.
  package init(talker: String, inView: Int, satellites: [NMEASatellite]) {
    self.talker = talker
    self.inView = inView
    self.satellites = satellites
  }
}
