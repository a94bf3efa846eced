import Geodesy
import LocationModel

/// How much power a source costs while it runs (used for arbitration).
package enum PowerCost: Int, Sendable, Comparable {
  /// Nothing to speak of: a file, a fixed position.
  case none = 0
  /// Network positioning (GeoClue Wi-Fi, IP).
  case low = 1
  /// A GNSS receiver kept tracking.
  case high = 2

  package static func < (lhs: PowerCost, rhs: PowerCost) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What a source says about itself (`docs/architecture.md`, "Sources": sources describe themselves as data).
package struct SourceDescriptor: Sendable, Equatable {
  /// The URL that names the source (`replay:///path`, `static:///etc/geolocation`, ...).
  package var url: String
  /// The best horizontal accuracy (68 %, metres) it can produce; `.infinity` when every fix is as
  /// good as it gets (recordings).
  package var nominalAccuracy: Double
  /// Its power cost while running.
  package var power: PowerCost
  /// Whether it produces locations.
  package var producesLocation: Bool
  /// Whether it produces headings.
  package var producesHeading: Bool
  /// Whether it produces beacon advertisements (BlueZ, a beacon recording).
  package var producesBeacons: Bool
  /// Whether it produces Wi-Fi scans (NetworkManager).
  package var producesScans: Bool

  /// Creates a descriptor.
  package init(
    url: String, nominalAccuracy: Double, power: PowerCost, producesLocation: Bool = true,
    producesHeading: Bool = false, producesBeacons: Bool = false, producesScans: Bool = false
  ) {
    self.url = url
    self.nominalAccuracy = nominalAccuracy
    self.power = power
    self.producesLocation = producesLocation
    self.producesHeading = producesHeading
    self.producesBeacons = producesBeacons
    self.producesScans = producesScans
  }
}

/// A problem a source reports.
package struct SourceError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of problem.
  package enum Code: String, Sendable, Equatable {
    /// The source is not configured correctly (bad URL, bad option).
    case configuration
    /// A file or device cannot be opened or read.
    case unavailable
    /// The data could not be decoded.
    case malformed
    /// Nothing is configured and nothing was discovered.
    case noSource
    /// The connection broke; the source retries.
    case disconnected
    /// The service refused this app (GeoClue's access denied); the app hears `CLError.denied`.
    case denied
    /// A Wi-Fi scan could not be located (the access points heard are not known yet): an outage
    /// the arbiter covers with the next source, which clients hear of only when no other source
    /// can serve.
    case notLocated
  }

  /// What kind of problem.
  package var code: Code
  /// A message for people (no coordinates), naming the source and what to do.
  package var message: String
  /// Whether the source has given up for good (a missing file) rather than retrying.
  package var isPermanent: Bool

  /// Creates an error.
  package init(_ code: Code, _ message: String, isPermanent: Bool) {
    self.code = code
    self.message = message
    self.isPermanent = isPermanent
  }

  package var description: String { message }
}

/// A handle for a scheduled action; cancelling it prevents the action from running.
package protocol Cancellable: Sendable {
  /// Prevents the action from running if it has not run yet.
  func cancel()
}

/// What the runtime gives a running source: a place to send what it produces, and the runtime's
/// clock (real or manual), so that time-driven sources (replay, static) run on virtual time too.
package protocol SourceContext: Sendable {
  /// The current instant on the runtime's clock.
  var now: EngineInstant { get }
  /// Hands a fix to the runtime.
  func emit(_ fix: Fix)
  /// Hands a heading sample (a compass, a heading sentence) to the runtime.
  func emitHeading(_ sample: HeadingSample)
  /// Hands an iBeacon advertisement (BlueZ, a recording) to the runtime.
  func emitAdvertisement(_ advertisement: BeaconAdvertisement)
  /// Hands a Wi-Fi scan (NetworkManager) to the runtime.
  func emitScan(_ scan: WifiScan)
  /// Reports a problem.
  func fail(_ error: SourceError)
  /// Says the source has ended for good (a recording that reached its end).
  func end()
  /// Runs `action` after `seconds` on the runtime's clock.
  @discardableResult
  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  /// A run loop that reads a stream source's descriptor while it waits and runs what it read
  /// there (`StreamWatcher`, `RunLoopReading`): an app's main run loop, so that its delegate gets
  /// a fix after one wake-up. Nil (the default): the source's own thread reads everything.
  var readingRunLoop: ReadingRunLoop? { get }
  /// Goes through the work a fix like `fix` would cause, with no effect: nothing is delivered,
  /// stored or counted. A stream source's wake-up before an epoch (`EpochLead`) rehearses its
  /// last epoch so that the next one finds the processor's caches warm on this thread.
  func rehearse(_ fix: Fix)
}

extension SourceContext {
  /// Default: headings are dropped (contexts that only collect locations).
  package func emitHeading(_ sample: HeadingSample) {}
  /// Default: advertisements are dropped (contexts that only collect locations).
  package func emitAdvertisement(_ advertisement: BeaconAdvertisement) {}
  /// Default: scans are dropped (contexts that only collect locations).
  package func emitScan(_ scan: WifiScan) {}
  /// Default: no reading run loop.
  package var readingRunLoop: ReadingRunLoop? { nil }
  /// Default: nothing to rehearse.
  package func rehearse(_ fix: Fix) {}
}

/// A location source: an adapter that turns the outside world into `Fix` values.
///
/// `start` and `stop` are called by the runtime from its own serial executor; a source may call its
/// context from any thread.
package protocol LocationSource: AnyObject, Sendable {
  /// What the source is and what it costs.
  var descriptor: SourceDescriptor { get }
  /// Starts producing into `context`.
  func start(context: any SourceContext)
  /// Stops producing; no call reaches the context afterwards.
  func stop()
}
