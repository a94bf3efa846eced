import Geodesy
import LocationEngine
import LocationModel
import LocationServices
import LocationSources
import Synchronization
import TestSupport
import Testing

/// A replayed log with heading sentences drives heading (issue 6): the B&G chartplotter capture
/// from the IJsselmeer (2018-08-20), with 1,457 HDG sentences, through the hub on the manual clock.
@Suite struct HeadingReplayTests {
  final class HeadingClient: HubClient {
    let headings = Mutex<[DeliveredHeading]>([])
    func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {
      if case .heading(let heading) = delivery { headings.withLock { $0.append(heading) } }
    }
  }

  @Test func replayedHDGBecomesMagneticAndTrueHeading() throws {
    let path = Paths.ijsselmeer  // gpsd-regress/bundg_zeus_9.log with an origin header
    let clock = ManualClock()
    let persistence = MemoryPersistence()
    persistence.setAuthorization(
      AuthorizationSnapshot(status: AuthorizationStatus.authorizedAlways), app: "test")
    let hub = LocationHub(
      app: "test", sources: .urls([.replay(path: path, options: .init(speed: 10))]),
      persistence: persistence, clock: clock)
    #expect(hub.headingAvailable)
    let client = HeadingClient()
    let id = hub.register(client)
    hub.startUpdates(id, UpdateRequest())
    hub.send(.startHeading(id, filter: -1, orientation: .portrait))
    clock.advance(by: 60)  // the 2 1/2-minute recording at 10x, in virtual time
    let headings = client.headings.withLock { $0 }
    #expect(headings.count > 1400)
    // Once a position is known, true = magnetic + the WMM2015v2 declination there (about +1.5° E
    // in August 2018; the sentences' own variation field says 1.3° E).
    let withTrue = headings.filter { $0.trueHeading >= 0 }
    #expect(withTrue.count > 1400)
    for heading in withTrue.prefix(200) {
      var difference = heading.trueHeading - heading.magneticHeading
      if difference < -180 { difference += 360 }
      #expect(abs(difference - 1.5) < 0.1, "\(difference)")
      #expect(heading.declination?.modelName.contains("2015") == true)
    }
  }
}
