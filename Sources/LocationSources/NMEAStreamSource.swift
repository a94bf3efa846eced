// PLACEHOLDER, replaced by the real source in this session's work (issue 5).
/// Not built yet.
public final class NMEAStreamSource: LocationSource {
  private let url: String
  /// Creates a serial source.
  public init(serialPath: String, baud: Int) { url = SourceURL.nmeaSerial(path: serialPath, baud: baud).text }
  /// Creates a TCP source.
  public init(host: String, port: Int) { url = SourceURL.nmeaTCP(host: host, port: port).text }
  public var descriptor: SourceDescriptor { SourceDescriptor(url: url, nominalAccuracy: 5, power: .high) }
  public func start(context: any SourceContext) {
    context.fail(SourceError(.unavailable, "\(url): not built yet", isPermanent: true))
  }
  public func stop() {}
}
