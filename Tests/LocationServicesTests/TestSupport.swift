import Foundation
import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization

/// Where the test inputs live, found from this file's path (the package root is three levels up).
enum Paths {
  /// The package root.
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// A file under `Tests/Fixtures/<folder>/`.
  static func fixture(_ folder: String, _ name: String) -> String {
    root.appendingPathComponent("Tests/Fixtures").appendingPathComponent(folder)
      .appendingPathComponent(name).path
  }

  /// The bundled example track: a real recording, 2 1/2 minutes at 1 Hz.
  static let ijsselmeer = root.appendingPathComponent("Examples/tracks/ijsselmeer-2018.nmea").path
}

/// A temporary directory for one test, removed afterwards.
func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
  let path = NSTemporaryDirectory() + "LocationServicesTests-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try body(path)
}

/// A hub client that records every delivery.
final class RecordingClient: HubClient {
  private let received = Mutex<[HubDelivery]>([])

  func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
    received.withLock { $0.append(delivery) }
  }

  /// Everything delivered, in order.
  var deliveries: [HubDelivery] { received.withLock { $0 } }

  /// The locations delivered, flattened, oldest first.
  var locations: [Fix] {
    deliveries.flatMap { delivery -> [Fix] in
      if case .locations(let fixes) = delivery { return fixes }
      return []
    }
  }

  /// The errors delivered, in order.
  var errors: [(EngineError, String?)] {
    deliveries.compactMap { delivery in
      if case .error(let error, let message) = delivery { return (error, message) }
      return nil
    }
  }

  /// The authorization statuses delivered, in order.
  var statuses: [AuthorizationStatus] {
    deliveries.compactMap { delivery in
      if case .authorization(let snapshot) = delivery { return snapshot.status }
      return nil
    }
  }

  /// Forgets what was delivered so far.
  func reset() { received.withLock { $0 = [] } }
}

/// A source the test drives by hand: it remembers its context while running.
final class ScriptedSource: LocationSource {
  let descriptor: SourceDescriptor
  private let state = Mutex<(context: (any SourceContext)?, starts: Int, stops: Int)>((nil, 0, 0))

  init(url: String = "scripted://test", nominalAccuracy: Double = 5) {
    descriptor = SourceDescriptor(url: url, nominalAccuracy: nominalAccuracy, power: .none)
  }

  func start(context: any SourceContext) {
    state.withLock {
      $0.context = context
      $0.starts += 1
    }
  }

  func stop() {
    state.withLock {
      $0.context = nil
      $0.stops += 1
    }
  }

  var isRunning: Bool { state.withLock { $0.context != nil } }
  var starts: Int { state.withLock { $0.starts } }
  var stops: Int { state.withLock { $0.stops } }

  /// Sends a fix, if running.
  func emit(_ fix: Fix) { state.withLock { $0.context }?.emit(fix) }
  /// Reports a problem, if running.
  func fail(_ error: SourceError) { state.withLock { $0.context }?.fail(error) }
  /// Ends, if running.
  func end() { state.withLock { $0.context }?.end() }
}

/// A fix at a place and time.
func fix(
  _ latitude: Double, _ longitude: Double, time: Double = 1_767_225_600, accuracy: Double = 5
)
  -> Fix
{
  Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: accuracy, time: time)
}

extension LocationHub.Sources {
  /// The URLs, if these are URLs.
  var urls: [SourceURL]? {
    if case .urls(let urls) = self { return urls }
    return nil
  }

  /// The message, if no source is available.
  var unavailableMessage: String? {
    if case .unavailable(let message) = self { return message }
    return nil
  }
}
