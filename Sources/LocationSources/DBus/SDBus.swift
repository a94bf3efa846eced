import CSystemd
import Foundation

/// One sd-bus message, referenced for as long as this object lives.
///
/// Not thread-safe: a message belongs to the thread (serial queue) that owns its bus.
final class DBusMessage {
  /// The `sd_bus_message *`.
  let raw: OpaquePointer

  /// Takes over a reference the caller owns (a message sd-bus just created for us).
  init(adopting raw: OpaquePointer) {
    self.raw = raw
  }

  /// Adds a reference to a message sd-bus lends to a callback.
  convenience init(borrowing raw: OpaquePointer) {
    _ = sd_bus_message_ref(raw)
    self.init(adopting: raw)
  }

  deinit {
    _ = sd_bus_message_unref(raw)
  }
}

/// The C signature of an sd-bus message handler (`sd_bus_message_handler_t`).
typealias SDBusHandler =
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?)
  -> Int32

/// A thin layer over sd-bus: one function per C call, each turning sd-bus's negative errno returns
/// into a `DBusError` (and retrying `EINTR` where sd-bus can return it).
///
/// The layout follows apple/swift-system's `Syscalls.swift`: the C call, its name for the error,
/// nothing else. Callers own the threading rule: an `sd_bus` and everything made from it are used
/// from one thread (serial queue) at a time.
enum SDBus {
  /// A D-Bus type code as sd-bus takes it (`char`).
  static func typeCode(_ scalar: Unicode.Scalar) -> CChar {
    CChar(bitPattern: UInt8(ascii: scalar))
  }

  /// Throws `DBusError` for a negative return; returns the value otherwise.
  @discardableResult
  static func check(_ result: Int32, _ function: String) throws(DBusError) -> Int32 {
    guard result >= 0 else { throw DBusError(function: function, errno: -result) }
    return result
  }

  // MARK: Buses

  /// `sd_bus_open_system`: the system bus (`DBUS_SYSTEM_BUS_ADDRESS` if set).
  static func openSystem() throws(DBusError) -> OpaquePointer {
    var bus: OpaquePointer?
    try check(sd_bus_open_system(&bus), "sd_bus_open_system")
    guard let bus else { throw DBusError(function: "sd_bus_open_system", errno: EINVAL) }
    return bus
  }

  /// `sd_bus_new`: an unconnected bus object.
  static func new() throws(DBusError) -> OpaquePointer {
    var bus: OpaquePointer?
    try check(sd_bus_new(&bus), "sd_bus_new")
    guard let bus else { throw DBusError(function: "sd_bus_new", errno: EINVAL) }
    return bus
  }

  /// `sd_bus_set_address`.
  static func setAddress(_ bus: OpaquePointer, _ address: String) throws(DBusError) {
    try check(sd_bus_set_address(bus, address), "sd_bus_set_address")
  }

  /// `sd_bus_set_bus_client`: say `Hello` to a bus daemon after connecting.
  static func setBusClient(_ bus: OpaquePointer, _ isClient: Bool) throws(DBusError) {
    try check(sd_bus_set_bus_client(bus, isClient ? 1 : 0), "sd_bus_set_bus_client")
  }

  /// `sd_bus_start`: connects and authenticates.
  static func start(_ bus: OpaquePointer) throws(DBusError) {
    try check(sd_bus_start(bus), "sd_bus_start")
  }

  /// `sd_bus_flush_close_unref`: sends what is queued, closes, drops the reference.
  static func flushCloseUnref(_ bus: OpaquePointer) {
    _ = sd_bus_flush_close_unref(bus)
  }

  /// `sd_bus_flush`: writes every queued outgoing message (blocking).
  static func flush(_ bus: OpaquePointer) throws(DBusError) {
    while true {
      let result = sd_bus_flush(bus)
      if result == -EINTR { continue }
      try check(result, "sd_bus_flush")
      return
    }
  }

