import Foundation

/// What `SimulatedEnvironment.replay(contentsOf:speed:)` plays of a recording.
public struct SimulatedReplay: Sendable, Equatable {
  /// How many locations the replay delivers (while the scripted source runs).
  public let locationCount: Int
  /// The simulated time from the first location to the last: the recording's span divided by
  /// the speed. Advancing the environment by it delivers every location.
  public let duration: TimeInterval
  /// What the replay leaves out of a GPX file, as `whereami` says it
  /// (`7 waypoints not replayed: a track is present`); nil when it plays every point.
  public let leftOutNotice: String?
}
