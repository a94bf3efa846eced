import Foundation
import LocationControl
import Testing

@Suite struct ControlOptionsTests {
  @Test(arguments: [
    (["status"], ControlOptions(command: .status)),
    (["status", "--json"], ControlOptions(command: .status, json: true)),
    (["--json", "apps"], ControlOptions(command: .apps, json: true)),
    (["sources", "-j"], ControlOptions(command: .sources, json: true)),
    (["regions", "org.example.App"], ControlOptions(command: .regions(app: "org.example.App"))),
    (["regions", "--", "-odd-app"], ControlOptions(command: .regions(app: "-odd-app"))),
    (["agent"], ControlOptions(command: .agent)),
    (["services", "on"], ControlOptions(command: .services(enabled: true))),
    (["services", "OFF"], ControlOptions(command: .services(enabled: false))),
    (
      ["authorize", "/usr/bin/app", "always"],
      ControlOptions(command: .authorize(app: "/usr/bin/app", grant: .always, approximate: false))
    ),
    (
      ["authorize", "org.x", "when-in-use", "--approximate"],
      ControlOptions(command: .authorize(app: "org.x", grant: .whenInUse, approximate: true))
    ),
    (
      ["authorize", "org.x", "denied"],
      ControlOptions(command: .authorize(app: "org.x", grant: .denied, approximate: false))
    ),
    (
      ["authorize", "org.x", "reset"],
      ControlOptions(command: .authorize(app: "org.x", grant: .reset, approximate: false))
    ),
    (["--socket", "/tmp/s", "apps"], ControlOptions(command: .apps, socket: "/tmp/s")),
    (["apps", "--socket=/tmp/s"], ControlOptions(command: .apps, socket: "/tmp/s")),
    (["--system", "status"], ControlOptions(command: .status, socket: "/run/locationd/socket")),
    (["--help"], ControlOptions(command: .help)),
    (["-h", "apps"], ControlOptions(command: .help)),
    (["help"], ControlOptions(command: .help)),
  ])
  func parses(arguments: [String], expected: ControlOptions) throws {
    #expect(try ControlOptions.parse(arguments) == expected)
  }

  @Test(arguments: [
    ([], "no command given"),
    (["launch"], "unknown command 'launch'"),
    (["status", "--verbose"], "unknown option '--verbose'"),
    (["status", "extra"], "unexpected argument 'extra'"),
    (["regions"], "usage: locationctl regions APP"),
    (["authorize", "org.x"], "usage: locationctl authorize APP"),
    (["authorize", "org.x", "sometimes"], "not 'sometimes'"),
    (["authorize", "org.x", "denied", "--approximate"], "--approximate applies to always"),
    (["apps", "--approximate"], "--approximate applies to authorize only"),
    (["services", "maybe"], "services takes on or off"),
    (["services"], "usage: locationctl services on|off"),
    (["--socket"], "--socket needs a path"),
    (["--socket", "/tmp/s", "--system", "status"], "cannot be used together"),
  ])
  func rejects(arguments: [String], message: String) {
    #expect {
      _ = try ControlOptions.parse(arguments)
    } throws: { error in
      (error as? ControlOptions.UsageError)?.message.contains(message) == true
    }
  }

  @Test(arguments: [
    (["CORELOCATION_DAEMON_SOCKET": "/tmp/x", "XDG_RUNTIME_DIR": "/run/user/7"], "/tmp/x"),
    (["XDG_RUNTIME_DIR": "/run/user/7"], "/run/user/7/locationd/socket"),
    (["CORELOCATION_DAEMON_SOCKET": "", "XDG_RUNTIME_DIR": "/r"], "/r/locationd/socket"),
    ([:], "/run/user/\(getuid())/locationd/socket"),
  ])
  func defaultSocket(environment: [String: String], expected: String) {
    #expect(ControlOptions.defaultSocket(environment: environment) { _ in false } == expected)
  }

  /// The user daemon's socket (where `locationd` puts it) unless only the system daemon runs.
  @Test func systemSocketWhenOnlyTheSystemDaemonRuns() {
    let environment = ["XDG_RUNTIME_DIR": "/r"]
    #expect(
      ControlOptions.defaultSocket(environment: environment) { $0 == "/run/locationd/socket" }
        == "/run/locationd/socket")
    #expect(
      ControlOptions.defaultSocket(environment: environment) { _ in true }
        == "/r/locationd/socket")
  }

  @Test func socketOptionWinsOverTheEnvironment() throws {
    let options = try ControlOptions.parse(["--socket", "/tmp/mine", "apps"])
    #expect(options.socketPath(environment: ["CORELOCATION_DAEMON_SOCKET": "/x"]) == "/tmp/mine")
  }

  @Test func helpNamesEveryCommandAndExitStatus() {
    for word in [
      "status", "apps", "authorize", "regions", "sources", "services", "agent", "--json",
      "--socket", "--system", "--approximate", "0 success", "1 the daemon", "2 usage", "3 cannot",
    ] {
      #expect(ControlOptions.helpText.contains(word), "help lacks \(word)")
    }
  }
}