  /// `sd_bus_get_fd`: the connection's file descriptor, for a poll loop or a dispatch source.
  static func getFd(_ bus: OpaquePointer) throws(DBusError) -> Int32 {
    try check(sd_bus_get_fd(bus), "sd_bus_get_fd")
  }

  /// `sd_bus_get_events`: the poll events the connection waits for.
  static func getEvents(_ bus: OpaquePointer) throws(DBusError) -> Int32 {
    try check(sd_bus_get_events(bus), "sd_bus_get_events")
  }

  /// `sd_bus_process`: handles at most one incoming message; true when it did something (call it
  /// again), false when there is nothing to do until the descriptor is ready.
  static func process(_ bus: OpaquePointer) throws(DBusError) -> Bool {
    while true {
      let result = sd_bus_process(bus, nil)
      if result == -EINTR { continue }
      return try check(result, "sd_bus_process") > 0
    }
  }

  /// `sd_bus_wait`: blocks until the connection has something to process or `timeout`
  /// microseconds pass (`UInt64.max`: no limit); true when it is ready.
  static func wait(_ bus: OpaquePointer, timeout: UInt64) throws(DBusError) -> Bool {
    while true {
      let result = sd_bus_wait(bus, timeout)
      if result == -EINTR { continue }
      return try check(result, "sd_bus_wait") > 0
    }
  }

  // MARK: Calls and matches

  /// `sd_bus_message_new_method_call`.
  static func newMethodCall(
    _ bus: OpaquePointer, destination: String?, path: String, interface: String?, member: String
  ) throws(DBusError) -> DBusMessage {
    var message: OpaquePointer?
    try check(
      sd_bus_message_new_method_call(bus, &message, destination, path, interface, member),
      "sd_bus_message_new_method_call")
    guard let message else {
      throw DBusError(function: "sd_bus_message_new_method_call", errno: EINVAL)
    }
    return DBusMessage(adopting: message)
  }

  /// `sd_bus_call`: sends `message` and waits up to `timeout` microseconds for the reply. An error
  /// reply becomes a `DBusError` with the D-Bus error's name and message.
  static func call(
    _ bus: OpaquePointer, _ message: DBusMessage, timeout: UInt64
  ) throws(DBusError) -> DBusMessage {
    var error = corelocation_sd_bus_error_null()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    let result = sd_bus_call(bus, message.raw, timeout, &error, &reply)
    guard result >= 0 else {
      throw DBusError(
        function: "sd_bus_call", errno: -result, name: error.name.map { String(cString: $0) },
        detail: error.message.map { String(cString: $0) })
    }
    guard let reply else { throw DBusError(function: "sd_bus_call", errno: EIO) }
    return DBusMessage(adopting: reply)
  }

  /// `sd_bus_match_signal`: calls `handler` with `userdata` for every matching signal until the
  /// returned slot is released with `slotUnref`.
  static func matchSignal(
    _ bus: OpaquePointer, sender: String?, path: String?, interface: String?, member: String?,
    handler: SDBusHandler, userdata: UnsafeMutableRawPointer?
  ) throws(DBusError) -> OpaquePointer {
    var slot: OpaquePointer?
    try check(
      sd_bus_match_signal(bus, &slot, sender, path, interface, member, handler, userdata),
      "sd_bus_match_signal")
    guard let slot else { throw DBusError(function: "sd_bus_match_signal", errno: EINVAL) }
    return slot
  }

  /// `sd_bus_add_match`: like `matchSignal` with a full match rule (for `arg0=` filters).
  static func addMatch(
    _ bus: OpaquePointer, rule: String, handler: SDBusHandler, userdata: UnsafeMutableRawPointer?
  ) throws(DBusError) -> OpaquePointer {
    var slot: OpaquePointer?
    try check(sd_bus_add_match(bus, &slot, rule, handler, userdata), "sd_bus_add_match")
    guard let slot else { throw DBusError(function: "sd_bus_add_match", errno: EINVAL) }
    return slot
  }

