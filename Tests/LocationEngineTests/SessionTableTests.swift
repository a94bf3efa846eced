import Geodesy
import LocationModel
import Testing

@testable import LocationEngine

/// The engine's table of update sessions: client order kept through adds and removals, and what
/// the engine does with it (deliveries in client order, the deferral's origin).
@Suite struct SessionTableTests {
  static let origin = EngineInstant(monotonic: 100, wall: 1_767_225_600)

  /// A fix `north` metres north of 45° N 7° E.
  static func fix(north metres: Double, at seconds: Double = 0) -> Fix {
    let point = Geodesic.wgs84.direct(latitude: 45, longitude: 7, azimuth: 0, distance: metres)
    return Fix(
      latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: 5,
      time: origin.wall + seconds)
  }

  static func deliveredTo(_ effects: [EngineEffect]) -> [ClientID] {
    effects.compactMap { effect in
      if case .deliverLocations(let client, _) = effect { return client }
      return nil
    }
  }

  @Test func clientsStayInOrderThroughAddsAndRemovals() {
    var table = SessionTable()
    #expect(table.isEmpty)
    for raw in [7, 3, 11, 1, 5] { table[ClientID(raw)] = UpdateSession() }
    #expect(table.clients.map(\.rawValue) == [1, 3, 5, 7, 11])
    #expect(table.count == 5)
    #expect(table.index(of: ClientID(7)) == 3)
    #expect(table.index(of: ClientID(4)) == nil)
    #expect(table[ClientID(4)] == nil)

    var streaming = UpdateSession()
    streaming.start(UpdateRequest())
    table[ClientID(5)] = streaming
    #expect(table.count == 5)
    #expect(table[ClientID(5)]?.isStreaming == true)
    #expect(table.session(at: 2).isStreaming)

    table[ClientID(3)] = nil
    table[ClientID(4)] = nil  // not there: nothing happens
    #expect(table.removeValue(forKey: ClientID(11))?.isActive == false)
    #expect(table.removeValue(forKey: ClientID(11)) == nil)
    #expect(table.clients.map(\.rawValue) == [1, 5, 7])
    #expect(table.entries.map { $0.0.rawValue } == [1, 5, 7])
    #expect(table.entries.map { $0.1.isStreaming } == [false, true, false])
  }

  /// Removals leave vacant slots that are squeezed out once they are most of them: the order,
  /// the look-ups and the walk stay right throughout, and the slots do not grow without bound.
  @Test func removalsSqueezeVacantSlotsAndKeepTheOrder() {
    var table = SessionTable()
    var streaming = UpdateSession()
    streaming.start(UpdateRequest())
    for raw in 1...200 { table[ClientID(raw)] = raw % 7 == 0 ? streaming : UpdateSession() }
    // Scattered order: from both ends towards the middle.
    var removals = (1...200).filter { $0 % 7 != 0 }
    removals = zip(removals, removals.reversed()).flatMap { [$0.0, $0.1] }
    var removed = Set<Int>()
    for raw in removals where !removed.contains(raw) {
      removed.insert(raw)
      #expect(table.removeValue(forKey: ClientID(raw)) != nil)
      let expected = (1...200).filter { !removed.contains($0) }
      #expect(table.count == expected.count)
      #expect(table.ids.count - table.count <= max(SessionTable.minimumSqueeze, table.count + 1))
      if raw % 13 == 0 {
        #expect(table.clients.map(\.rawValue) == expected)
        #expect(table.entries.map { $0.0.rawValue } == expected)
      }
    }
    let sevens = (1...200).filter { $0 % 7 == 0 }
    #expect(table.clients.map(\.rawValue) == sevens)
    #expect(table.entries.allSatisfy { $0.1.isStreaming })
    for raw in sevens {
      let slot = table.index(of: ClientID(raw)) ?? -1
      #expect(table.holds(ClientID(raw), at: slot))
      #expect(table.session(at: slot).isStreaming)
    }
    #expect(table[ClientID(8)] == nil)
    #expect(!table.holds(ClientID(8), at: 0))
    // A removed id added again, and a new one at the end.
    table[ClientID(8)] = UpdateSession()
    table[ClientID(300)] = UpdateSession()
    #expect(table.clients.map(\.rawValue) == ([8] + sevens + [300]).sorted())
  }

