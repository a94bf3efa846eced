import Geodesy

/// What kept the pipeline from giving both headings for real.
package enum HeadingLimitation: Sendable, Equatable {
  /// Location updates are not running: the true heading of a magnetic source is -1 (Apple's
  /// documented rule).
  case locationUpdatesOff
  /// No valid location is known: no declination, so a magnetic source has no true heading and a
  /// true-heading source has no magnetic one.
  case noLocation
  /// The World Magnetic Model has no answer for the sample's date or the location's height
  /// (before 2010.0, after 2030.0, or outside -1 km...850 km): the derived heading is withheld
  /// rather than guessed.
  case magneticModelUnavailable(MagneticModelError)
}
