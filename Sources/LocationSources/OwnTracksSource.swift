import Foundation
import LocationFormats
import LocationModel
import Synchronization

/// `owntracks+mqtt://broker/owntracks/alice/phone`: another device's positions, as it publishes
/// them in OwnTracks' JSON format on an MQTT broker (issue 18), become fixes here: a Raspberry
/// Pi without a receiver in a car can use the driver's phone.
///
/// The rules:
/// - **Class.** Network-class: low power, a nominal 100 m; each fix carries the accuracy the
///   device reported (`acc`; 100 m without one), its time (`tst`), speed (`vel`, km/h), course
///   and altitude, quality `.network` (a relayed position: never learned from as Wi-Fi's GNSS
///   fixes are).
/// - **Fresh only.** A position older than `max-age` (600 s) when it arrives is refused: a
///   broker hands a new subscriber the topic's retained message, which may be hours old.
/// - **Bad input.** A payload that is not a valid OwnTracks message is counted and skipped
///   (`skipped`), as are messages of other types (`transition`, `lwt`, ...): never a crash,
///   never a stop.
/// - **Connection.** Subscribed (QoS 1) at every connection; a broker that cannot be reached, or
///   that refuses the credentials, is a non-permanent `SourceError` (`.disconnected`,
///   `.denied`) once per change, retried with backoff (`MQTTClient`). A credentials file that
///   cannot be read, or a TLS setting libmosquitto refuses, is a permanent `.configuration`.
package final class OwnTracksSource: LocationSource {
  private struct Run {
    var generation = 0
    var client: MQTTClient?
    var lastProblem: String?
  }

  package let descriptor: SourceDescriptor
  /// What it subscribes to.
  package let subscription: OwnTracksSubscription
  private let run = Mutex(Run())
  private let counters = Mutex((accepted: 0, stale: 0, skipped: 0))

  /// Creates a source (nothing connects before `start`).
  package init(_ subscription: OwnTracksSubscription) {
    self.subscription = subscription
    descriptor = SourceDescriptor(
      url: SourceURL.ownTracks(subscription).text, nominalAccuracy: 100, power: .low)
  }

  /// Positions accepted, refused as stale, and messages skipped (malformed or not a location).
  package var counts: (accepted: Int, stale: Int, skipped: Int) { counters.withLock { $0 } }

  package func start(context: any SourceContext) {
    let generation = run.withLock { run -> Int in
      run.generation += 1
      run.lastProblem = nil
      return run.generation
    }
    let configuration: MQTTClient.Configuration
    do {
      configuration = try Self.configuration(subscription)
    } catch {
      context.fail(error)
      return
    }
    let client: MQTTClient
    do {
      client = try MQTTClient(configuration) { [weak self] event in
        self?.handle(event, generation: generation, context)
      }
    } catch {
      context.fail(
        SourceError(
          .configuration, "\(descriptor.url): \(error.message)", isPermanent: true))
      return
    }
    let current = run.withLock { run -> Bool in
      guard run.generation == generation else { return false }
      run.client = client
      return true
    }
    guard current else { return }
    client.start()
  }

  package func stop() {
    let client = run.withLock { run -> MQTTClient? in
      run.generation += 1
      defer { run.client = nil }
      return run.client
    }
    client?.stop()
  }

  private func handle(_ event: MQTTClient.Event, generation: Int, _ context: any SourceContext) {
    let client = run.withLock { $0.generation == generation ? $0.client : nil }
    guard let client else { return }
    switch event {
    case .connected:
      run.withLock { $0.lastProblem = nil }
      do {
        try client.subscribe(subscription.topic, qos: 1)
      } catch {
        report(
          SourceError(.unavailable, "\(descriptor.url): \(error.message)", isPermanent: false),
          context)
      }
    case .refused(let reason):
      report(
        SourceError(
          .denied, "\(descriptor.url): the broker refused the connection (\(reason))",
          isPermanent: false), context)
    case .disconnected(let reason):
      report(
        SourceError(.disconnected, "\(descriptor.url): \(reason)", isPermanent: false), context)
    case .acknowledged:
      break
    case .message(_, let payload):
      receive(payload, context)
    }
  }

  /// A failure, told once until the connection comes back.
  private func report(_ error: SourceError, _ context: any SourceContext) {
    let new = run.withLock { run -> Bool in
      // The end of a refused connection says nothing new.
      if run.lastProblem != nil, error.code == .disconnected { return false }
      guard run.lastProblem != error.message else { return false }
      run.lastProblem = error.message
      return true
    }
    if new { context.fail(error) }
  }

  private func receive(_ payload: [UInt8], _ context: any SourceContext) {
    // `decode` has checked the coordinate already (finite, in range).
    guard case .location(let location) = try? OwnTracksMessage.decode(payload) else {
      counters.withLock { $0.skipped += 1 }
      return
    }
    let fix = location.fix(source: descriptor.url)
    guard fix.hasValidCoordinate else {
      counters.withLock { $0.skipped += 1 }
      return
    }
    guard context.now.wall - fix.time <= subscription.maximumAge else {
      counters.withLock { $0.stale += 1 }
      return
    }
    counters.withLock { $0.accepted += 1 }
    context.emit(fix)
  }

  /// The MQTT settings of a subscription: the credentials read from their file.
  static func configuration(_ subscription: OwnTracksSubscription) throws(SourceError)
    -> MQTTClient.Configuration
  {
    var configuration = MQTTClient.Configuration(
      host: subscription.host, port: Int32(subscription.port),
      clientID: "corelocation-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    if subscription.tls {
      configuration.tls = .init(
        caFile: subscription.caFile ?? OwnTracksSubscription.systemAuthorities)
    }
    if let path = subscription.credentialsFile {
      guard let text = try? String(contentsOfFile: path, encoding: .utf8),
        let line = text.split(whereSeparator: \.isNewline).first,
        let colon = line.firstIndex(of: ":")
      else {
        throw SourceError(
          .configuration, "\(path): cannot be read, or its first line is not user:password",
          isPermanent: true)
      }
      configuration.username = String(line[..<colon])
      configuration.password = String(line[line.index(after: colon)...])
    }
    return configuration
  }
}
