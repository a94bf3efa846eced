import Foundation
internal import LocationModel

/// Information about the user's location during a specific period of time.
///
/// Visits are delivered to `locationManager(_:didVisit:)` after `startMonitoringVisits()`: once
/// when a stay is recognised (`departureDate` is `Date.distantFuture`) and once when it ends (both
/// dates). The dates are those of the first and last fixes of the stay, not the times the events
/// were made. The rule (ours; Apple publishes none) is time-based clustering after Kang et al.,
/// "Extracting places from traces of locations" (2004): the device stays within 150 m of the
/// stay's centre for at least 10 minutes; locations outside for 60 s (beyond 150 m plus their own
/// accuracy) end it; a stop shorter than 10 minutes (a traffic light, a drop-off) is no visit. A stay that was under way when monitoring began has no
/// known arrival: it is reported only at its departure, with `arrivalDate` `Date.distantPast`.
/// `horizontalAccuracy` combines how far the stay's fixes spread around the centre with their own
/// accuracy. Monitoring is kept until stopped; under `locationd`, visits are detected while the
/// app is not running and delivered once to its next manager. See the README, "Visits", for the
/// measured figures.
///
/// As on Apple platforms, the class can be created with `init()` and subclassed (its properties are
/// `open`), so that test doubles written there compile.
open class CLVisit: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
  // @unchecked Sendable: every stored property is an immutable `let`.
  private enum Key {
    static let arrival = "arrivalDate"
    static let departure = "departureDate"
    static let latitude = "latitude"
    static let longitude = "longitude"
    static let accuracy = "horizontalAccuracy"
  }

  /// The approximate time at which the user arrived at the specified location; `Date.distantPast`
  /// when the visit has no arrival information.
  open var arrivalDate: Date { storedArrival }
  /// The approximate time at which the user left the specified location; `Date.distantFuture`
  /// while the user has not left.
  open var departureDate: Date { storedDeparture }
  /// The coordinates of the location.
  open var coordinate: CLLocationCoordinate2D { storedCoordinate }
  /// The visit's estimated radius of uncertainty, in metres.
  open var horizontalAccuracy: CLLocationAccuracy { storedAccuracy }

  private let storedArrival: Date
  private let storedDeparture: Date
  private let storedCoordinate: CLLocationCoordinate2D
  private let storedAccuracy: CLLocationAccuracy

  /// Creates a visit with no information: arrival `Date.distantPast`, departure
  /// `Date.distantFuture`, an invalid coordinate (`kCLLocationCoordinate2DInvalid`) and a negative
  /// accuracy. Subclasses (test doubles) override the properties.
  public override init() {
    storedArrival = .distantPast
    storedDeparture = .distantFuture
    storedCoordinate = kCLLocationCoordinate2DInvalid
    storedAccuracy = -1
    super.init()
  }

  init(
    arrival: Date, departure: Date, coordinate: CLLocationCoordinate2D, accuracy: CLLocationAccuracy
  ) {
    storedArrival = arrival
    storedDeparture = departure
    storedCoordinate = coordinate
    storedAccuracy = accuracy
    super.init()
  }

  /// A visit from the runtime's value: an unknown arrival is `distantPast`, a stay that goes on
  /// departs at `distantFuture`.
  convenience init(_ visit: Visit) {
    self.init(
      arrival: visit.arrival.map { Date(timeIntervalSince1970: $0) } ?? .distantPast,
      departure: visit.departure.map { Date(timeIntervalSince1970: $0) } ?? .distantFuture,
      coordinate: CLLocationCoordinate2D(latitude: visit.latitude, longitude: visit.longitude),
      accuracy: visit.horizontalAccuracy)
  }

  /// `true`.
  public class var supportsSecureCoding: Bool { true }

  /// Encodes the visit with keyed coding.
  open func encode(with coder: NSCoder) {
    coder.encode(storedArrival.timeIntervalSinceReferenceDate, forKey: Key.arrival)
    coder.encode(storedDeparture.timeIntervalSinceReferenceDate, forKey: Key.departure)
    coder.encode(storedCoordinate.latitude, forKey: Key.latitude)
    coder.encode(storedCoordinate.longitude, forKey: Key.longitude)
    coder.encode(storedAccuracy, forKey: Key.accuracy)
  }

  /// Decodes a visit written by `encode(with:)`.
  public required init?(coder: NSCoder) {
    guard coder.allowsKeyedCoding, coder.containsValue(forKey: Key.arrival) else { return nil }
    storedArrival = Date(timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: Key.arrival))
    storedDeparture = Date(
      timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: Key.departure))
    storedCoordinate = CLLocationCoordinate2D(
      latitude: coder.decodeDouble(forKey: Key.latitude),
      longitude: coder.decodeDouble(forKey: Key.longitude))
    storedAccuracy = coder.decodeDouble(forKey: Key.accuracy)
    super.init()
  }

  /// Returns the visit itself: it is immutable.
  open func copy(with zone: NSZone? = nil) -> Any { self }
}
