import Foundation

/// A failed sd-bus call: which C function failed, its errno, and the D-Bus error the peer sent (if
/// the failure was a D-Bus error reply).
struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The sd-bus function that failed (`sd_bus_call`, `sd_bus_open_system`, ...).
  var function: String
  /// The positive errno sd-bus returned (negated).
  var errno: Int32
  /// The D-Bus error name (`org.freedesktop.DBus.Error.AccessDenied`), when the peer replied
  /// with an error.
  var name: String?
  /// The D-Bus error message that came with `name`.
  var detail: String?

  /// `org.freedesktop.DBus.Error.AccessDenied`.
  static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
  /// The names a bus uses when nobody owns the destination (or it cannot be activated).
  static let noOwnerNames: Set<String> = [
    "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner",
  ]
  /// The names a peer uses when the object or method is gone (a removed object).
  static let unknownObjectNames: Set<String> = [
    "org.freedesktop.DBus.Error.UnknownObject",
    "org.freedesktop.DBus.Error.UnknownMethod",
    "org.freedesktop.DBus.Error.UnknownInterface",
  ]

  /// True when the peer refused the call (`AccessDenied`, or `EACCES`/`EPERM` without a name).
  var isAccessDenied: Bool {
    if let name { return name == Self.accessDenied }
    return errno == EACCES || errno == EPERM
  }

  /// True when nobody owns the destination name on the bus.
  var isNoOwner: Bool { name.map(Self.noOwnerNames.contains) ?? false }

  /// True when the peer did not answer in time (`sd_bus_call`'s timeout, or the bus's `NoReply`).
  var isTimeout: Bool {
    if let name { return Self.timeoutNames.contains(name) }
    return errno == ETIMEDOUT
  }

  /// The names used when a call got no answer in time.
  static let timeoutNames: Set<String> = [
    "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.NoReply",
    "org.freedesktop.DBus.Error.TimedOut",
  ]

  /// True when the called object does not exist (any more).
  var isUnknownObject: Bool { name.map(Self.unknownObjectNames.contains) ?? false }

  var description: String {
    var text = "\(function) failed"
    if let name { text += ": \(name)" }
    if let detail, !detail.isEmpty { text += ": \(detail)" }
    if name == nil { text += ": \(errnoName(errno))" }
    return text
  }
}

/// A short text for an errno value (`strerror`).
func errnoName(_ code: Int32) -> String {
  guard let text = strerror(code) else { return "errno \(code)" }
  return String(cString: text) + " (errno \(code))"
}
