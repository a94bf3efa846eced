import LocationEngine

/// A hub's clients in ascending id order, for delivering a fix's locations.
///
/// The engine emits one delivery per client of a fix, in client order; `find(_:from:)` walks the
/// list alongside them, so each delivery costs one comparison instead of hashing the id (for a
/// daemon serving 500 managers, 500 hashes per fix). Any other order still works: a miss at the
/// cursor falls back to a binary search.
struct HubClientList {
  private var ids: [ClientID] = []
  private var clients: [any HubClient] = []

  var count: Int { ids.count }

  /// Adds a client whose id is above every id in the list (a hub's ids only grow); another id is
  /// put in its place.
  mutating func append(_ id: ClientID, _ client: any HubClient) {
    if let last = ids.last, id <= last {
      let (index, found) = position(of: id)
      if found {
        clients[index] = client
      } else {
        ids.insert(id, at: index)
        clients.insert(client, at: index)
      }
      return
    }
    ids.append(id)
    clients.append(client)
  }

  /// Removes a client, if present.
  mutating func remove(_ id: ClientID) {
    let (index, found) = position(of: id)
    guard found else { return }
    ids.remove(at: index)
    clients.remove(at: index)
  }

  /// The client with `id`: first at `cursor` (moved past it when found there or by the search),
  /// else by binary search; nil when the list has no such client.
  func find(_ id: ClientID, from cursor: inout Int) -> (any HubClient)? {
    if cursor < ids.count, ids[cursor] == id {
      cursor &+= 1
      return clients[cursor &- 1]
    }
    let (index, found) = position(of: id)
    guard found else { return nil }
    cursor = index &+ 1
    return clients[index]
  }

  /// Where `id` is, or would go.
  private func position(of id: ClientID) -> (index: Int, found: Bool) {
    ids.sortedPosition(of: id)
  }
}
