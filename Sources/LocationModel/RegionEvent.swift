/// Something the monitor reports about one region after a fix, an `add` or a `requestState`.
///
/// The monitor carries the region's `notifyOnEntry` / `notifyOnExit` flags in every event; whether
/// an entry or exit is delivered to the app is the caller's decision (`shouldNotify` says what
/// Apple's rule is). Determinations are always delivered (`didDetermineState`).
package struct RegionEvent: Sendable, Equatable, Hashable {
  /// What happened.
  package enum Kind: Sendable, Equatable, Hashable {
    /// The region's state is now this (the first decisive fix, a change, or an answer to
    /// `requestState`).
    case determined(RegionState)
    /// The device crossed into the region (outside to inside).
    case entered
    /// The device crossed out of the region (inside to outside).
    case exited
  }

  /// The region's identifier.
  package var identifier: String
  /// What happened.
  package var kind: Kind
  /// The region's `notifyOnEntry` flag when the event was made.
  package var notifyOnEntry: Bool
  /// The region's `notifyOnExit` flag when the event was made.
  package var notifyOnExit: Bool
  /// When it happened, seconds since 1970, when the event comes from elsewhere (a daemon that
  /// kept it while the app was away); nil for the engine's own events, which happen now.
  package var date: Double?

  /// Creates an event.
  /// - Parameters:
  ///   - identifier: The region's identifier.
  ///   - kind: What happened.
  ///   - notifyOnEntry: The region's `notifyOnEntry` flag.
  ///   - notifyOnExit: The region's `notifyOnExit` flag.
  ///   - date: When it happened, seconds since 1970, if not now.
  package init(
    identifier: String, kind: Kind, notifyOnEntry: Bool, notifyOnExit: Bool, date: Double? = nil
  ) {
    self.identifier = identifier
    self.kind = kind
    self.notifyOnEntry = notifyOnEntry
    self.notifyOnExit = notifyOnExit
    self.date = date
  }

  /// Whether the app is told: entries only with `notifyOnEntry`, exits only with `notifyOnExit`,
  /// determinations always.
  package var shouldNotify: Bool {
    switch kind {
    case .determined: return true
    case .entered: return notifyOnEntry
    case .exited: return notifyOnExit
    }
  }
}
