import LocationEngine

/// A hub's clients in ascending id order: its one record of them (looked up by id, told in id
/// order, and walked by a fix's deliveries).
///
/// The engine emits one delivery per client of a fix, in client order; `find(_:from:)` walks the
/// list alongside them, so each delivery costs a comparison or two instead of hashing the id (for
/// a daemon serving 500 managers, 500 hashes per fix). Any other order still works: a miss at the
/// cursor falls back to a binary search. A removed client leaves a vacant slot, squeezed out once
/// the vacant slots are more than half (`SessionTable`'s rule, for the same reason: a removal in
/// amortized constant time however many managers a hostile uid registers).
struct HubClientList {
  /// The slots' ids, ascending; a vacant slot keeps its id until squeezed out.
  private var ids: [ClientID] = []
  /// `clients[i]` is the client of `ids[i]`, nil once removed.
  private var clients: [(any HubClient)?] = []
  /// The clients present.
  private(set) var count = 0
  /// The fewest vacant slots that are squeezed out (as `SessionTable`'s).
  static let minimumSqueeze = 32

  /// Adds a client whose id is above every id in the list (a hub's ids only grow); another id is
  /// put in its place.
  mutating func append(_ id: ClientID, _ client: any HubClient) {
    let (index, found) = ids.sortedPosition(of: id)
    if found {
      if clients[index] == nil { count += 1 }
      clients[index] = client
      return
    }
    ids.insert(id, at: index)
    clients.insert(client, at: index)
    count += 1
  }

  /// Removes a client, if present.
  mutating func remove(_ id: ClientID) {
    let (index, found) = ids.sortedPosition(of: id)
    guard found, clients[index] != nil else { return }
    clients[index] = nil
    count -= 1
    let vacant = ids.count - count
    guard vacant >= Self.minimumSqueeze, vacant * 2 > ids.count else { return }
    var kept = 0
    for slot in ids.indices where clients[slot] != nil {
      ids[kept] = ids[slot]
      clients.swapAt(kept, slot)
      kept += 1
    }
    ids.removeLast(ids.count - kept)
    clients.removeLast(clients.count - kept)
  }

  /// The client with `id`, if present (binary search).
  func client(_ id: ClientID) -> (any HubClient)? {
    let (index, found) = ids.sortedPosition(of: id)
    return found ? clients[index] : nil
  }

  /// The clients present, in id order.
  var all: [(id: ClientID, client: any HubClient)] {
    ids.indices.compactMap { slot in clients[slot].map { (ids[slot], $0) } }
  }

  /// The first `count` clients present, in id order.
  func first(_ count: Int) -> [any HubClient] {
    var first: [any HubClient] = []
    for client in clients where first.count < count {
      if let client { first.append(client) }
    }
    return first
  }

  /// The client with `id`: first at `cursor` (moved past it when found there or by the search),
  /// else by binary search; nil when the list has no such client.
  func find(_ id: ClientID, from cursor: inout Int) -> (any HubClient)? {
    if cursor < ids.count, ids[cursor] == id {
      cursor &+= 1
      return clients[cursor &- 1]
    }
    let (index, found) = ids.sortedPosition(of: id)
    guard found else { return nil }
    cursor = index &+ 1
    return clients[index]
  }
}
