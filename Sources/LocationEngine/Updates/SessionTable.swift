import LocationModel

/// The update sessions of an engine's clients, kept in client order.
///
/// A fix goes to every session in client order (the order of its effects). In a dictionary that
/// meant sorting the clients and hashing each of them again for every fix: for 500 managers,
/// about 40 % of the engine's step in `perf` (`locbench replay engine` times the step; in
/// `locationd` every client of the fix waits for it). Here the clients are one sorted array and
/// the sessions a parallel one: a fix walks both, with neither a sort nor a hash; a client is
/// found by binary search; adding or removing one (rare) moves the ones after it.
struct SessionTable {
  /// The clients, in ascending order.
  private(set) var clients: [ClientID] = []
  /// `sessions[i]` is the session of `clients[i]`.
  private var sessions: [UpdateSession] = []

  var count: Int { clients.count }
  var isEmpty: Bool { clients.isEmpty }

  /// The position of `client`, or where it would go.
  private func position(of client: ClientID) -> (index: Int, found: Bool) {
    clients.sortedPosition(of: client)
  }

  /// The index of a client's session.
  func index(of client: ClientID) -> Int? {
    let (index, found) = position(of: client)
    return found ? index : nil
  }

  /// A client's session; setting nil removes it, setting one for a new client adds it in order.
  subscript(client: ClientID) -> UpdateSession? {
    get {
      let (index, found) = position(of: client)
      return found ? sessions[index] : nil
    }
    set {
      let (index, found) = position(of: client)
      switch (newValue, found) {
      case (let session?, true):
        sessions[index] = session
      case (let session?, false):
        clients.insert(client, at: index)
        sessions.insert(session, at: index)
      case (nil, true):
        clients.remove(at: index)
        sessions.remove(at: index)
      case (nil, false):
        break
      }
    }
  }

  /// Removes a client's session and returns it.
  mutating func removeValue(forKey client: ClientID) -> UpdateSession? {
    guard let index = index(of: client) else { return nil }
    clients.remove(at: index)
    return sessions.remove(at: index)
  }

  /// The session at `index` (of `clients`).
  func session(at index: Int) -> UpdateSession { sessions[index] }

  /// A fix into the session at `index`, changed in place.
  mutating func take(at index: Int, _ fix: Fix, bestPossible: Double) -> UpdateSession.Received {
    sessions[index].take(fix, bestPossible: bestPossible)
  }

  /// Every client with its session, in client order.
  var entries: Zip2Sequence<[ClientID], [UpdateSession]> { zip(clients, sessions) }
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
