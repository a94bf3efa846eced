import Foundation

/// Information about the user's location during a specific period of time.
///
/// Linux has no visit detection; the type exists so that delegates written for Apple platforms
/// compile. Visits are never delivered.
open class CLVisit: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
  // @unchecked Sendable: every stored property is an immutable `let`.
  private enum Key {
    static let arrival = "arrivalDate"
    static let departure = "departureDate"
    static let latitude = "latitude"
    static let longitude = "longitude"
    static let accuracy = "horizontalAccuracy"
  }

  /// The approximate time at which the user arrived at the specified location.
  open var arrivalDate: Date { storedArrival }
  /// The approximate time at which the user left the specified location.
  open var departureDate: Date { storedDeparture }
  /// The coordinates of the location.
  open var coordinate: CLLocationCoordinate2D { storedCoordinate }
  /// The visit's estimated radius of uncertainty, in metres.
  open var horizontalAccuracy: CLLocationAccuracy { storedAccuracy }

  private let storedArrival: Date
  private let storedDeparture: Date
  private let storedCoordinate: CLLocationCoordinate2D
  private let storedAccuracy: CLLocationAccuracy

  init(
    arrival: Date, departure: Date, coordinate: CLLocationCoordinate2D, accuracy: CLLocationAccuracy
  ) {
    storedArrival = arrival
    storedDeparture = departure
    storedCoordinate = coordinate
    storedAccuracy = accuracy
    super.init()
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
