import Foundation

/// Reads circular regions from GeoJSON (RFC 7946), for `whereami --regions FILE.geojson`.
///
/// The file is a `FeatureCollection` (or a single `Feature`) of `Point` features:
///
/// ```json
/// {"type": "FeatureCollection", "features": [
///   {"type": "Feature", "id": "office",
///    "geometry": {"type": "Point", "coordinates": [2.2945, 48.8584]},
///    "properties": {"radius": 150, "notifyOnExit": false}}]}
/// ```
///
/// Coordinates are `[longitude, latitude]` (RFC 7946, section 3.1.1); a third (altitude) is
/// allowed and ignored. Rules of our own: `properties.radius` (metres, a finite number, not
/// negative) is required; so is an identifier, from the feature's `id`, else `properties.id`,
/// else `properties.identifier`, a non-empty string or a number; identifiers must be unique in the
/// file (CoreLocation replaces a region by identifier, so a duplicate would silently drop one);
/// `notifyOnEntry` and `notifyOnExit` are booleans and default to true. Any feature that breaks a
/// rule fails the whole file, with an error naming the feature's index (from 0).
package enum GeoJSONRegions {
  /// Parses GeoJSON regions.
  ///
  /// - Parameters:
  ///   - data: the file's bytes (UTF-8 JSON).
  ///   - file: the path named in errors.
  /// - Returns: the regions in the order of the features.
  /// - Throws: `FormatError` naming the file: `.malformed` for text that is not JSON (with the
  ///   line when Foundation gives a position) or not GeoJSON; `.missingField` and `.invalidValue`
  ///   for a bad feature, naming its index; `.empty` for a collection without features.
  package static func parse(data: Data, file: String? = nil) throws(FormatError)
    -> [GeoJSONRegion]
  {
    let root: Any
    do {
      root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    } catch {
      let description = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
      throw FormatError(
        .malformed, "not JSON: \(description ?? "\(error)")", file: file,
        line: line(in: data, of: description))
    }
    guard let object = root as? [String: Any] else {
      throw FormatError(.malformed, "the top level is not a JSON object", file: file)
    }
    let features: [Any]
    switch object["type"] as? String {
    case "FeatureCollection":
      guard let list = object["features"] as? [Any] else {
        throw FormatError(
          .missingField, "the FeatureCollection has no \"features\" array", file: file)
      }
      features = list
    case "Feature":
      features = [object]
    case let other:
      let what = other.map { "\"\($0)\"" } ?? "missing"
      throw FormatError(
        .malformed, "the top-level type is \(what); expected \"FeatureCollection\"", file: file)
    }
    if features.isEmpty {
      throw FormatError(.empty, "the FeatureCollection has no features", file: file)
    }
    var regions: [GeoJSONRegion] = []
    regions.reserveCapacity(features.count)
    var firstIndexOfIdentifier: [String: Int] = [:]
    for (index, feature) in features.enumerated() {
      let region = try parseFeature(feature, index: index, file: file)
      if let earlier = firstIndexOfIdentifier[region.identifier] {
        throw FormatError(
          .invalidValue,
          "feature \(index): identifier \"\(region.identifier)\" is already used by feature "
            + "\(earlier)", file: file)
      }
      firstIndexOfIdentifier[region.identifier] = index
      regions.append(region)
    }
    return regions
  }

  /// Reads and parses a GeoJSON regions file.
  ///
  /// - Parameter path: the file to read; named in errors.
  /// - Returns: as ``parse(data:file:)``.
  /// - Throws: `.unreadable` when the file cannot be read; otherwise as ``parse(data:file:)``.
  package static func parse(path: String) throws(FormatError) -> [GeoJSONRegion] {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw FormatError(.unreadable, "cannot read the file", file: path)
    }
    return try parse(data: data, file: path)
  }

  private static func parseFeature(_ value: Any, index: Int, file: String?) throws(FormatError)
    -> GeoJSONRegion
  {
    func fail(_ code: FormatError.Code, _ message: String) -> FormatError {
      FormatError(code, "feature \(index): \(message)", file: file)
    }
    guard let feature = value as? [String: Any] else { throw fail(.malformed, "not an object") }
    guard feature["type"] as? String == "Feature" else {
      throw fail(.malformed, "\"type\" is not \"Feature\"")
    }
    guard let geometry = feature["geometry"] as? [String: Any] else {
      throw fail(.missingField, "no \"geometry\" object")
    }
    guard let geometryType = geometry["type"] as? String else {
      throw fail(.missingField, "the geometry has no \"type\"")
    }
    guard geometryType == "Point" else {
      throw fail(
        .invalidValue, "the geometry is a \(geometryType); only Point features are regions")
    }
    guard let coordinates = geometry["coordinates"] as? [Any], coordinates.count >= 2,
      coordinates.count <= 3
    else {
      throw fail(.invalidValue, "\"coordinates\" is not [longitude, latitude]")
    }
    guard let longitude = number(coordinates[0]), let latitude = number(coordinates[1]) else {
      throw fail(.invalidValue, "a coordinate is not a number")
    }
    guard abs(latitude) <= 90 else { throw fail(.invalidValue, "latitude outside -90...90") }
    guard abs(longitude) <= 180 else {
      throw fail(.invalidValue, "longitude outside -180...180")
    }
    let properties = feature["properties"] as? [String: Any] ?? [:]
    guard let radiusValue = properties["radius"] else {
      throw fail(.missingField, "no \"radius\" property (metres)")
    }
    guard let radius = number(radiusValue), radius >= 0 else {
      throw fail(.invalidValue, "\"radius\" is not a number of metres, 0 or more")
    }
    var identifier: String?
    for (source, key) in [(feature, "id"), (properties, "id"), (properties, "identifier")] {
      guard let raw = source[key], !(raw is NSNull) else { continue }
      guard let text = identifierText(raw), !text.isEmpty else {
        throw fail(.invalidValue, "\"\(key)\" is not a non-empty string or a number")
      }
      identifier = text
      break
    }
    guard let identifier else {
      throw fail(
        .missingField, "no identifier (\"id\", \"properties.id\" or \"properties.identifier\")")
    }
    var flags: [Bool] = []
    for key in ["notifyOnEntry", "notifyOnExit"] {
      guard let raw = properties[key] else {
        flags.append(true)
        continue
      }
      guard let flag = boolean(raw) else {
        throw fail(.invalidValue, "\"\(key)\" is not a boolean")
      }
      flags.append(flag)
    }
    return GeoJSONRegion(
      identifier: identifier, latitude: latitude, longitude: longitude, radius: radius,
      notifyOnEntry: flags[0], notifyOnExit: flags[1])
  }

  /// Whether Foundation decoded the value from `true`/`false` (an NSNumber of C type `char`).
  private static func isBoolean(_ number: NSNumber) -> Bool {
    String(cString: number.objCType) == "c"
  }

  /// A finite JSON number (not a boolean).
  private static func number(_ value: Any) -> Double? {
    guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
    let double = number.doubleValue
    return double.isFinite ? double : nil
  }

  /// A JSON boolean.
  private static func boolean(_ value: Any) -> Bool? {
    guard let number = value as? NSNumber, isBoolean(number) else { return nil }
    return number.boolValue
  }

  /// An identifier from a string or a number (integers without a fraction).
  private static func identifierText(_ value: Any) -> String? {
    if let text = value as? String { return text }
    guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
    let double = number.doubleValue
    guard double.isFinite else { return nil }
    if double == double.rounded(), abs(double) < 1e15 { return String(Int64(double)) }
    return "\(double)"
  }

  /// The line of "around character N" in Foundation's JSON error description, if it has one.
  private static func line(in data: Data, of description: String?) -> Int? {
    guard let description, let range = description.range(of: "character ") else { return nil }
    let digits = description[range.upperBound...].prefix { $0.isNumber }
    guard let offset = Int(digits) else { return nil }
    return 1 + data.prefix(offset).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
  }
}
