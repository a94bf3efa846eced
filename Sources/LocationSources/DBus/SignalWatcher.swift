import CSystemd

/// What a D-Bus service client (BlueZ, NetworkManager) keeps of the signals it watches: the match
/// subscriptions, the events its handlers recorded (decoded, from the service only), and whether
/// the service left the bus. Confined to its client's queue, like the connection (sd-bus is not
/// thread-safe); handlers only record, and ``take(from:)`` hands the events out after
/// `sd_bus_process` returns, so no bus call runs inside a handler.
///
/// Signals are accepted only from ``owner``, the unique name that answered the client's first
/// call, so no other peer can feed the source; a `NameOwnerChanged` that takes the name from that
/// owner means the service exited or restarted.
final class SignalWatcher<Event>: SignalReceiver {
  /// Reads one subscribed signal into an event (nil: not one to report).
  typealias Decoder = (DBusMessage) throws -> Event?

  /// The service's well-known bus name.
  let service: String
  /// The unique name that answered, once one did.
  var owner: String?
  private let decode: Decoder
  private var slots: [OpaquePointer] = []
  private var pending: [Event] = []
  private var vanished = false

  /// A watcher of `service`'s signals, decoded by `decode`.
  init(service: String, decode: @escaping Decoder) {
    self.service = service
    self.decode = decode
  }

  deinit {
    release()
  }

  override func receive(_ message: DBusMessage) { signal(message) }

  /// Subscribes to the service's disappearance and to `rules`; call it before the first call to
  /// the service, so that nothing is missed.
  func subscribe(_ connection: DBusConnection, rules: [String]) throws(DBusError) {
    let bus = try connection.openBus("sd_bus_add_match")
    let userdata = Unmanaged.passUnretained(self as SignalReceiver).toOpaque()
    let ownerRule =
      "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
      + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(service)'"
    for rule in [ownerRule] + rules {
      slots.append(
        try SDBus.addMatch(
          bus, rule: rule, handler: signalReceiverHandler, userdata: userdata))
    }
  }

  /// Remembers who answered a call: the only sender whose signals are accepted afterwards.
  func answered(_ reply: DBusMessage) {
    if let sender = SDBus.sender(reply) { owner = sender }
  }

  /// Processes every message waiting on the connection and returns the events recorded, oldest
  /// first, and whether the service left the bus.
  /// - Throws: `DBusError` when the connection broke.
  func take(from connection: DBusConnection) throws(DBusError) -> (
    events: [Event], vanished: Bool
  ) {
    let bus = try connection.openBus("sd_bus_process")
    while try SDBus.process(bus) {}
    let result = (pending, vanished)
    pending.removeAll()
    try SDBus.flush(bus)
    return result
  }

  /// Removes the subscriptions.
  func release() {
    for slot in slots { SDBus.slotUnref(slot) }
    slots.removeAll()
  }

  /// Records one signal. Messages from anyone but the service are ignored, and so are messages
  /// that do not read as the signal they claim to be.
  private func signal(_ message: DBusMessage) {
    let sender = SDBus.sender(message)
    if sender == "org.freedesktop.DBus" {
      nameOwnerChanged(message)
      return
    }
    guard let owner, sender == owner else { return }
    guard let event = try? decode(message) else { return }
    pending.append(event)
  }

  /// `NameOwnerChanged(s name, s old, s new)` for the service: a new owner that differs from the
  /// one that answered means the service exited or restarted.
  private func nameOwnerChanged(_ message: DBusMessage) {
    guard let name = try? SDBus.readString(message, "s"), name == service,
      let oldOwner = try? SDBus.readString(message, "s"),
      let newOwner = try? SDBus.readString(message, "s")
    else { return }
    if let owner, oldOwner == owner || newOwner != owner {
      vanished = true
    }
  }
}

/// What a match handler hands a signal to: the non-generic face of ``SignalWatcher``, so that the
/// C handler (which cannot refer to a generic type) can reach it.
class SignalReceiver {
  /// Takes one signal (on the connection's queue, inside `sd_bus_process`).
  func receive(_ message: DBusMessage) {}
}

/// The match handler of every ``SignalWatcher``: its userdata is the watcher.
private let signalReceiverHandler: SDBusHandler = { message, userdata, _ in
  guard let message, let userdata else { return 0 }
  Unmanaged<SignalReceiver>.fromOpaque(userdata).takeUnretainedValue()
    .receive(DBusMessage(borrowing: message))
  return 0
}
