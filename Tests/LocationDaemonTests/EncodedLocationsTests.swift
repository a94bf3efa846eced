import LocationModel
import LocationProtocol
import Testing

@testable import LocationDaemon

/// `EncodedLocations`: one delivery's `locations` lines, built once per manager number and sent
/// to every connection that has that number.
@Suite struct EncodedLocationsTests {
  private let fixes = [
    Fix(
      latitude: 52.0001, longitude: 5.000205666666667, altitude: 12, horizontalAccuracy: 3.6,
      speed: 9.99977, course: 90, time: 1_796_388_353.1, satellitesUsed: 10,
      source: "nmea+tcp://127.0.0.1:40000")
  ]

  /// Every line is the protocol's own encoding of the message, for a kept number, again for the
  /// same number, and past the numbers kept.
  @Test func linesAreTheProtocolsEncodingForEveryManagerNumber() {
    var encoded = EncodedLocations(
      fixes: fixes, reduced: false, json: DaemonProtocol.encodeFixes(fixes))
    let numbers = [1, 1, 2] + Array(3...(EncodedLocations.keptLines + 3)) + [1, 12]
    for client in numbers {
      #expect(
        encoded.line(client: client)
          == DaemonProtocol.encode(.locations(client: client, fixes)),
        "manager \(client)")
    }
  }

  /// A kept line is the same buffer each time (the 500 connections of one app with manager 1
  /// share one line), still after numbers past the kept ones were asked for.
  @Test func aKeptLineIsBuiltOnce() {
    var encoded = EncodedLocations(
      fixes: fixes, reduced: false, json: DaemonProtocol.encodeFixes(fixes))
    func address(_ line: [UInt8]) -> UnsafePointer<UInt8>? {
      line.withUnsafeBufferPointer { $0.baseAddress }
    }
    let first = encoded.line(client: 1)
    #expect(address(encoded.line(client: 1)) == address(first))
    for client in 2...(EncodedLocations.keptLines + 3) { _ = encoded.line(client: client) }
    #expect(address(encoded.line(client: 1)) == address(first))
  }
}