  /// `sd_bus_slot_unref`: removes a match (or another slot).
  static func slotUnref(_ slot: OpaquePointer) {
    _ = sd_bus_slot_unref(slot)
  }

  // MARK: Writing messages

  /// `sd_bus_message_append_basic` with a string-like type (`s`, `o`, `g`).
  static func appendString(
    _ message: DBusMessage, _ type: Unicode.Scalar, _ value: String
  ) throws(DBusError) {
    try check(
      corelocation_sd_bus_message_append_string(message.raw, typeCode(type), value),
      "sd_bus_message_append_basic")
  }

  /// `sd_bus_message_append_basic` with `u`.
  static func appendUInt32(_ message: DBusMessage, _ value: UInt32) throws(DBusError) {
    try check(
      corelocation_sd_bus_message_append_uint32(message.raw, value), "sd_bus_message_append_basic")
  }

  /// `sd_bus_message_append_basic` with `b`.
  static func appendBool(_ message: DBusMessage, _ value: Bool) throws(DBusError) {
    try check(
      corelocation_sd_bus_message_append_bool(message.raw, value ? 1 : 0),
      "sd_bus_message_append_basic")
  }

  /// `sd_bus_message_open_container` (`v`, `a`, `r`, `e` with the contents' signature).
  static func openContainer(
    _ message: DBusMessage, _ type: Unicode.Scalar, contents: String
  ) throws(DBusError) {
    try check(
      sd_bus_message_open_container(message.raw, typeCode(type), contents),
      "sd_bus_message_open_container")
  }

  /// `sd_bus_message_close_container`.
  static func closeContainer(_ message: DBusMessage) throws(DBusError) {
    try check(sd_bus_message_close_container(message.raw), "sd_bus_message_close_container")
  }

  // MARK: Reading messages

  /// `sd_bus_message_get_sender`: the unique name of the connection that sent `message`, if the
  /// bus stamped one.
  static func sender(_ message: DBusMessage) -> String? {
    sd_bus_message_get_sender(message.raw).map { String(cString: $0) }
  }

  /// `sd_bus_message_get_path`: the object path a signal or call is about, if any.
  static func path(_ message: DBusMessage) -> String? {
    sd_bus_message_get_path(message.raw).map { String(cString: $0) }
  }

  /// `sd_bus_message_get_member`: the name of a signal or method.
  static func member(_ message: DBusMessage) -> String? {
    sd_bus_message_get_member(message.raw).map { String(cString: $0) }
  }

  /// `sd_bus_message_peek_type`: the type code and contents signature of the next value, or nil
  /// at the end of the current container.
  static func peekType(_ message: DBusMessage) throws(DBusError) -> (
    type: Unicode.Scalar, contents: String?
  )? {
    var type: CChar = 0
    var contents: UnsafePointer<CChar>?
    guard
      try check(sd_bus_message_peek_type(message.raw, &type, &contents), "sd_bus_message_peek_type")
        > 0
    else { return nil }
    return (Unicode.Scalar(UInt8(bitPattern: type)), contents.map { String(cString: $0) })
  }

  /// `sd_bus_message_enter_container`; false at the end of the enclosing container.
  static func enterContainer(
    _ message: DBusMessage, _ type: Unicode.Scalar, contents: String?
  ) throws(DBusError) -> Bool {
    try check(
      sd_bus_message_enter_container(message.raw, typeCode(type), contents),
      "sd_bus_message_enter_container") > 0
  }

  /// `sd_bus_message_exit_container`.
  static func exitContainer(_ message: DBusMessage) throws(DBusError) {
    try check(sd_bus_message_exit_container(message.raw), "sd_bus_message_exit_container")
  }

  /// `sd_bus_message_skip`: skips the values of the signature `types` (nil: the next value).
  static func skip(_ message: DBusMessage, types: String?) throws(DBusError) {
    try check(sd_bus_message_skip(message.raw, types), "sd_bus_message_skip")
  }

