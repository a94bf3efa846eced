import Geodesy
import LocationFormats
import LocationModel
import Synchronization

/// `static:///etc/geolocation`: a fixed position from GeoClue's four-line file (latitude, longitude,
/// altitude in metres, accuracy radius in metres; `#` starts a comment).
///
/// The file is read when the source starts; the position is emitted at once, stamped with the
/// current time, and again (the same position, newly stamped) every `interval` seconds (60) while
/// the source runs, so that a client that starts later, or asks again, is answered. Changes to the
/// file take effect when the source starts again. Its nominal accuracy is the file's accuracy.
package final class StaticSource: LocationSource {
  /// Seconds between repeated emissions.
  package static let interval = 60.0

  package let descriptor: SourceDescriptor
  private let path: String
  private let state = Mutex<(generation: Int, pending: (any Cancellable)?)>((0, nil))

  /// Creates a source for the file at `path`. The nominal accuracy is read from the file if it can
  /// be parsed now; otherwise errors surface when the source starts.
  package init(path: String) {
    self.path = path
    let accuracy = (try? Self.read(path: path, time: 0))?.horizontalAccuracy ?? 0
    self.descriptor = SourceDescriptor(
      url: SourceURL.staticFile(path: path).text, nominalAccuracy: accuracy, power: .none)
  }

  /// Reads and parses the file.
  static func read(path: String, time: Double) throws(SourceError) -> Fix {
    let bytes: [UInt8]
    do {
      bytes = try readFile(path)
    } catch {
      throw SourceError(
        .unavailable, "static: cannot read \(path): \(error.message)", isPermanent: true)
    }
    do {
      var fix = try GeolocationFile.parse(
        text: String(decoding: bytes, as: UTF8.self), file: path, time: time)
      fix.quality = .manual
      return fix
    } catch {
      throw SourceError(.malformed, "static: \(error.description)", isPermanent: true)
    }
  }

  package func start(context: any SourceContext) {
    let generation = state.withLock { state -> Int in
      state.generation += 1
      return state.generation
    }
    let fix: Fix
    do {
      fix = try Self.read(path: path, time: context.now.wall)
    } catch {
      context.fail(error)
      return
    }
    emit(fix, context, generation: generation)
  }

  private func emit(_ fix: Fix, _ context: any SourceContext, generation: Int) {
    var stamped = fix
    stamped.time = context.now.wall
    context.emit(stamped)
    let token = context.schedule(after: Self.interval) { [self] in
      emit(fix, context, generation: generation)
    }
    let stale = state.withLock { state -> Bool in
      guard state.generation == generation else { return true }
      state.pending = token
      return false
    }
    if stale { token.cancel() }
  }

  package func stop() {
    state.withLock { state -> (any Cancellable)? in
      state.generation += 1
      defer { state.pending = nil }
      return state.pending
    }?.cancel()
  }
}
