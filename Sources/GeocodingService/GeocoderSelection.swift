import Foundation
import Geocoding

/// Which geocoder a process uses, chosen once from its environment.
///
/// `CORELOCATION_GEOCODER` unset, empty or `offline`: the offline gazetteer alone. An `http` or
/// `https` URL: that Nominatim server, falling back to the offline gazetteer when it does not
/// answer (see `NominatimGeocoder`). Anything else: the offline gazetteer, and a note on standard
/// error. `CORELOCATION_GAZETTEER` names another gazetteer file (`Gazetteer.candidatePaths`).
package enum GeocoderSelection {
  /// The geocoder for an environment.
  ///
  /// - Parameter environment: The process environment.
  /// - Returns: The geocoder to use.
  package static func choose(environment: [String: String]) -> any PlaceGeocoder {
    let offline = OfflineGeocoder()
    let setting = environment["CORELOCATION_GEOCODER"]?.trimmingCharacters(in: .whitespaces) ?? ""
    if setting.isEmpty || setting == "offline" { return offline }
    guard let url = URL(string: setting), let scheme = url.scheme?.lowercased(),
      scheme == "http" || scheme == "https", url.host != nil
    else {
      FileHandle.standardError.write(
        Data(
          "CoreLocation: CORELOCATION_GEOCODER is not an http(s) URL; using the offline gazetteer\n"
            .utf8))
      return offline
    }
    return NominatimGeocoder(
      server: url, fallback: offline, userAgent: NominatimGeocoder.defaultUserAgent())
  }

  /// The process's geocoder, chosen at first use.
  package static let live: any PlaceGeocoder = choose(
    environment: ProcessInfo.processInfo.environment)
}
