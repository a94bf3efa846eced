import CoreLocation
import Foundation

/// `whereami --beacons UUID`: ranges the beacons of each UUID through the public
/// `CLLocationManager` API and prints the deliveries (``BeaconFormatter``), deciding when to exit.
///
/// - Once (the default): the first delivery that has a beacon is printed and the run ends with
///   success; none within `--timeout` (default ``defaultWait``) ends it with a message, status 4
///   when `--timeout` was given and 1 otherwise (as a location request's own limit does).
/// - `--watch`: every delivery is printed (about once a second per UUID; an empty one as a line
///   saying that none is in range, or an empty array in JSON); `--count N` ends the run after N
///   deliveries, and `--timeout S` after S seconds without a beacon in range (status 4).
/// - No source that hears beacons (`isRangingAvailable()` false), or a ranging failure, ends the
///   run at once with a message saying what is missing: status 1, or 3 when location access is
///   denied.
///
/// Output, the end of the run and the timer go through an ``Outlet``, so that tests drive the
/// runner in a `SimulatedEnvironment` and read what it printed.
@MainActor
final class BeaconRunner: NSObject, CLLocationManagerDelegate {
  /// Where the runner's output, its end and its timer go.
  struct Outlet {
    /// Prints a line of results on standard output.
    var print: (String) -> Void
    /// Prints a diagnostic line on standard error.
    var printError: (String) -> Void
    /// Ends the run with a status and, if any, a message for standard error.
    var finish: (WhereAmI.ExitCode, String?) -> Void
    /// Runs a closure on the main actor after a number of seconds.
    var schedule: (TimeInterval, @escaping @MainActor @Sendable () -> Void) -> Void

    /// The process's: standard output and error, `exit`, and the main dispatch queue.
    static var process: Outlet {
      Outlet(
        print: { line in
          Swift.print(line)
          fflush(nil)
        },
        printError: { WhereAmI.printError($0) },
        finish: { code, message in
          if let message { WhereAmI.printError(message) }
          fflush(nil)
          exit(code.rawValue)
        },
        schedule: { seconds, body in
          DispatchQueue.main.asyncAfter(deadline: .now() + seconds) {
            MainActor.assumeIsolated { body() }
          }
        })
    }
  }

  /// How long a run without `--watch` waits for a beacon when `--timeout` is not given, seconds
  /// (a location request's own limit).
  static let defaultWait: TimeInterval = 10

  /// What `isRangingAvailable()` false means, and what would make it true.
  static let unavailableMessage =
    "whereami: beacon ranging is not available: it needs a powered Bluetooth LE adapter under "
    + "BlueZ, or a beacon recording (CORELOCATION_SOURCE=beacons+replay:///path.jsonl)"

  private let options: WhereAmIOptions
  private let outlet: Outlet
  private let manager: CLLocationManager
  private let constraints: [CLBeaconIdentityConstraint]
  private var deliveries = 0
  private var timeoutGeneration = 0
  /// Whether the run has ended (nothing more is printed).
  private(set) var finished = false

  /// A runner for `options` (whose `beacons` are the UUIDs to range); its manager belongs to the
  /// environment bound where the runner is created.
  init(options: WhereAmIOptions, outlet: Outlet = .process) {
    self.options = options
    self.outlet = outlet
    manager = CLLocationManager()
    constraints = options.beacons.map { CLBeaconIdentityConstraint(uuid: $0) }
    super.init()
  }

  /// Starts ranging every UUID, or ends the run when ranging is not available.
  func start() {
    guard CLLocationManager.isRangingAvailable() else {
      return finish(.noLocation, Self.unavailableMessage)
    }
    manager.delegate = self
    for constraint in constraints {
      if options.verbose { outlet.printError("whereami: ranging \(constraint.uuid.uuidString)") }
      manager.startRangingBeacons(satisfying: constraint)
    }
    armTimeout()
  }

  /// (Re)starts the wait for a beacon: `--timeout`, or ``defaultWait`` without `--watch`.
  private func armTimeout() {
    guard let seconds = options.timeout ?? (options.watch ? nil : Self.defaultWait) else { return }
    timeoutGeneration += 1
    let generation = timeoutGeneration
    outlet.schedule(seconds) { [weak self] in
      guard let self, generation == timeoutGeneration, !finished else { return }
      let uuids = options.beacons.map(\.uuidString).joined(separator: " or ")
      finish(
        options.timeout == nil ? .noLocation : .timedOut,
        "whereami: no beacon of \(uuids) in range "
          + (options.watch ? "for " : "within ") + String(format: "%g", seconds) + " s")
    }
  }

  /// Prints a delivery when it is wanted, and ends the run when it was the last one wanted.
  private func received(_ beacons: [CLBeacon], uuid: UUID) {
    guard !finished else { return }
    guard options.watch || !beacons.isEmpty else { return }
    switch options.output {
    case .json: outlet.print(BeaconFormatter.json(beacons, uuid: uuid))
    case .format: for line in BeaconFormatter.lines(beacons, uuid: uuid) { outlet.print(line) }
    }
    deliveries += 1
    if !options.watch || deliveries == options.count {
      finish(.success)
    } else if !beacons.isEmpty {
      armTimeout()
    }
  }

  /// Stops ranging and ends the run.
  private func finish(_ code: WhereAmI.ExitCode, _ message: String? = nil) {
    guard !finished else { return }
    finished = true
    for constraint in constraints { manager.stopRangingBeacons(satisfying: constraint) }
    outlet.finish(code, message)
  }

  /// A ranging failure ends the run: denied access with status 3, anything else with 1.
  private func failed(_ uuid: UUID, _ error: any Error) {
    let reason = (error as NSError).userInfo[NSLocalizedDescriptionKey] as? String
    if (error as? CLError)?.code == .denied {
      finish(.denied, "whereami: location access denied" + (reason.map { ": " + $0 } ?? ""))
    } else {
      finish(
        .noLocation,
        "whereami: ranging \(uuid.uuidString) failed: \(reason ?? String(describing: error))")
    }
  }

  /// A delivery: printed when wanted.
  nonisolated func locationManager(
    _ manager: CLLocationManager, didRange beacons: [CLBeacon],
    satisfying beaconConstraint: CLBeaconIdentityConstraint
  ) {
    let uuid = beaconConstraint.uuid
    MainActor.assumeIsolated { received(beacons, uuid: uuid) }
  }

  /// Ranging a UUID failed: the run ends.
  nonisolated func locationManager(
    _ manager: CLLocationManager, didFailRangingFor beaconConstraint: CLBeaconIdentityConstraint,
    error: any Error
  ) {
    let uuid = beaconConstraint.uuid
    MainActor.assumeIsolated { failed(uuid, error) }
  }

  /// A location error: a denial or the end of every source ends the run; others are shown with
  /// `--verbose`.
  nonisolated func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error)
  {
    MainActor.assumeIsolated {
      // Ranging reports its own failures; a denial or the end of every source ends the run.
      let ended = (error as NSError).userInfo["CoreLocationSourcesEnded"] as? Bool ?? false
      if (error as? CLError)?.code == .denied {
        failed(options.beacons.first ?? UUID(), error)
      } else if ended {
        finish(
          options.watch && deliveries > 0 ? .success : .noLocation,
          options.watch && deliveries > 0 ? nil : "whereami: the beacon source ended")
      } else if options.verbose {
        outlet.printError("whereami: \((error as NSError).localizedDescription)")
      }
    }
  }
}
