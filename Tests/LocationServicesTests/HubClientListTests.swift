import LocationEngine
import LocationModel
import LocationSources
import TestSupport
import Testing

@testable import LocationServices

/// The hub's clients in id order, walked by a fix's deliveries (`HubClientList`), and the hub
/// delivering through it as clients come and go.
@Suite struct HubClientListTests {
  final class Named: HubClient {
    let name: Int
    init(_ name: Int) { self.name = name }
    func hub(_ hub: LocationHub, deliver delivery: HubDelivery) {}
  }

  static func name(_ client: (any HubClient)?) -> Int? { (client as? Named)?.name }

  @Test func findWalksInOrderAndSearchesOtherwise() {
    var list = HubClientList()
    for raw in [1, 2, 4, 8] { list.append(ClientID(raw), Named(raw)) }
    var cursor = 0
    // In order: each found at the cursor.
    for raw in [1, 2, 4, 8] {
      #expect(Self.name(list.find(ClientID(raw), from: &cursor)) == raw)
    }
    #expect(cursor == 4)
    // Out of order, skipping, missing: found by the search, the cursor moves past the find.
    cursor = 0
    #expect(Self.name(list.find(ClientID(4), from: &cursor)) == 4)
    #expect(cursor == 3)
    #expect(Self.name(list.find(ClientID(1), from: &cursor)) == 1)
    #expect(cursor == 1)
    #expect(list.find(ClientID(3), from: &cursor) == nil)
    #expect(cursor == 1)
    #expect(list.find(ClientID(9), from: &cursor) == nil)
  }

  @Test func appendKeepsOrderAndRemoveForgets() {
    var list = HubClientList()
    list.append(ClientID(5), Named(5))
    list.append(ClientID(2), Named(2))  // below the last: put in its place
    list.append(ClientID(7), Named(7))
    list.append(ClientID(5), Named(50))  // the same id again: replaced
    #expect(list.count == 3)
    var cursor = 0
    #expect([2, 5, 7].map { Self.name(list.find(ClientID($0), from: &cursor)) } == [2, 50, 7])
    list.remove(ClientID(5))
    list.remove(ClientID(6))  // not there: nothing happens
    #expect(list.count == 2)
    cursor = 0
    #expect(list.find(ClientID(5), from: &cursor) == nil)
    #expect([2, 7].map { Self.name(list.find(ClientID($0), from: &cursor)) } == [2, 7])
  }

  @Test func clientAndAllAnswerFromTheListAlone() {
    var list = HubClientList()
    for raw in [3, 1, 9, 4] { list.append(ClientID(raw), Named(raw)) }
    list.remove(ClientID(9))
    #expect(list.all.map(\.id.rawValue) == [1, 3, 4])
    #expect(list.all.map { Self.name($0.client) } == [1, 3, 4])
    #expect(Self.name(list.client(ClientID(4))) == 4)
    #expect(list.client(ClientID(9)) == nil)
    #expect(list.client(ClientID(2)) == nil)
  }

  /// Many removals: vacant slots are squeezed out and every look-up stays right.
  @Test func manyRemovalsKeepEveryLookUpRight() {
    var list = HubClientList()
    for raw in 1...300 { list.append(ClientID(raw), Named(raw)) }
    var present = Set(1...300)
    for raw in (1...300).filter({ $0 % 5 != 0 }).reversed() {
      list.remove(ClientID(raw))
      present.remove(raw)
      #expect(list.count == present.count)
    }
    var cursor = 0
    for raw in 1...300 {
      #expect(
        Self.name(list.find(ClientID(raw), from: &cursor)) == (present.contains(raw) ? raw : nil))
    }
    list.append(ClientID(301), Named(301))
    list.append(ClientID(7), Named(7))  // removed before: back in its place
    cursor = 0
    #expect(
      [5, 7, 10, 301].map { Self.name(list.find(ClientID($0), from: &cursor)) } == [5, 7, 10, 301])
    #expect(list.count == present.count + 2)
  }

  /// Clients that leave in the middle and join at the end: each fix still reaches exactly the
  /// clients registered and started, each once.
  @Test func aFixReachesTheClientsRegisteredNow() {
    let source = ScriptedSource()
    let hub = LocationHub(
      app: "org.example.list", sources: .objects { [source] },
      persistence: MemoryPersistence(), policy: .grant, clock: ManualClock())
    let clients = (0..<5).map { _ in RecordingClient() }
    let ids = clients.map { hub.register($0) }
    for id in ids { hub.startUpdates(id, UpdateRequest()) }
    source.emit(fix(52, 5))
    hub.unregister(ids[1])
    hub.unregister(ids[3])
    let late = RecordingClient()
    hub.startUpdates(hub.register(late), UpdateRequest())
    source.emit(fix(52.001, 5, time: 1_767_225_601))
    #expect(clients.map(\.locations.count) == [2, 1, 2, 1, 2])
    // The late one starts with the fresh cached location, as on Apple platforms.
    #expect(late.locations.map(\.latitude) == [52, 52.001])
  }
}
