import Geodesy
import LocationModel

/// Heading in the step function (README, "Behaviour beyond Apple's documentation", Heading; the rules are `HeadingPipeline`'s): each
/// client with heading updates has its own pipeline (filter, orientation, interference watch); a
/// sample goes through every pipeline with the latest location and whether that client has location
/// updates running (Apple's condition for a true heading).
///
/// Headings do not depend on location authorization (as on Apple platforms), but the location used
/// for true north is only the app's own when it is allowed location.
extension LocationEngine {
  mutating func receiveHeading(_ sample: HeadingSample, into effects: inout [EngineEffect]) {
    let location = allowed ? latestFix : nil
    for client in headingSessions.keys.sorted() {
      let running = isActive(client)
      guard
        let action = headingSessions[client]?.receive(
          sample, location: location, locationUpdatesRunning: running)
      else { continue }
      switch action {
      case .none:
        break
      case .deliver(let heading):
        effects.append(.deliverHeading(client, heading))
      case .interference(let interference):
        effects.append(.headingInterference(client, interference))
      }
    }
  }
}
