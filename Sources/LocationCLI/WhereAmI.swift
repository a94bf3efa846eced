import CoreLocation
import Foundation
import LocationFormats
import LocationModel
import LocationSources

/// `whereami`: prints where this machine is, through the public CoreLocation API only.
package enum WhereAmI {
  /// The version `--version` prints.
  package static let version = "0.1.0"

  /// Exit statuses (documented in `--help` and the README).
  package enum ExitCode: Int32 {
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
  package static func main(arguments: [String]) -> Never {
    let options: WhereAmIOptions
    let source: String?
    do {
      options = try WhereAmIOptions.parse(arguments)
      source = try options.effectiveSource(environment: ProcessInfo.processInfo.environment)
    } catch {
      printError("whereami: \(error.message)")
      exit(ExitCode.usage.rawValue)
    }
    // The main thread ends in `dispatchMain()`: the sources' and the daemon client's readers
    // read on their own threads, and nothing is added to its run loop (not even while it ends).
    ReadingRunLoop.mainThreadWillEnd()
    if options.help {
      print(WhereAmIOptions.helpText)
      exit(ExitCode.success.rawValue)
    }
    if options.version {
      print("whereami \(version) (CoreLocation for Linux)")
      exit(ExitCode.success.rawValue)
    }
    if let text = options.geocode {
      geocode(text, options: options)
    }
    if let source { setenv("CORELOCATION_SOURCE", source, 1) }
    if let sources = source ?? ProcessInfo.processInfo.environment["CORELOCATION_SOURCE"] {
      for notice in replayNotices(sources: sources) { printError("whereami: " + notice) }
    }
    // -v: the library's own log (which source delivered each fix, sources starting and stopping).
    if options.verbose, ProcessInfo.processInfo.environment["CORELOCATION_LOG"] == nil {
      setenv("CORELOCATION_LOG", "debug", 1)
    }
    if !options.beacons.isEmpty {
      let runner = BeaconRunner(options: options)
      exitOnSignals()
      runner.start()
      withExtendedLifetime(runner) { dispatchMain() }
    }
    var regions: [CLCircularRegion] = []
    if let file = options.regions {
      do {
        regions = try GeoJSONRegions.parse(path: file).map { region in
          let circle = CLCircularRegion(
            center: CLLocationCoordinate2D(latitude: region.latitude, longitude: region.longitude),
            radius: region.radius, identifier: region.identifier)
          circle.notifyOnEntry = region.notifyOnEntry
          circle.notifyOnExit = region.notifyOnExit
          return circle
        }
      } catch {
        printError("whereami: \(error.description)")
        exit(ExitCode.usage.rawValue)
      }
    }
    let isReplay = source?.hasPrefix("replay://") ?? false
    var recorder: GPXTrackWriter?
    if let file = options.record {
      do {
        // A replay's points are not synced one by one (thousands a second with --instant); a
        // live source's are, so that a power cut loses none of them.
        let sources = source ?? ProcessInfo.processInfo.environment["CORELOCATION_SOURCE"]
        recorder = try GPXTrackWriter(
          path: file, creator: "whereami", durable: !(sources.map(onlyReplays) ?? false))
      } catch {
        printError("whereami: \(error.description)")
        exit(ExitCode.usage.rawValue)
      }
    }
    let runner = Runner(options: options, isReplay: isReplay, regions: regions, recorder: recorder)
    exitOnSignals()
    runner.start()
    dispatchMain()
  }

  /// `SIGINT` and `SIGTERM` end the program through `exit` (status 128 + the signal, as a shell
  /// reports a program a signal ended), so that what `exit` runs runs: the library closes its
  /// store there, and the write-ahead log is checkpointed into the database file (README, "When
  /// the store fails"). Without this the signal's default action would end the process at once.
  @MainActor
  static func exitOnSignals() {
    for number in [SIGINT, SIGTERM] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler {
        fflush(nil)
        exit(128 + number)
      }
      source.resume()
      signalSources.append(source)
    }
  }

  /// The signal sources, kept for the life of the process.
  @MainActor private static var signalSources: [any DispatchSourceSignal] = []

  /// What the replays among `sources` leave out of their GPX files, one notice per file that has
  /// points of a kind that is not played (a replay plays a file's tracks, else its routes, else
  /// its waypoints): `/x/hike.gpx: 7 waypoints not replayed: a track is present`.
  ///
  /// Each GPX file is read once more for this, in chunks, counting its points and keeping none.
  /// A file that cannot be read or is not GPX gives no notice here: the replay reports it.
  ///
  /// - Parameter sources: a source URL, or a comma-separated list of them.
  /// - Returns: the notices, in the order of the sources.
  static func replayNotices(sources: String) -> [String] {
    guard let urls = try? SourceURL.parseList(sources) else { return [] }
    return urls.compactMap { url -> String? in
      guard case .replay(let path, _) = url,
        let counts = try? GPXDecoder.countPoints(path: path),
        let notice = GPXPath.leftOutNotice(for: counts)
      else { return nil }
      return path + ": " + notice
    }
  }

  /// Whether every source of a source list is a replayed file (`replay://`, or a bare path).
  static func onlyReplays(_ sources: String) -> Bool {
    guard let urls = try? SourceURL.parseList(sources), !urls.isEmpty else { return false }
    return urls.allSatisfy { url in
      if case .replay = url { return true }
      return false
    }
  }

  /// `--geocode TEXT`: prints the matching places, best first, and exits (1 when none matched).
  @MainActor
  static func geocode(_ text: String, options: WhereAmIOptions) -> Never {
    let geocoder = CLGeocoder()
    geocoder.geocodeAddressString(text) { placemarks, error in
      MainActor.assumeIsolated {
        guard let placemarks, !placemarks.isEmpty else {
          let code = (error as? CLError)?.code
          let reason = (error as NSError?)?.userInfo[NSLocalizedDescriptionKey] as? String
          let detail = reason.map { $0.contains("gazetteer") ? ": " + $0 : "" } ?? ""
          printError(
            "whereami: "
              + (code == .network ? "the geocoding server failed" : "no place matches '\(text)'")
              + detail)
          exit(ExitCode.noLocation.rawValue)
        }
        if (error as? CLError)?.code == .geocodeFoundPartialResult {
          printError("whereami: only part of '\(text)' matched")
        }
        for placemark in placemarks {
          let location = placemark.location ?? CLLocation(latitude: 0, longitude: 0)
          switch options.output {
          case .json:
            print(LocationFormatter.json(location, placemark: placemark))
          case .format(let format) where format == WhereAmIOptions().output.formatString:
            let names = [placemark.name, placemark.administrativeArea, placemark.country]
              .compactMap { $0 }
            var unique: [String] = []
            for name in names where !unique.contains(name) { unique.append(name) }
            print(
              LocationFormatter.format(location, with: format) + "  "
                + unique.joined(separator: ", "))
          case .format(let format):
            print(LocationFormatter.format(location, with: format, placemark: placemark))
          }
        }
        fflush(nil)
        exit(ExitCode.success.rawValue)
      }
    }
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
  /// When the run started, for saying how long it waited.
  private let started = Date()
  private let progress: Bool
  private var lastProgress = Date.distantPast
  private let regions: [CLCircularRegion]
  private var regionStates: [String: CLRegionState] = [:]
  /// Enter or exit callbacks, which come just before the matching `didDetermineState`.
  private var transitions: [String: String] = [:]
  /// Whether each printed location needs its placemark (address tokens, or JSON).
  private let needsPlacemark: Bool
  private let geocoder = CLGeocoder()
  /// Locations waiting for their placemark, printed in order, one reverse geocode at a time.
  private var waiting: [CLLocation] = []
  private var geocoding = false
  /// Locations accepted for printing (with --count, no more than the count).
  private var accepted = 0
  /// An exit that waits for the locations still being geocoded.
  private var exitWhenPrinted: (WhereAmI.ExitCode, String?)?
  /// `--record`: the track every printed location is written to, before it is printed.
  private let recorder: GPXTrackWriter?

  init(
    options: WhereAmIOptions, isReplay: Bool, regions: [CLCircularRegion],
    recorder: GPXTrackWriter? = nil
  ) {
    self.options = options
    self.regions = regions
    self.recorder = recorder
    // A progress line only where it cannot mix with the results: results go to a file or a pipe
    // and standard error is a terminal.
    progress = isReplay && options.watch && isatty(STDERR_FILENO) == 1 && isatty(STDOUT_FILENO) == 0
    switch options.output {
    case .json: needsPlacemark = true
    case .format(let format):
      needsPlacemark = !LocationFormatter.geocodingTokens(in: format).isEmpty
    }
    super.init()
  }

  func start() {
    manager.delegate = self
    manager.desiredAccuracy = options.accuracy
    manager.distanceFilter = options.distanceFilter
    // A watch prints every location: a stationary machine keeps printing (no automatic pause).
    manager.pausesLocationUpdatesAutomatically = false
    if !regions.isEmpty {
      // The file is the whole set: regions left by an earlier run that the file no longer has stop.
      // Regions it still has keep their stored state, so a crossing that happened between two runs
      // is reported as enter or exit.
      let wanted = Set(regions.map(\.identifier))
      let stored = manager.monitoredRegions
      for stale in stored where !wanted.contains(stale.identifier) {
        manager.stopMonitoring(for: stale)
      }
      for region in regions where !stored.contains(where: { Self.same($0, region) }) {
        manager.startMonitoring(for: region)
      }
    }
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

  /// Prints one location (with its placemark for the address tokens) and exits when it was the
  /// last one wanted.
  private func output(_ location: CLLocation, placemark: CLPlacemark?) {
    // (A location without a valid coordinate has no place in a track; Core Location delivers none.)
    if let recorder, location.horizontalAccuracy >= 0 {
      do {
        try recorder.append(Fix(location: location, source: ""))
      } catch {
        finish(.noLocation, "whereami: \(error.description)")
      }
    }
    let line: String
    switch options.output {
    case .json: line = LocationFormatter.json(location, placemark: placemark)
    case .format(let format):
      line = LocationFormatter.format(location, with: format, placemark: placemark)
    }
    print(line)
    printed += 1
    if options.verbose {
      WhereAmI.printError("whereami: \(location.description)")
      if let placemark { WhereAmI.printError("whereami: \(placemark.description)") }
    }
    if !options.watch || printed == options.count {
      finish(.success)
    }
  }

  /// Reverse geocodes the oldest waiting location, prints it, and goes on with the next.
  private func geocodeNext() {
    guard !geocoding, let next = waiting.first else {
      if waiting.isEmpty, !geocoding, let (code, message) = exitWhenPrinted {
        finish(code, message)
      }
      return
    }
    geocoding = true
    geocoder.reverseGeocodeLocation(next) { [self] placemarks, error in
      MainActor.assumeIsolated {
        geocoding = false
        waiting.removeFirst()
        if placemarks == nil, options.verbose, let error {
          WhereAmI.printError("whereami: no placemark: \((error as NSError).localizedDescription)")
        }
        output(next, placemark: placemarks?.first)
        fflush(nil)
        geocodeNext()
      }
    }
  }

  /// Exits once the locations being geocoded are printed.
  private func finishWhenPrinted(_ code: WhereAmI.ExitCode, _ message: String? = nil) -> Never? {
    guard waiting.isEmpty, !geocoding else {
      exitWhenPrinted = (code, message)
      return nil
    }
    finish(code, message)
  }

  private func finish(_ code: WhereAmI.ExitCode, _ message: String? = nil) -> Never {
    if progress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    var code = code
    var message = message
    do {
      try recorder?.close()
    } catch {
      message = (message.map { $0 + "\n" } ?? "") + "whereami: \(error.description)"
      if code == .success { code = .noLocation }
    }
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
      if !regions.isEmpty {
        // With --regions, locations only pace the region lines (and the timeout); not printed.
        armTimeout()
        return
      }
      for location in locations {
        guard options.watch ? accepted < (options.count ?? .max) : accepted == 0 else { break }
        accepted += 1
        if needsPlacemark {
          waiting.append(location)
        } else {
          output(location, placemark: nil)
        }
      }
      geocodeNext()
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
      // Denied ends the run; an unknown location ends it when the sources ended or nothing is
      // watched; every other error (Apple's many codes) is reported and the run goes on.
      if clError.code == .denied {
        // Through locationd the message names the command that grants access.
        finish(
          .denied,
          "whereami: location access denied"
            + (message.map { ": " + $0 }
              ?? (CLLocationManager.locationServicesEnabled()
                ? "" : " (location services are off)"))
        )
      } else if clError.code == .locationUnknown, ended {
        if options.watch && (accepted > 0 || !regions.isEmpty) {
          _ = finishWhenPrinted(.success)
          return
        }
        finish(
          .noLocation, "whereami: " + (message ?? "the location source ended before a location"))
      } else if clError.code == .locationUnknown, !options.watch {
        // requestLocation's own limit (10 s) ended the wait: say how long and what failed.
        let waited = String(format: "%.0f", Date().timeIntervalSince(started))
        finish(
          .noLocation,
          "whereami: no location after \(waited) s" + (message.map { ": " + $0 } ?? ""))
      } else if options.verbose || message != nil {
        WhereAmI.printError("whereami: \(message ?? "location unknown for now"); still trying")
      }
    }
  }

  nonisolated func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion
  ) {
    let time = manager.location?.timestamp ?? Date()
    let identifier = region.identifier
    MainActor.assumeIsolated {
      let previous = regionStates.updateValue(state, forKey: identifier)
      guard previous != state else { return }
      let name: String
      switch state {
      case .inside: name = "inside"
      case .outside: name = "outside"
      case .unknown: name = "unknown"
      }
      var event = transitions.removeValue(forKey: identifier) ?? "determined"
      if previous == .outside, state == .inside { event = "enter" }
      if previous == .inside, state == .outside { event = "exit" }
      switch options.output {
      case .json:
        print(
          "{\"time\":\"\(LocationFormatter.isoTime(time))\",\"region\":\(LocationFormatter.jsonString(identifier)),"
            + "\"state\":\"\(name)\",\"event\":\"\(event)\"}")
      case .format:
        print("\(LocationFormatter.isoTime(time)) \(identifier) \(name) \(event)")
      }
      fflush(nil)
    }
  }

  nonisolated func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {
    let identifier = region.identifier
    MainActor.assumeIsolated { transitions[identifier] = "enter" }
  }

  nonisolated func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {
    let identifier = region.identifier
    MainActor.assumeIsolated { transitions[identifier] = "exit" }
  }

  nonisolated func locationManager(
    _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error
  ) {
    let message = (error as NSError).userInfo[NSLocalizedDescriptionKey] as? String ?? "\(error)"
    let identifier = region?.identifier ?? "?"
    MainActor.assumeIsolated {
      WhereAmI.printError("whereami: region '\(identifier)': \(message)")
      if (error as? CLError)?.code == .regionMonitoringDenied { finish(.denied) }
    }
  }

  /// Whether a stored region is the file's region unchanged (re-adding it would reset its state).
  private static func same(_ stored: CLRegion, _ region: CLCircularRegion) -> Bool {
    guard let circle = stored as? CLCircularRegion else { return false }
    return circle.isEqual(region) && circle.notifyOnEntry == region.notifyOnEntry
      && circle.notifyOnExit == region.notifyOnExit
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