  @Test func takeChangesTheSessionInPlace() {
    var table = SessionTable()
    var session = UpdateSession()
    session.start(UpdateRequest(distanceFilter: 100))
    table[ClientID(1)] = session
    let index = table.index(of: ClientID(1)) ?? -1
    #expect(table.take(at: index, Self.fix(north: 0), bestPossible: 5) == .deliver)
    // Within the distance filter of the fix just taken: the table kept it.
    #expect(table.take(at: index, Self.fix(north: 50), bestPossible: 5) == .none)
    #expect(table.take(at: index, Self.fix(north: 150), bestPossible: 5) == .deliver)
    #expect(table[ClientID(1)]?.lastDelivered?.latitude == Self.fix(north: 150).latitude)
  }

  /// Every client gets each fix in client order, whatever order they came in, and a removed one
  /// no longer does.
  @Test func aFixReachesTheClientsInClientOrder() {
    var engine = LocationEngine(allowed: true)
    for raw in [9, 2, 5] {
      _ = engine.handle(.addClient(ClientID(raw)), at: Self.origin)
      _ = engine.handle(.startUpdates(ClientID(raw), UpdateRequest()), at: Self.origin)
    }
    let first = engine.handle(.fix(Self.fix(north: 0)), at: Self.origin)
    #expect(Self.deliveredTo(first).map(\.rawValue) == [2, 5, 9])
    _ = engine.handle(.removeClient(ClientID(5)), at: Self.origin)
    _ = engine.handle(.addClient(ClientID(3)), at: Self.origin)
    _ = engine.handle(.startUpdates(ClientID(3), UpdateRequest()), at: Self.origin)
    let second = engine.handle(.fix(Self.fix(north: 10, at: 1)), at: Self.origin.advanced(by: 1))
    #expect(Self.deliveredTo(second).map(\.rawValue) == [2, 3, 9])
  }

  /// Most clients gone: a fix reaches the rest, in order, once each.
  @Test func aFixReachesTheClientsLeftAfterManyLeave() {
    var engine = LocationEngine(allowed: true)
    for raw in 1...100 {
      _ = engine.handle(.addClient(ClientID(raw)), at: Self.origin)
      _ = engine.handle(.startUpdates(ClientID(raw), UpdateRequest()), at: Self.origin)
    }
    for raw in 1...100 where raw % 10 != 3 {
      _ = engine.handle(.removeClient(ClientID(raw)), at: Self.origin)
    }
    let effects = engine.handle(.fix(Self.fix(north: 0)), at: Self.origin)
    #expect(Self.deliveredTo(effects).map(\.rawValue) == Array(stride(from: 3, to: 100, by: 10)))
  }

  /// A deferral counts its distance from the client's current location (the last fix delivered
  /// to it before the deferral), not from the first fix it holds: the session keeps only that
  /// coordinate now.
  @Test func aDeferralCountsFromTheLastLocationDelivered() {
    var engine = LocationEngine(allowed: true)
    let client = ClientID(1)
    _ = engine.handle(
      .sourcesChanged([
        SourceInfo(name: "gpsd://receiver", nominalAccuracy: 5, power: SourceInfo.highPower)
      ]), at: Self.origin)
    _ = engine.handle(.addClient(client), at: Self.origin)
    _ = engine.handle(.startUpdates(client, UpdateRequest()), at: Self.origin)
    let start = engine.handle(.fix(Self.fix(north: 0)), at: Self.origin)
    #expect(Self.deliveredTo(start) == [client])
    let allowed = engine.handle(
      .allowDeferred(client, distance: 100, timeout: 10_000), at: Self.origin)
    #expect(!allowed.contains { if case .deferredFinished = $0 { true } else { false } })
    let held = engine.handle(.fix(Self.fix(north: 60, at: 1)), at: Self.origin.advanced(by: 1))
    #expect(Self.deliveredTo(held).isEmpty)
    // 110 m from the location delivered before, 50 m from the first fix held.
    let done = engine.handle(.fix(Self.fix(north: 110, at: 2)), at: Self.origin.advanced(by: 2))
    #expect(done.contains(.deferredFinished(client, nil)))
    let batch = done.compactMap { effect -> [Fix]? in
      if case .deliverLocations(_, let fixes) = effect { return fixes }
      return nil
    }
    #expect(batch.map(\.count) == [2])
  }
}
