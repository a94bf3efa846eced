/// Makes source objects from URLs.
public enum SourceFactory {
  /// The source for a URL.
  public static func make(_ url: SourceURL) -> any LocationSource {
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
      return GeoClueSource()
    case .iioCompass:
      return IIOCompassSource()
    }
  }
}
