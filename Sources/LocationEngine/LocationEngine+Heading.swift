import Geodesy
import LocationModel

/// Heading in the step function (README, "Behaviour beyond Apple's documentation", Heading; the rules are `HeadingPipeline`'s): each
/// client with heading updates has its own pipeline (filter, orientation, interference watch); a
/// sample goes through every pipeline with the latest location and whether that client has location
/// updates running (Apple's condition for a true heading).
///
/// An app that has not asked for authorization may have headings (as on Apple platforms); a denied
/// or restricted one, or any with location services off, gets none and runs no compass. The
/// location used for true north is the app's own only when it is allowed location, and for an app
/// with reduced accuracy it is the reduced location it receives: the declination says no more
/// than its locations do (issue 14, F3).
extension LocationEngine {
  mutating func receiveHeading(_ sample: HeadingSample, into effects: inout [EngineEffect]) {
    guard headingsAllowed else { return }
    let location = allowed ? latestFix.map { reduction?.apply($0) ?? $0 } : nil
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
