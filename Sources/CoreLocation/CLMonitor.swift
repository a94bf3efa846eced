import Foundation
import LocationServices
import Synchronization

/// An object that monitors the conditions you add to it.
///
/// On Linux a monitor is a client of the process's location hub, like `CLLocationManager`, and its
/// circular and beacon identity conditions are regions of the hub kept under the group
/// `"monitor:<name>"`:
///
/// - **Persistence.** Conditions and their last states (at first the state given to `assuming:`)
///   are kept in the store by the monitor's name: a monitor opened later with the same name (in
///   this process or after a restart) finds them in `identifiers` and `record(for:)`, and a
///   crossing that happened meanwhile is reported at the first decisive location. Conditions that cannot be monitored (a condition type of the app's own, invalid circles, beacon conditions with no source that hears beacons) and
///   circles refused while the app is not authorized are kept in memory only.
/// - **One monitor per name.** Apple does not document what happens when a second monitor is opened
///   with a name already in use (apps report a crash). Here `init(_:)` waits until the monitor that
///   holds the name is released (deinitialized), then opens. Opening a name twice in one task while
///   keeping the first monitor therefore never returns: keep one monitor per name and share it.
///   Monitors of different names are independent, and a `CLLocationManager`'s regions are kept
///   apart from every monitor's conditions (same identifiers do not clash).
/// - **The rule.** A circular condition is decided as `CLLocationManager` regions are (see
///   `CLMonitor.CircularGeographicCondition`), with a hysteresis of 5 m. A condition's state starts
///   `.unknown` (or the state given to `add(_:identifier:assuming:)`); the first decisive location
///   that disagrees with it, and every later change, is an event: inside is `.satisfied`, outside
///   `.unsatisfied`. A location that agrees with the current state is no event.
/// - **Authorization.** Adding a condition to a monitor of an app whose authorization is not
///   determined asks for always authorization. An app that may not use location gets an event for
///   the condition with `authorizationDenied` (or `authorizationDeniedGlobally`,
///   `authorizationRestricted`) set and its current state; when authorization changes in a way that
///   changes those flags, every condition gets such an event, and refused conditions are monitored
///   once location is allowed.
/// - **Events** are buffered as `CLMonitor.Events` describes.
public actor CLMonitor {
  /// The monitor's name (Apple's `CLMonitor` has no public accessor for it).
  let name: String
  /// An asynchronous sequence of events that represent the conditions the monitor object observes.
  public let events: CLMonitor.Events
  private let core: MonitorCore
  private let key: MonitorNames.Key

  /// Creates a location monitor with the name you specify.
  ///
  /// Waits while another monitor of the same name is open in this process (see the type's
  /// documentation), then takes back the conditions kept under the name.
  /// - Parameter name: The name of the location monitor.
  public init(_ name: String) async {
    let environment = HubEnvironment.current
    let key = MonitorNames.Key(hub: ObjectIdentifier(environment.hub), name: name)
    await MonitorNames.shared.acquire(key)
    let mailbox = MonitorMailbox(limit: Self.eventBufferLimit)
    let core = MonitorCore(hub: environment.hub, group: Self.group(for: name), mailbox: mailbox)
    self.name = name
    self.key = key
    self.core = core
    self.events = CLMonitor.Events(mailbox: mailbox)
    mailbox.setOwner(self)
    core.open()
  }

  deinit {
    core.close()
    MonitorNames.shared.release(key)
  }

  /// The hub group that holds a monitor's conditions.
  static func group(for name: String) -> String { "monitor:" + name }

  /// An array that contains the identifiers of the conditions the framework is monitoring, in the
  /// order they were first added (restored ones first). Conditions that cannot be monitored are
  /// listed too; their records say why.
  public var identifiers: [String] { core.identifiers }

  /// Adds the given condition for monitoring. The initial state is `.unknown`.
  ///
  /// A condition with the identifier of one already present replaces it. A circular condition, and
  /// a beacon identity condition while a source hears beacons (`isRangingAvailable()`), is
  /// monitored (and kept in the store); any other condition gets an event in state `.unmonitored`
  /// with `conditionUnsupported` set, as does a circular condition whose radius is not positive or
  /// exceeds `maximumRegionMonitoringDistance`, or whose centre is invalid.
  /// - Parameters:
  ///   - condition: The condition to monitor.
  ///   - identifier: A string that identifies the monitored condition.
  public func add(_ condition: any CLCondition, identifier: String) {
    core.add(condition, identifier: identifier, assuming: .unknown)
  }

  /// Adds the monitoring condition with the identifier and initial state you specify.
  ///
  /// The first decisive location that disagrees with `state` is reported as an event; one that
  /// agrees is not (`.satisfied` means inside a circular condition, `.unsatisfied` outside).
  /// - Parameters:
  ///   - condition: The condition to monitor.
  ///   - identifier: A string that identifies the monitored condition.
  ///   - state: The monitoring state to initialize the condition with.
  public func add(
    _ condition: any CLCondition, identifier: String, assuming state: CLMonitor.Event.State
  ) {
    core.add(condition, identifier: identifier, assuming: state)
  }

  /// Removes the condition and its enclosed record associated with the identifier you provide.
  /// - Parameter identifier: A string that identifies the monitored condition.
  public func remove(_ identifier: String) {
    core.remove(identifier)
  }

  /// A record that contains a condition and the most recent event your app receives.
  /// - Parameter identifier: A string that identifies the monitored condition.
  /// - Returns: The record, or `nil` if no condition has that identifier.
  public func record(for identifier: String) -> CLMonitor.Record? {
    core.record(for: identifier)
  }
}

/// The names of the monitors open in this process, per hub: a second monitor of a name waits for
/// the first to be released.
final class MonitorNames: Sendable {
  /// A name on a hub.
  struct Key: Hashable, Sendable {
    let hub: ObjectIdentifier
    let name: String
  }

  /// The process's registry.
  static let shared = MonitorNames()

  /// Names held, each with the openings waiting for it, oldest first.
  private let held = Mutex<[Key: [CheckedContinuation<Void, Never>]]>([:])

  /// Returns when the caller holds the name.
  func acquire(_ key: Key) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let acquired = held.withLock { held -> Bool in
        guard held[key] != nil else {
          held[key] = []
          return true
        }
        held[key]?.append(continuation)
        return false
      }
      if acquired { continuation.resume() }
    }
  }

  /// Gives the name to the oldest waiting opening, or frees it.
  func release(_ key: Key) {
    let next = held.withLock { held -> CheckedContinuation<Void, Never>? in
      guard var waiting = held[key], !waiting.isEmpty else {
        held[key] = nil
        return nil
      }
      let next = waiting.removeFirst()
      held[key] = waiting
      return next
    }
    next?.resume()
  }
}
