/// One object of gpsd's JSON protocol (gpsd_json(5)), decoded by `GPSDDecoder`.
///
/// The classes a location client needs are decoded into their own types; every other class
/// (`DEVICES`, `DEVICE`, `WATCH`, `GST`, `AIS`, `PPS`, `TOFF`, `OSC`, ...) is reported by name only.
package enum GPSDMessage: Sendable, Equatable {
  /// `VERSION`: the daemon's release and protocol version, sent first on every connection.
  case version(GPSDVersion)
  /// `TPV`: time, position and velocity.
  case tpv(GPSDTPV)
  /// `SKY`: the satellites in view and the dilutions of precision.
  case sky(GPSDSky)
  /// `ATT`: attitude (heading, pitch, roll) and raw magnetometer, accelerometer and gyro values.
  case attitude(GPSDAttitude)
  /// `ERROR`: gpsd refused a request; the message is gpsd's.
  case error(String)
  /// An object of another class, named by its `class` member.
  case other(String)
}
