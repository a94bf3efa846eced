import Foundation

// Apple's CoreLocation type aliases and global constants (CLLocation.h, CLHeading.h, CLError.h,
// CLLocationManager.h). Every value below is the one Apple's SDK uses.

/// A latitude or longitude value in degrees, WGS 84 (positive is north and east).
public typealias CLLocationDegrees = Double

/// The accuracy of a geographical coordinate, in metres; a negative value means the coordinate is
/// invalid.
public typealias CLLocationAccuracy = Double

/// A speed in metres per second; a negative value means the speed is invalid.
public typealias CLLocationSpeed = Double

/// The accuracy of a speed, in metres per second; a negative value means the speed is invalid.
public typealias CLLocationSpeedAccuracy = Double

/// An azimuth in degrees clockwise from true north (0...359.9); negative means invalid.
public typealias CLLocationDirection = Double

/// The accuracy of a direction, in degrees; a negative value means the direction is invalid.
public typealias CLLocationDirectionAccuracy = Double

/// A distance in metres.
public typealias CLLocationDistance = Double

/// A geomagnetic value in microteslas, relative to one axis of the device.
public typealias CLHeadingComponentValue = Double

/// A `distanceFilter` value that asks for every movement to be reported.
public let kCLDistanceFilterNone: CLLocationDistance = -1

/// A `headingFilter` value that asks for every heading change to be reported.
public let kCLHeadingFilterNone: CLLocationDegrees = -1

/// The highest accuracy, using additional sensor data for navigation apps.
public let kCLLocationAccuracyBestForNavigation: CLLocationAccuracy = -2

/// The best level of accuracy available.
public let kCLLocationAccuracyBest: CLLocationAccuracy = -1

/// Accurate to within ten metres of the desired target.
public let kCLLocationAccuracyNearestTenMeters: CLLocationAccuracy = 10

/// Accurate to within one hundred metres.
public let kCLLocationAccuracyHundredMeters: CLLocationAccuracy = 100

/// Accurate to the nearest kilometre.
public let kCLLocationAccuracyKilometer: CLLocationAccuracy = 1000

/// Accurate to the nearest three kilometres.
public let kCLLocationAccuracyThreeKilometers: CLLocationAccuracy = 3000

/// The level of accuracy used when an app is not authorized for full-accuracy location data.
///
/// Setting it as `desiredAccuracy` asks for reduced-accuracy locations even when the app has full
/// accuracy authorization (Apple's documented use), so it must differ from every other
/// `kCLLocationAccuracy` constant; Apple's headers declare it `extern` without a value. We use
/// 6 380 000 m (about one Earth radius), the value recorded for Apple's SDK by other
/// reimplementations; code should compare with the constant, never with a literal.
public let kCLLocationAccuracyReduced: CLLocationAccuracy = 6_380_000

/// The largest distance a `CLLocationDistance` can hold (`Double.greatestFiniteMagnitude`).
public let CLLocationDistanceMax: CLLocationDistance = .greatestFiniteMagnitude

/// The largest time interval Core Location accepts (`Double.greatestFiniteMagnitude`).
public let CLTimeIntervalMax: TimeInterval = .greatestFiniteMagnitude

/// The domain of Core Location errors (`NSError.domain` of a bridged ``CLError``).
public let kCLErrorDomain: String = "kCLErrorDomain"

/// The user-info key of an error with code `regionMonitoringResponseDelayed`: its value is a
/// ``CLRegion`` that location services can monitor more effectively.
public let kCLErrorUserInfoAlternateRegionKey: String = "kCLErrorUserInfoAlternateRegionKey"
