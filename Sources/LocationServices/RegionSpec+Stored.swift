import LocationModel
import LocationProtocol

extension RegionSpec {
  /// The store's `extra` column for this region: `{"beacon":{"uuid":…,"major":…,"minor":…}}` for a
  /// beacon region (the column holds what later kinds of region add), nil for a circle.
  var storedExtra: String? {
    guard let beacon else { return nil }
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("beacon")
    beacon.wireEncode(into: &writer)
    writer.endObject()
    return String(decoding: writer.bytes, as: UTF8.self)
  }

  /// The beacon constraint an `extra` column holds, or nil (none, or a form this version does not
  /// read: the region is then a circle, as it was stored).
  static func beacon(fromStored extra: String?) -> BeaconConstraint? {
    guard let extra, case .object(let members) = try? DaemonJSON.parse(Array(extra.utf8)) else {
      return nil
    }
    let coder = WireCoder(decoding: members)
    guard let json = members["beacon"] else { return nil }
    return try? BeaconConstraint.wireDecode(json, key: "beacon", in: coder)
  }
}
