// PLACEHOLDER, replaced by the real source in this session's work (issue 5).
/// Not built yet.
public final class GeoClueSource: LocationSource {
  private let url: String
  /// Creates the source.
  public init() { url = "geoclue" }
  public var descriptor: SourceDescriptor { SourceDescriptor(url: url, nominalAccuracy: 5, power: .high) }
  public func start(context: any SourceContext) {
    context.fail(SourceError(.unavailable, "\(url): not built yet", isPermanent: true))
  }
  public func stop() {}
  /// Whether GeoClue is on the system bus.
  public static func isOnSystemBus() -> Bool { false }
}
