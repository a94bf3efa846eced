import CoreLocation
import Foundation
internal import Geodesy
internal import LocationModel
internal import LocationSources
import Synchronization

/// A location source whose output the test decides. It produces only while running (while some
/// client needs locations), like a receiver that is switched off otherwise.
public final class ScriptedSource: Sendable {
  let adapter: Adapter

  init(name: String, nominalAccuracy: Double, hearsBeacons: Bool = true) {
    adapter = Adapter(
      descriptor: SourceDescriptor(
        url: name, nominalAccuracy: nominalAccuracy, power: .high, producesHeading: true,
        producesBeacons: hearsBeacons))
  }

  /// Whether a client currently needs the source.
  public var isRunning: Bool { adapter.context != nil }

  /// How many times the source was started.
  public var startCount: Int { adapter.starts }

  /// Produces a location (dropped when the source is not running).
  public func emit(_ location: CLLocation) {
    adapter.context?.emit(Fix(location: location, source: adapter.descriptor.url))
  }

  /// Produces a fix as it is (dropped when the source is not running), under the source's URL.
  func emit(fix: Fix) {
    guard let context = adapter.context else { return }
    var fix = fix
    fix.source = adapter.descriptor.url
    context.emit(fix)
  }

  /// Produces a heading sample (dropped when the source is not running). Angles in degrees; a
  /// magnetometer's x/y/z in microtesla.
  public func emitHeading(
    magneticHeading: CLLocationDirection?, trueHeading: CLLocationDirection? = nil,
    accuracy: CLLocationDirection = 5, x: Double? = nil, y: Double? = nil, z: Double? = nil,
    at time: Date
  ) {
    adapter.context?.emitHeading(
      HeadingSample(
        time: time.timeIntervalSince1970, magneticHeading: magneticHeading,
        trueHeading: trueHeading,
        accuracy: accuracy, x: x, y: y, z: z, source: adapter.descriptor.url))
  }

  /// Produces a beacon advertisement (dropped when the source is not running).
  func emit(advertisement: BeaconAdvertisement) {
    adapter.context?.emitAdvertisement(advertisement)
  }

  /// Reports a failure.
  public func fail(_ message: String, permanently: Bool) {
    adapter.context?.fail(SourceError(.disconnected, message, isPermanent: permanently))
  }

  /// Ends the source for good.
  public func end() {
    adapter.context?.end()
  }

  /// The `LocationSource` the hub runs.
  final class Adapter: LocationSource {
    let descriptor: SourceDescriptor
    private let state = Mutex<(context: (any SourceContext)?, starts: Int)>((nil, 0))

    init(descriptor: SourceDescriptor) { self.descriptor = descriptor }

    var context: (any SourceContext)? { state.withLock { $0.context } }
    var starts: Int { state.withLock { $0.starts } }

    func start(context: any SourceContext) {
      state.withLock {
        $0.context = context
        $0.starts += 1
      }
    }

    func stop() { state.withLock { $0.context = nil } }
  }
}
