import CMosquitto
import Foundation
import Synchronization

/// An MQTT 3.1.1 client on libmosquitto (Eclipse Mosquitto's client library): `locationd`'s
/// publisher speaks MQTT through it rather than through a hand-written protocol.
///
/// One connection, driven by a thread of its own that runs libmosquitto's network loop
/// (`mosquitto_loop_forever`) and connects again after every loss, waiting 1 s, doubling up to
/// 60 s (libmosquitto's `reconnect_delay`), also when the broker refuses the connection (bad
/// credentials: the event says why, and the next attempt waits as long as the backoff says).
/// What happens is told to `events` on that thread, in order: keep the handler short.
///
/// Publishing (`publish`) is allowed from any thread (libmosquitto's threaded mode); a QoS 1
/// message is `acknowledged` (its message id) when the broker has it (`PUBACK`).
package final class MQTTClient: @unchecked Sendable {
  // Safe: `handle` is libmosquitto's, which is thread-safe in threaded mode (publish, subscribe,
  // disconnect from any thread); `state` is behind a lock; the box outlives every callback (it is
  // released after the loop thread ends and the handle is destroyed).

  /// Where and how to connect.
  package struct Configuration: Sendable, Equatable {
    /// Certificates for MQTT over TLS (`mqtts://`).
    package struct TLS: Sendable, Equatable {
      /// The certificate authority's file (PEM) the broker's certificate is checked against.
      package var caFile: String
      /// The client's certificate (PEM), when the broker asks for one.
      package var certificateFile: String?
      /// The client's key (PEM, unencrypted), with `certificateFile`.
      package var keyFile: String?

      /// Creates TLS settings.
      package init(caFile: String, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
      }
    }

    /// The message the broker publishes when the connection is lost without a goodbye.
    package struct Will: Sendable, Equatable {
      /// Its topic.
      package var topic: String
      /// Its payload.
      package var payload: [UInt8]
      /// Its QoS (0, 1 or 2).
      package var qos: Int32
      /// Whether the broker keeps it as the topic's last message.
      package var retain: Bool

      /// Creates a will.
      package init(topic: String, payload: [UInt8], qos: Int32 = 1, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
      }
    }

    /// The broker's host name or address.
    package var host: String
    /// The broker's port (1883 plain, 8883 TLS).
    package var port: Int32
    /// The client identifier.
    package var clientID: String
    /// The user name, if the broker wants one.
    package var username: String?
    /// The password, with `username`.
    package var password: String?
    /// TLS, for `mqtts://`; nil: plain TCP.
    package var tls: TLS?
    /// The last will, if any.
    package var will: Will?
    /// Seconds between keep-alive pings; a connection that stalls (nothing comes back) is given
    /// up within twice this, and connected again.
    package var keepAlive: Int32 = 30
    /// The longest wait between attempts to connect, seconds.
    package var maximumReconnectDelay: UInt32 = 60
    /// QoS 1 and 2 messages on the wire at once, unacknowledged (more wait in libmosquitto).
    package var maximumInflight: UInt32 = 1000
    /// Whether the broker forgets the session (subscriptions, queued messages) at each
    /// connection; false keeps it under `clientID` while the client is away.
    package var cleanSession = true

    /// Creates a configuration.
    package init(
      host: String, port: Int32, clientID: String, username: String? = nil,
      password: String? = nil, tls: TLS? = nil, will: Will? = nil
    ) {
      self.host = host
      self.port = port
      self.clientID = clientID
      self.username = username
      self.password = password
      self.tls = tls
      self.will = will
    }
  }

  /// What the connection tells.
  package enum Event: Sendable, Equatable {
    /// Connected (again): subscriptions are to be made again, unacknowledged messages sent again.
    case connected
    /// The broker refused the connection (`CONNACK` with an error), with libmosquitto's words.
    case refused(String)
    /// The connection was lost (or closed by `stop()`), with the reason.
    case disconnected(String)
    /// The broker acknowledged the QoS 1 message with this id.
    case acknowledged(Int32)
    /// A message arrived on a subscribed topic.
    case message(topic: String, payload: [UInt8])
  }

  private final class Box: @unchecked Sendable {
    // Safe: set once before the loop starts; read on the loop thread.
    let events: @Sendable (Event) -> Void
    init(events: @escaping @Sendable (Event) -> Void) { self.events = events }
  }

  private struct State {
    var started = false
    var stopping = false
    var finished: DispatchSemaphore?
    /// The loop thread, while it runs.
    var loopThread: pthread_t?
  }

  /// The configuration connected with.
  package let configuration: Configuration
  private let handle: OpaquePointer
  private let box: Unmanaged<Box>
  private let state = Mutex(State())
  /// Signalled by `stop()`, so that the loop thread does not sit out a backoff delay.
  private let retryWait = DispatchSemaphore(value: 0)

  private static let libraryReady: Bool = {
    mosquitto_lib_init()
    return true
  }()

  /// Creates a client (not connected: `start()`).
  /// - Throws: `MQTTError` when libmosquitto refuses the settings (a bad certificate file, say).
  package init(
    _ configuration: Configuration, events: @escaping @Sendable (Event) -> Void
  ) throws(MQTTError) {
    _ = Self.libraryReady
    self.configuration = configuration
    let box = Unmanaged.passRetained(Box(events: events))
    guard
      let handle = mosquitto_new(
        configuration.clientID, configuration.cleanSession, box.toOpaque())
    else {
      box.release()
      throw MQTTError("cannot create an MQTT client (\(String(cString: strerror(errno))))")
    }
    self.handle = handle
    self.box = box
    // Every property is set: a throw from here runs `deinit`, which destroys both.
    try configure()
  }

  deinit {
    stop()
    mosquitto_destroy(handle)
    box.release()
  }

  private func configure() throws(MQTTError) {
    try check(mosquitto_threaded_set(handle, true), "threaded mode")
    try check(
      mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311),
      "protocol version")
    try check(
      mosquitto_max_inflight_messages_set(handle, configuration.maximumInflight), "in-flight")
    try check(
      mosquitto_reconnect_delay_set(handle, 1, max(1, configuration.maximumReconnectDelay), true),
      "reconnect delay")
    if let username = configuration.username {
      try check(
        mosquitto_username_pw_set(handle, username, configuration.password), "user and password")
    }
    if let tls = configuration.tls {
      try check(
        mosquitto_tls_set(handle, tls.caFile, nil, tls.certificateFile, tls.keyFile, nil),
        "TLS (\(tls.caFile))")
    }
    if let will = configuration.will {
      let code = will.payload.withUnsafeBytes { bytes in
        mosquitto_will_set(
          handle, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos, will.retain)
      }
      try check(code, "last will")
    }
    mosquitto_connect_callback_set(handle) { _, object, code in
      guard let object else { return }
      let box = Unmanaged<Box>.fromOpaque(object).takeUnretainedValue()
      box.events(
        code == 0 ? .connected : .refused(String(cString: mosquitto_connack_string(code))))
    }
    mosquitto_disconnect_callback_set(handle) { _, object, code in
      guard let object else { return }
      let box = Unmanaged<Box>.fromOpaque(object).takeUnretainedValue()
      box.events(.disconnected(code == 0 ? "closed" : MQTTClient.describe(code)))
    }
    mosquitto_publish_callback_set(handle) { _, object, mid in
      guard let object else { return }
      Unmanaged<Box>.fromOpaque(object).takeUnretainedValue().events(.acknowledged(mid))
    }
    mosquitto_message_callback_set(handle) { _, object, message in
      guard let object, let message, let topic = message.pointee.topic else { return }
      let count = Int(message.pointee.payloadlen)
      let payload =
        count > 0 && message.pointee.payload != nil
        ? [UInt8](
          UnsafeRawBufferPointer(start: message.pointee.payload, count: count))
        : []
      Unmanaged<Box>.fromOpaque(object).takeUnretainedValue().events(
        .message(topic: String(cString: topic), payload: payload))
    }
  }

  /// Connects, on a thread of its own that keeps the connection up until `stop()`.
  package func start() {
    let begin = state.withLock { state -> Bool in
      guard !state.started else { return false }
      state.started = true
      state.finished = DispatchSemaphore(value: 0)
      return true
    }
    guard begin else { return }
    let thread = Thread { [self] in run() }
    thread.name = "corelocation.mqtt"
    thread.start()
  }

  /// The loop thread: connect, run the network loop until it ends, wait, connect again.
  private func run() {
    state.withLock { $0.loopThread = pthread_self() }
    var delay: UInt32 = 1
    var connected = false
    while !state.withLock({ $0.stopping }) {
      let code =
        connected
        ? mosquitto_reconnect(handle)
        : mosquitto_connect(
          handle, configuration.host, configuration.port, configuration.keepAlive)
      if code == MOSQ_ERR_SUCCESS.rawValue {
        connected = true
        delay = 1
        // Returns when the connection is lost for good or `stop()` disconnects.
        let end = mosquitto_loop_forever(handle, 1000, 1)
        if state.withLock({ $0.stopping }) { break }
        if end != MOSQ_ERR_SUCCESS.rawValue {
          box.takeUnretainedValue().events(.disconnected(Self.describe(end)))
        }
      } else {
        box.takeUnretainedValue().events(.disconnected(Self.describe(code)))
      }
      // Wait before the next attempt; `stop()` signals to cut the wait short.
      _ = retryWait.wait(timeout: .now() + .seconds(Int(delay)))
      delay = min(delay * 2, max(1, configuration.maximumReconnectDelay))
    }
    state.withLock { $0.finished }?.signal()
  }

  /// Disconnects and waits for the loop thread to end. Safe to call more than once, and from an
  /// event handler (on the loop thread: it does not wait then, and no event follows the
  /// handler's return but the disconnection's). The loop thread holds the client until it ends.
  package func stop() {
    let (finished, onLoop) = state.withLock { state -> (DispatchSemaphore?, Bool) in
      guard state.started, !state.stopping else { return (nil, false) }
      state.stopping = true
      let onLoop = state.loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
      return (state.finished, onLoop)
    }
    guard let finished else { return }
    mosquitto_disconnect(handle)
    retryWait.signal()
    if !onLoop { finished.wait() }
  }

  /// Publishes a message; returns its message id (acknowledged by an `.acknowledged` event for
  /// QoS 1).
  /// - Throws: `MQTTError` for a topic or payload the protocol refuses, or, with `notConnected`
  ///   set, when there is no connection (libmosquitto keeps nothing then: publish again after
  ///   `.connected`).
  @discardableResult
  package func publish(topic: String, payload: [UInt8], qos: Int32 = 1, retain: Bool = false)
    throws(MQTTError) -> Int32
  {
    var mid: Int32 = 0
    let code = payload.withUnsafeBytes { bytes in
      mosquitto_publish(
        handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, qos, retain)
    }
    guard code == MOSQ_ERR_SUCCESS.rawValue else {
      var error = MQTTError("publish to \(topic): \(Self.describe(code))")
      error.notConnected = code == MOSQ_ERR_NO_CONN.rawValue
      throw error
    }
    return mid
  }

  /// Subscribes to a topic pattern (again after each `.connected`).
  /// - Throws: `MQTTError` for a pattern the protocol refuses or no connection.
  package func subscribe(_ pattern: String, qos: Int32 = 1) throws(MQTTError) {
    try check(mosquitto_subscribe(handle, nil, pattern, qos), "subscribe to \(pattern)")
  }

  private func check(_ code: Int32, _ what: String) throws(MQTTError) {
    guard code == MOSQ_ERR_SUCCESS.rawValue else {
      throw MQTTError("\(what): \(Self.describe(code))")
    }
  }

  /// libmosquitto's words for an error code (with `errno`'s for a system error).
  static func describe(_ code: Int32) -> String {
    if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
    // libmosquitto 2.0.11 (Debian 12) has no words for it: "Unknown error.".
    if code == MOSQ_ERR_KEEPALIVE.rawValue {
      return "no answer from the broker within the keep-alive (a stalled connection)"
    }
    return String(cString: mosquitto_strerror(code))
  }
}

/// An MQTT client's failure, with what went wrong.
package struct MQTTError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What went wrong.
  package var message: String
  /// The client was not connected (nothing is wrong with the message itself).
  package var notConnected = false
  /// Creates an error.
  package init(_ message: String) { self.message = message }
  package var description: String { message }
}
