import Foundation

@testable import LocationCLI

/// A `BeaconRunner.Outlet` that keeps what the runner printed, how it ended, and the waits it
/// scheduled (fired by hand: the tests never sleep).
@MainActor
final class BeaconOutletRecorder {
  /// The lines printed on standard output.
  var lines: [String] = []
  /// The lines printed on standard error.
  var errors: [String] = []
  /// How the run ended, if it did.
  var ending: (code: WhereAmI.ExitCode, message: String?)?
  /// The scheduled waits, in order: seconds and what runs then.
  var scheduled: [(seconds: TimeInterval, body: @MainActor @Sendable () -> Void)] = []

  /// The outlet that records into this recorder.
  var outlet: BeaconRunner.Outlet {
    BeaconRunner.Outlet(
      print: { self.lines.append($0) }, printError: { self.errors.append($0) },
      finish: { self.ending = ($0, $1) }, schedule: { self.scheduled.append(($0, $1)) })
  }

  /// Runs the last scheduled wait as if its time had come.
  func fireLastWait() {
    scheduled.last?.body()
  }
}