  /// `sd_bus_message_read_basic` with a string-like type (`s`, `o`, `g`).
  static func readString(_ message: DBusMessage, _ type: Unicode.Scalar) throws(DBusError) -> String
  {
    var value: UnsafePointer<CChar>?
    try check(
      corelocation_sd_bus_message_read_string(message.raw, typeCode(type), &value),
      "sd_bus_message_read_basic")
    guard let value else { throw DBusError(function: "sd_bus_message_read_basic", errno: ENXIO) }
    return String(cString: value)
  }

  /// `sd_bus_message_read_basic` with `d`.
  static func readDouble(_ message: DBusMessage) throws(DBusError) -> Double {
    var value = 0.0
    try check(
      corelocation_sd_bus_message_read_double(message.raw, &value), "sd_bus_message_read_basic")
    return value
  }

  /// `sd_bus_message_read_basic` with `u`.
  static func readUInt32(_ message: DBusMessage) throws(DBusError) -> UInt32 {
    var value: UInt32 = 0
    try check(
      corelocation_sd_bus_message_read_uint32(message.raw, &value), "sd_bus_message_read_basic")
    return value
  }

  /// `sd_bus_message_read_basic` with `t`.
  static func readUInt64(_ message: DBusMessage) throws(DBusError) -> UInt64 {
    var value: UInt64 = 0
    try check(
      corelocation_sd_bus_message_read_uint64(message.raw, &value), "sd_bus_message_read_basic")
    return value
  }

  /// `sd_bus_message_read_basic` with `i`.
  static func readInt32(_ message: DBusMessage) throws(DBusError) -> Int32 {
    var value: Int32 = 0
    try check(
      corelocation_sd_bus_message_read_int32(message.raw, &value), "sd_bus_message_read_basic")
    return value
  }

  /// `sd_bus_message_read_basic` with `x`.
  static func readInt64(_ message: DBusMessage) throws(DBusError) -> Int64 {
    var value: Int64 = 0
    try check(
      corelocation_sd_bus_message_read_int64(message.raw, &value), "sd_bus_message_read_basic")
    return value
  }

  /// `sd_bus_message_read_basic` with `n`.
  static func readInt16(_ message: DBusMessage) throws(DBusError) -> Int16 {
    var value: Int16 = 0
    try check(
      corelocation_sd_bus_message_read_int16(message.raw, &value), "sd_bus_message_read_basic")
    return value
  }

  /// `sd_bus_message_read_basic` with `q`.
  static func readUInt16(_ message: DBusMessage) throws(DBusError) -> UInt16 {
    var value: UInt16 = 0
    try check(
      corelocation_sd_bus_message_read_uint16(message.raw, &value), "sd_bus_message_read_basic")
    return value
  }

  /// `sd_bus_message_read_basic` with `y`.
  static func readByte(_ message: DBusMessage) throws(DBusError) -> UInt8 {
    var value: UInt8 = 0
    try check(
      corelocation_sd_bus_message_read_byte(message.raw, &value), "sd_bus_message_read_basic")
    return value
  }

  /// `sd_bus_message_read_array` with `y`: a whole `ay` (the message must be positioned at it, not
  /// inside it), copied out of the message.
  static func readByteArray(_ message: DBusMessage) throws(DBusError) -> [UInt8] {
    var pointer: UnsafeRawPointer?
    var size = 0
    try check(
      sd_bus_message_read_array(message.raw, typeCode("y"), &pointer, &size),
      "sd_bus_message_read_array")
    guard let pointer, size > 0 else { return [] }
    return Array(UnsafeRawBufferPointer(start: pointer, count: size))
  }

  /// `sd_bus_message_read_basic` with `b`.
  static func readBool(_ message: DBusMessage) throws(DBusError) -> Bool {
    var value: Int32 = 0
    try check(
      corelocation_sd_bus_message_read_bool(message.raw, &value), "sd_bus_message_read_basic")
    return value != 0
  }
}
