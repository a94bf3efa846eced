/// The work one uid may make the I/O thread do (`requests-per-uid`): a token bucket (Turner's
/// leaky-bucket rate control, as in RFC 2697's single-rate meter) that holds one second's worth
/// of requests and refills at that rate. Each line a connection of the uid sends costs one token
/// (a `hello` `helloCost`), every 4 KiB received one more, and each new connection
/// `connectionCost`; while the bucket is empty, the uid's connections are
/// left out of `poll` (not read, their lines kept for later), so that one uid flooding the daemon
/// is served at its rate and every other uid's requests, and the location deliveries, keep the
/// CPU they need.
struct UIDWorkBudget {
  /// What a new connection costs: accepting it and reading its peer's credentials.
  static let connectionCost = 10.0
  /// What a `hello` costs: the peer's identity read from `/proc` through its pidfd.
  static let helloCost = 10.0
  /// Bytes received per token, on top of a token per line: long and broken lines are work too.
  static let bytesPerToken = 4096.0

  /// Tokens per second, and the most the bucket holds.
  let rate: Double
  private(set) var tokens: Double
  private var updated: Double

  init(rate: Int, now: Double) {
    self.rate = Double(rate)
    tokens = Double(rate)
    updated = now
  }

  /// Adds what the time since the last refill earned, up to one second's worth.
  mutating func refill(now: Double) {
    guard now > updated else { return }
    tokens = min(rate, tokens + (now - updated) * rate)
    updated = now
  }

  /// Whether the uid may be served now.
  var available: Bool { tokens > 0 }

  /// Takes `cost` tokens (the bucket may go below zero: the debt is paid before more is served).
  mutating func spend(_ cost: Double) { tokens -= cost }

  /// Seconds until the bucket has a token again (0 when it has one).
  var secondsUntilAvailable: Double { tokens > 0 ? 0 : (1 - tokens) / rate }
}
