/// A JSON value, as the gpsd decoder reads one line of gpsd's protocol.
///
/// Numbers are kept as `Double` (gpsd's are at most 64-bit integers and doubles); a number too big
/// for a `Double` parses to an infinity and is rejected by the field readers, not here.
indirect enum GPSDJSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([GPSDJSONValue])
  case object([String: GPSDJSONValue])
}
