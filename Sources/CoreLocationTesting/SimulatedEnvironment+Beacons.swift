import CoreLocation
import Foundation
internal import LocationFormats
internal import LocationModel

extension SimulatedEnvironment {
  /// Replays a recording of Bluetooth LE advertisements (the JSON-lines format of
  /// `beacons+replay://`: `{"time":…,"address":…,"rssi":…,"manufacturer":{"76":"0215…"}}` per
  /// line) through the scripted radio on the environment's clock, so that a recording of a real
  /// site drives ranging and beacon regions in a test.
  ///
  /// The first advertisement is heard at once; each next one when the clock has advanced by the
  /// recording's gap divided by `speed`. Advertisements are stamped with the environment's time.
  /// Lines that are not iBeacons (other companies, Apple's other frames) are skipped; malformed
  /// lines are counted in the result and skipped. As with `placeBeacon`, an advertisement that
  /// comes while the radio is not scanning is dropped.
  ///
  /// - Parameters:
  ///   - path: the recording.
  ///   - speed: how many times faster than recorded (greater than 0; 1 by default).
  /// - Returns: how many advertisements the replay gives, over what time, and how many lines were
  ///   skipped as malformed.
  /// - Throws: `CLError.rangingUnavailable` naming the file when it cannot be read or holds no
  ///   iBeacon advertisement.
  @discardableResult
  public func replayBeacons(contentsOf path: String, speed: Double = 1) throws
    -> SimulatedBeaconReplay
  {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw CLError(
        .rangingUnavailable, userInfo: [NSLocalizedDescriptionKey: "\(path): cannot be read"])
    }
    let recording = BeaconRecording.decode([UInt8](data), file: path)
    let advertisements = recording.advertisements
    guard let first = advertisements.first else {
      throw CLError(
        .rangingUnavailable,
        userInfo: [NSLocalizedDescriptionKey: "\(path): no iBeacon advertisement in the recording"])
    }
    let pace = speed > 0 && speed.isFinite ? speed : 1
    let offsets = advertisements.map { max(0, ($0.time - first.time) / pace) }
    play(advertisements, offsets: offsets, from: 0)
    pump()
    return SimulatedBeaconReplay(
      advertisementCount: advertisements.count, duration: offsets.last ?? 0,
      malformedLines: recording.problemCount)
  }

  /// Hears the advertisement at `index` and schedules the next (one clock entry at a time).
  private func play(_ advertisements: [BeaconAdvertisement], offsets: [Double], from index: Int) {
    guard index < advertisements.count else { return }
    var advertisement = advertisements[index]
    advertisement.time = clock.now.wall
    source.emit(advertisement: advertisement)
    let next = index + 1
    guard next < advertisements.count else { return }
    let deadline = clock.now.monotonic + max(0, offsets[next] - offsets[index])
    _ = clock.schedule(at: deadline) { [self] in
      play(advertisements, offsets: offsets, from: next)
    }
  }
}

/// What `SimulatedEnvironment.replayBeacons(contentsOf:speed:)` plays.
public struct SimulatedBeaconReplay: Sendable, Equatable {
  /// How many iBeacon advertisements the replay gives (while the radio scans).
  public let advertisementCount: Int
  /// The simulated time from the first advertisement to the last.
  public let duration: TimeInterval
  /// Lines of the recording skipped as malformed.
  public let malformedLines: Int
}
