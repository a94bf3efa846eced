import CoreLocation
import Foundation

/// The app side of `locbench latency`: a child process that uses the public API as an app does and
/// writes, on descriptor 3, one line per location it is handed: the location's time in Unix
/// milliseconds and `CLOCK_MONOTONIC` in nanoseconds at the moment its code had it.
///
/// - `latency-client delegate`: a `CLLocationManager` made on the main thread (best accuracy, no
///   distance filter, no automatic pause), its delegate called on the main run loop
///   (`RunLoop.main.run()`).
/// - `latency-client live`: `for await` over `CLLocationUpdate.liveUpdates()` in a task, the main
///   thread in `dispatchMain()`.
/// - `latency-client gpsd PORT`: the same app shape reading gpsd's socket on its main run loop
///   (`LatencyBenchGPSDApp`).
///
/// The environment chooses embedded mode (`CORELOCATION_SOURCE`, `CORELOCATION_DAEMON=off`) or
/// `locationd` (`CORELOCATION_DAEMON_SOCKET`).
enum LatencyBenchClient {
  static let mode = "latency-client"

  /// Writes one record; a short write (the bench has gone) ends the child.
  static func record(_ location: CLLocation) {
    record(milliseconds: Int64((location.timestamp.timeIntervalSince1970 * 1000).rounded()))
  }

  /// Writes one record of a location's time in Unix milliseconds.
  static func record(milliseconds: Int64) {
    let now = DaemonBenchSystem.now()
    let line = Array("\(milliseconds) \(now)\n".utf8)
    let written = line.withUnsafeBytes { write(3, $0.baseAddress, $0.count) }
    if written != line.count { exit(0) }
  }

  final class Delegate: NSObject, CLLocationManagerDelegate {
    func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
      for location in locations { LatencyBenchClient.record(location) }
    }
  }

  static func main(_ arguments: [String]) -> Never {
    signal(SIGPIPE, SIG_IGN)
    switch arguments.first {
    case "delegate":
      let delegate = Delegate()
      let manager = CLLocationManager()
      manager.delegate = delegate
      manager.desiredAccuracy = kCLLocationAccuracyBest
      manager.distanceFilter = kCLDistanceFilterNone
      manager.pausesLocationUpdatesAutomatically = false
      manager.startUpdatingLocation()
      withExtendedLifetime((manager, delegate)) { RunLoop.main.run() }
      exit(0)
    case "live":
      Task.detached {
        for await update in CLLocationUpdate.liveUpdates() {
          if let location = update.location { record(location) }
        }
        exit(0)
      }
      dispatchMain()
    case "gpsd":
      guard arguments.count > 1, let port = Int(arguments[1]) else { break }
      LatencyBenchGPSDApp.main(port: port)
    default:
      break
    }
    FileHandle.standardError.write(
      Data("usage: locbench latency-client delegate|live|gpsd PORT\n".utf8))
    exit(2)
  }
}
