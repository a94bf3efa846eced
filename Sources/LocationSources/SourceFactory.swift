/// Makes source objects from URLs.
package enum SourceFactory {
  /// The source for a URL.
  /// - Parameter accuracy: the strongest `desiredAccuracy` asked for when the source is made
  ///   (metres; negative is "best"): GeoClue's `RequestedAccuracyLevel` follows it.
  package static func make(_ url: SourceURL, accuracy: Double? = nil) -> any LocationSource {
    switch url {
    case .replay(let path, let options):
      return ReplaySource(path: path, options: options)
    case .staticFile(let path):
      return StaticSource(path: path)
    case .gpsd(let endpoint):
      return GPSDSource(endpoint: endpoint)
    case .nmeaSerial(let path, let baud):
      return NMEAStreamSource(serialPath: path, baud: baud)
    case .nmeaTCP(let host, let port):
      return NMEAStreamSource(host: host, port: port)
    case .geoclue:
      guard let accuracy else { return GeoClueSource() }
      return GeoClueSource(accuracyLevel: .forDesiredAccuracy(accuracy))
    case .iioCompass:
      return IIOCompassSource()
    case .bluez(let adapter):
      return BlueZSource(adapter: adapter)
    case .wifi(let interface):
      return WifiSource(interface: interface)
    case .beaconReplay(let path, let options):
      return BeaconReplaySource(path: path, options: options)
    case .ownTracks(let subscription):
      return OwnTracksSource(subscription)
    }
  }
}
