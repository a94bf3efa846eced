import LocationModel

extension BeaconRecording {
  /// One record as a line of the recording, without its line feed: the members in the order
  /// `time`, `address`, `rssi`, `manufacturer`, companies in increasing order, data in lower-case
  /// hexadecimal.
  ///
  /// The time is written in the shortest form that reads back to the same `Double`. A time that is
  /// not finite is written as `null`, and an RSSI outside ``rssiRange`` as it is: the decoder
  /// reports both, rather than the writer hiding them.
  package static func line(_ record: BeaconRecord) -> String {
    var text = "{\"time\": "
    text += record.time.isFinite ? "\(record.time)" : "null"
    text += ", \"address\": "
    JSONObjectWriter.appendString(record.address, to: &text)
    text += ", \"rssi\": \(record.rssi), \"manufacturer\": {"
    for (index, company) in record.manufacturer.keys.sorted().enumerated() {
      if index > 0 { text += ", " }
      text += "\"\(company)\": \""
      appendHex(record.manufacturer[company] ?? [], to: &text)
      text += "\""
    }
    text += "}}"
    return text
  }

  /// A whole recording: the header as comment lines (`# ` and each of its lines), then one line
  /// per record, each ending in a line feed.
  ///
  /// - Parameters:
  ///   - records: the records, in the order to write them.
  ///   - header: text saying where the recording came from; each line becomes a comment line.
  package static func encode(_ records: [BeaconRecord], header: [String] = []) -> String {
    var text = ""
    for entry in header {
      for line in entry.split(separator: "\n", omittingEmptySubsequences: false) {
        text += line.isEmpty ? "#\n" : "# \(line)\n"
      }
    }
    for record in records {
      text += line(record)
      text += "\n"
    }
    return text
  }

  /// A whole recording of iBeacon advertisements (each as ``BeaconRecord/init(_:)`` makes it),
  /// after the header's comment lines.
  package static func encode(
    advertisements: [BeaconAdvertisement], header: [String] = []
  ) -> String {
    encode(advertisements.map(BeaconRecord.init), header: header)
  }

  /// Appends the bytes in lower-case hexadecimal, two digits each.
  private static func appendHex(_ bytes: [UInt8], to text: inout String) {
    let digits = Array("0123456789abcdef")
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
  }
}
