import CoreLocation
import Foundation

/// `whereami`: prints where this machine is, through the public CoreLocation API only.
public enum WhereAmI {
  /// The version `--version` prints.
  public static let version = "0.1.0"

  /// Exit statuses (documented in `--help` and the README).
  public enum ExitCode: Int32 {
    /// Success.
    case success = 0
    /// No location.
    case noLocation = 1
    /// Usage error.
    case usage = 2
    /// Denied, or location services off.
    case denied = 3
    /// Timed out.
    case timedOut = 4
  }

  /// Runs `whereami` with its arguments (without the program name); never returns.
  @MainActor
  public static func main(arguments: [String]) -> Never {
    let options: WhereAmIOptions
    let source: String?
    do {
      options = try WhereAmIOptions.parse(arguments)
      source = try options.effectiveSource(environment: ProcessInfo.processInfo.environment)
    } catch {
      printError("whereami: \(error.message)")
      exit(ExitCode.usage.rawValue)
    }
    if options.help {
      print(WhereAmIOptions.helpText)
      exit(ExitCode.success.rawValue)
    }
    if options.version {
      print("whereami \(version) (CoreLocation for Linux)")
      exit(ExitCode.success.rawValue)
    }
    if let source { setenv("CORELOCATION_SOURCE", source, 1) }
    if case .format(let format) = options.output, options.verbose {
      let unsupported = LocationFormatter.unsupportedTokens(in: format)
      if !unsupported.isEmpty {
        printError(
          "whereami: no reverse geocoder on Linux; these tokens print nothing: "
            + unsupported.map { "%" + $0 }.joined(separator: " "))
      }
    }
    let runner = Runner(options: options, isReplay: source?.hasPrefix("replay://") ?? false)
    runner.start()
    dispatchMain()
  }

  static func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
  }
}

/// The delegate that prints locations and decides when to exit.
@MainActor
final class Runner: NSObject, CLLocationManagerDelegate {
  private let options: WhereAmIOptions
  private let manager = CLLocationManager()
  private var printed = 0
  private var timeoutGeneration = 0
  private let progress: Bool
  private var lastProgress = Date.distantPast

  init(options: WhereAmIOptions, isReplay: Bool) {
    self.options = options
    // A progress line only where it cannot mix with the results: results go to a file or a pipe
    // and standard error is a terminal.
    progress = isReplay && options.watch && isatty(STDERR_FILENO) == 1 && isatty(STDOUT_FILENO) == 0
    super.init()
  }

  func start() {
    manager.delegate = self
    manager.desiredAccuracy = options.accuracy
    manager.distanceFilter = options.distanceFilter
    if options.watch {
      manager.startUpdatingLocation()
    } else {
      manager.requestLocation()
    }
    armTimeout()
  }

  private func armTimeout() {
    guard let timeout = options.timeout else { return }
    timeoutGeneration += 1
    let generation = timeoutGeneration
    DispatchQueue.main.asyncAfter(deadline: .now() + timeout) { [self] in
      MainActor.assumeIsolated {
        guard generation == timeoutGeneration else { return }
        finish(
          .timedOut,
          "whereami: no location within \(String(format: "%g", timeout)) s"
            + (printed > 0 ? " of the last one" : ""))
      }
    }
  }

  private func finish(_ code: WhereAmI.ExitCode, _ message: String? = nil) -> Never {
    if progress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    if let message { WhereAmI.printError(message) }
    fflush(nil)
    exit(code.rawValue)
  }

  nonisolated func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
    let status = manager.authorizationStatus
    MainActor.assumeIsolated {
      if options.verbose {
        WhereAmI.printError(
          "whereami: authorization \(describe(status)), services "
            + (CLLocationManager.locationServicesEnabled() ? "on" : "off"))
      }
    }
  }

  nonisolated func locationManager(
    _ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]
  ) {
    MainActor.assumeIsolated {
      for location in locations {
        let line: String
        switch options.output {
        case .json: line = LocationFormatter.json(location)
        case .format(let format): line = LocationFormatter.format(location, with: format)
        }
        print(line)
        printed += 1
        if options.verbose {
          WhereAmI.printError("whereami: \(location.description)")
        }
        if !options.watch || printed == options.count {
          finish(.success)
        }
      }
      fflush(nil)
      if progress, let last = locations.last, Date().timeIntervalSince(lastProgress) > 0.2 {
        lastProgress = Date()
        FileHandle.standardError.write(
          Data(
            "\r\u{1B}[Kreplay: \(printed) locations, at \(LocationFormatter.isoTime(last.timestamp))"
              .utf8))
      }
      armTimeout()
    }
  }

  nonisolated func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error)
  {
    MainActor.assumeIsolated {
      let nsError = error as NSError
      let message = nsError.userInfo[NSLocalizedDescriptionKey] as? String
      let ended = nsError.userInfo["CoreLocationSourcesEnded"] as? Bool ?? false
      guard let clError = error as? CLError else {
        finish(.noLocation, "whereami: \(error)")
      }
      switch clError.code {
      case .denied:
        finish(
          .denied,
          "whereami: location access denied"
            + (CLLocationManager.locationServicesEnabled() ? "" : " (location services are off)"))
      case .locationUnknown where ended:
        if options.watch && printed > 0 { finish(.success) }
        finish(
          .noLocation, "whereami: " + (message ?? "the location source ended before a location"))
      case .locationUnknown where !options.watch:
        finish(.noLocation, "whereami: no location" + (message.map { ": " + $0 } ?? ""))
      default:
        if options.verbose || message != nil {
          WhereAmI.printError("whereami: \(message ?? "location unknown for now"); still trying")
        }
      }
    }
  }

  private func describe(_ status: CLAuthorizationStatus) -> String {
    switch status {
    case .notDetermined: return "not determined"
    case .restricted: return "restricted"
    case .denied: return "denied"
    case .authorizedAlways: return "always"
    case .authorizedWhenInUse: return "when in use"
    }
  }
}
