import LocationModel

/// The update sessions of an engine's clients, kept in client order.
///
/// A fix goes to every session in client order (the order of its effects). In a dictionary that
/// meant sorting the clients and hashing each of them again for every fix: for 500 managers,
/// about 40 % of the engine's step in `perf` (`locbench replay engine` times the step; in
/// `locationd` every client of the fix waits for it). Here the clients are one sorted array of
/// slots and the sessions a parallel one: a fix walks both, with neither a sort nor a hash; a
/// client is found by binary search; a new client (ids only grow) is appended.
///
/// A removed client's slot is marked vacant, not closed up, and the vacant slots are squeezed out
/// once they are more than half of them: a removal costs amortized constant time. Closing up at
/// once moved every session after it, which a hostile uid (256 connections of 1,024 managers in
/// one app's engine) could make quadratic by registering and removing managers.
struct SessionTable {
  /// The slots' clients, ascending; a vacant slot keeps its client's id until squeezed out.
  private(set) var ids: [ClientID] = []
  /// Whether each slot holds a client's session.
  private(set) var live: [Bool] = []
  /// `sessions[i]` is the session of `ids[i]` while `live[i]`.
  private var sessions: [UpdateSession] = []
  /// The live slots.
  private(set) var count = 0

  var isEmpty: Bool { count == 0 }

  /// The fewest vacant slots that are squeezed out (below it, they cost less than a squeeze).
  static let minimumSqueeze = 32

  /// The slot of a live client.
  func index(of client: ClientID) -> Int? {
    let (index, found) = ids.sortedPosition(of: client)
    return found && live[index] ? index : nil
  }

  /// Whether `slot` holds `client`'s session.
  func holds(_ client: ClientID, at slot: Int) -> Bool {
    slot < ids.count && ids[slot] == client && live[slot]
  }

  /// A client's session; setting nil removes it, setting one for a new client adds it in order.
  subscript(client: ClientID) -> UpdateSession? {
    get {
      index(of: client).map { sessions[$0] }
    }
    set {
      let (index, found) = ids.sortedPosition(of: client)
      switch (newValue, found) {
      case (let session?, true):
        sessions[index] = session
        if !live[index] {
          live[index] = true
          count += 1
        }
      case (let session?, false):
        ids.insert(client, at: index)
        live.insert(true, at: index)
        sessions.insert(session, at: index)
        count += 1
      case (nil, true):
        vacate(index)
      case (nil, false):
        break
      }
    }
  }

  /// Removes a client's session and returns it.
  mutating func removeValue(forKey client: ClientID) -> UpdateSession? {
    guard let index = index(of: client) else { return nil }
    let session = sessions[index]
    vacate(index)
    return session
  }

  /// Marks a slot vacant (its session dropped), and squeezes the vacant slots out when they are
  /// most of them.
  private mutating func vacate(_ index: Int) {
    guard live[index] else { return }
    live[index] = false
    sessions[index] = UpdateSession()
    count -= 1
    let vacant = ids.count - count
    guard vacant >= Self.minimumSqueeze, vacant * 2 > ids.count else { return }
    var kept = 0
    for slot in ids.indices where live[slot] {
      ids[kept] = ids[slot]
      sessions.swapAt(kept, slot)
      kept += 1
    }
    ids.removeLast(ids.count - kept)
    sessions.removeLast(sessions.count - kept)
    live = Array(repeating: true, count: kept)
  }

  /// The live clients, in order.
  var clients: [ClientID] { ids.indices.filter { live[$0] }.map { ids[$0] } }

  /// The session in `slot` (a live one).
  func session(at slot: Int) -> UpdateSession { sessions[slot] }

  /// A fix into the session in `slot`, changed in place.
  mutating func take(at slot: Int, _ fix: Fix, bestPossible: Double) -> UpdateSession.Received {
    sessions[slot].take(fix, bestPossible: bestPossible)
  }

  /// Every live client with its session, in client order.
  var entries: Entries { Entries(table: self) }

  /// The live clients with their sessions, in order.
  struct Entries: Sequence {
    let table: SessionTable

    func makeIterator() -> Iterator { Iterator(table: table) }

    struct Iterator: IteratorProtocol {
      let table: SessionTable
      var slot = 0

      mutating func next() -> (ClientID, UpdateSession)? {
        while slot < table.ids.count {
          defer { slot += 1 }
          if table.live[slot] { return (table.ids[slot], table.sessions[slot]) }
        }
        return nil
      }
    }
  }
}

extension Array where Element == ClientID {
  /// Where `client` is in this ascending array, or where it would go (binary search).
  package func sortedPosition(of client: ClientID) -> (index: Int, found: Bool) {
    var low = 0
    var high = count
    while low < high {
      let middle = (low &+ high) &>> 1
      if self[middle] < client {
        low = middle &+ 1
      } else {
        high = middle
      }
    }
    return (low, low < count && self[low] == client)
  }
}
