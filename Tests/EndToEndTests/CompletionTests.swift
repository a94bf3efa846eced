import Foundation
import TestSupport
import Testing

/// The shell completions in `dist/completions`: each shell reads its file without a syntax error
/// (`bash -n`, `zsh -n`, `fish -n`), every option and command of the programs' `--help` is
/// offered by each, and bash and fish complete what they should: options, commands, values,
/// source URL schemes and paths, and the app identifiers a running locationd knows.
@Suite(.serialized) struct CompletionTests {
  static let directory = Paths.root.appendingPathComponent("dist/completions")
  static let bashFile = directory.appendingPathComponent("bash/corelocation").path
  static let zshFile = directory.appendingPathComponent("zsh/_corelocation").path
  static let fishFiles = ["whereami", "locationd", "locationctl"].map {
    directory.appendingPathComponent("fish/\($0).fish").path
  }
  static let programs = ["whereami", "locationd", "locationctl"]

  // MARK: Syntax

  @Test(
    .enabled(
      if: RealComponents.runnable(RealComponents.bash, RealComponents.zsh, RealComponents.fish),
      "needs bash, zsh and fish (scripts/setup-debian.sh installs them)"))
  func shellsReadTheirFiles() throws {
    guard
      RealComponents.require(
        RealComponents.bash, RealComponents.zsh, RealComponents.fish,
        install: "install Debian's zsh and fish (scripts/setup-debian.sh)")
    else { return }
    let checks =
      [(RealComponents.bash, Self.bashFile), (RealComponents.zsh, Self.zshFile)]
      + Self.fishFiles.map { (RealComponents.fish, $0) }
    for (shell, file) in checks {
      let result = try runProgram(shell, ["-n", file], environment: ["PATH": "/usr/bin:/bin"])
      #expect(result.status == 0 && result.stderr.isEmpty, "\(shell) -n \(file): \(result.stderr)")
    }
  }

  // MARK: Coverage of --help

  @Test(arguments: programs)
  func everyOptionAndCommandIsOffered(program: String) throws {
    guard let binary = BuiltPrograms.path(program) else {
      try RealComponents.unavailable(BuiltPrograms.missingMessage(program))
      return
    }
    let help = try ProgramHelp.of(binary)
    let bash = try Self.function(
      program, in: String(contentsOfFile: Self.bashFile, encoding: .utf8))
    let zsh = try Self.function(
      "corelocation_" + program, in: String(contentsOfFile: Self.zshFile, encoding: .utf8))
    let fish = try String(
      contentsOfFile: Self.directory.appendingPathComponent("fish/\(program).fish").path,
      encoding: .utf8)
    for option in help.options {
      let words = bash.split(whereSeparator: { " \t\n'|)".contains($0) })
      let inBash = words.contains(Substring(option))
      let inZsh = zsh.contains(option)
      let fishSpelling =
        option.hasPrefix("--") ? "-l \(option.dropFirst(2))" : "-s \(option.dropFirst())"
      let inFish = fish.contains(fishSpelling + " ")
      #expect(inBash, "the bash completion of \(program) lacks \(option)")
      #expect(inZsh, "the zsh completion of \(program) lacks \(option)")
      #expect(inFish, "the fish completion of \(program) lacks \(option)")
    }
    for command in help.commands {
      let inBash = bash.contains(" \(command) ") || bash.contains("'\(command) ")
      let inZsh = zsh.contains("'\(command):")
      let inFish = fish.contains("-a \(command) ")
      #expect(inBash && inZsh && inFish, "a completion of \(program) lacks \(command)")
    }
  }

  /// The text of the shell function `_NAME` in a completion file, up to the next function.
  static func function(_ name: String, in text: String) throws -> String {
    guard let start = text.range(of: "\n_\(name)()") else {
      throw TestFailure("no function _\(name) in the completion")
    }
    let rest = text[start.upperBound...]
    let end = rest.range(of: "\n_")?.lowerBound ?? rest.endIndex
    return String(rest[..<end])
  }

  // MARK: bash

  /// Completes `line` (the cursor at its end) with the bash completion, as readline would: words
  /// split at blanks and at `:` (which is in COMP_WORDBREAKS), then the completion function of
  /// the command. Prints the candidates one a line.
  static let bashHarness = """
    source "$1"
    source "$2"
    COMP_LINE=$3
    COMP_POINT=${#COMP_LINE}
    COMP_WORDS=()
    for word in $COMP_LINE; do
      while [[ $word == *:* ]]; do COMP_WORDS+=("${word%%:*}" ":"); word=${word#*:}; done
      COMP_WORDS+=("$word")
    done
    [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    # compopt complains outside a real completion; what it sets is not checked here.
    compopt() { :; }
    "_${COMP_WORDS[0]}" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\\n' "${COMPREPLY[@]}"
    """

  static func bashComplete(_ line: String, path: String = "/usr/bin:/bin") throws -> [String] {
    let result = try runProgram(
      RealComponents.bash,
      ["-c", bashHarness, "harness", RealComponents.bashCompletion, bashFile, line],
      environment: ["PATH": path, "HOME": NSTemporaryDirectory()])
    #expect(result.stderr.isEmpty, "bash completing '\(line)': \(result.stderr)")
    return result.lines.filter { !$0.isEmpty }
  }

  static let bashCases: [(line: String, expected: [String])] = [
    ("whereami --wa", ["--watch"]),
    ("whereami --source re", ["replay://"]),
    // After `replay:` readline completes the word after the colon.
    ("whereami --source replay:///us", ["///usr/"]),
    ("whereami --source nmea+", ["nmea+tcp://"]),
    ("whereami --source geo", ["geoclue"]),
    ("whereami --accuracy 1", ["100m", "10m", "1km"]),
    ("whereami -f %h_", ["%h_accuracy"]),
    ("locationd --po", ["--policy"]),
    ("locationd --policy ", ["deny", "grant"]),
    ("locationd --source st", ["static://"]),
    (
      "locationctl ",
      [
        "agent", "apps", "authorize", "export", "help", "regions", "services", "sources", "status",
        "wifi",
      ]
    ),
    ("locationctl export --since ", ["1h", "24h", "30d", "7d", "now"]),
    ("locationctl export --since 7d --g", ["--geojson", "--gpx"]),
    ("locationctl --json s", ["services", "sources", "status"]),
    ("locationctl services ", ["off", "on"]),
    ("locationctl authorize some.app ", ["always", "denied", "reset", "when-in-use"]),
    ("locationctl --sy", ["--system"]),
  ]

  @Test(
    .enabled(
      if: RealComponents.runnable(files: RealComponents.bashCompletion),
      "needs bash-completion (scripts/setup-debian.sh installs it)"),
    arguments: bashCases)
  func bashCompletes(line: String, expected: [String]) throws {
    guard FileManager.default.fileExists(atPath: RealComponents.bashCompletion) else {
      Issue.record("\(RealComponents.bashCompletion) is missing: install bash-completion")
      return
    }
    #expect(try Self.bashComplete(line).sorted() == expected.sorted(), "completing '\(line)'")
  }

  // MARK: fish

  static func fishComplete(_ line: String, path: String = "/usr/bin:/bin") throws -> [String] {
    let program = String(line.prefix { $0 != " " })
    let file = Self.directory.appendingPathComponent("fish/\(program).fish").path
    let result = try runProgram(
      RealComponents.fish,
      ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", file, line],
      environment: ["PATH": path, "HOME": NSTemporaryDirectory()])
    #expect(result.stderr.isEmpty, "fish completing '\(line)': \(result.stderr)")
    // Candidates come as CANDIDATE<TAB>DESCRIPTION.
    return result.lines.map { String($0.prefix { $0 != "\t" }) }
  }

  static let fishCases: [(line: String, expected: [String])] = [
    ("whereami --wa", ["--watch"]),
    ("whereami --source re", ["replay://"]),
    ("whereami --source replay:///us", ["replay:///usr/"]),
    ("whereami --accuracy 1", ["100m", "10m", "1km"]),
    ("locationd --policy ", ["deny", "grant"]),
    ("locationctl s", ["services", "sources", "status"]),
    ("locationctl authorize some.app ", ["always", "denied", "reset", "when-in-use"]),
  ]

  @Test(
    .enabled(
      if: RealComponents.runnable(RealComponents.fish),
      "needs fish (scripts/setup-debian.sh installs it)"),
    arguments: fishCases)
  func fishCompletes(line: String, expected: [String]) throws {
    guard RealComponents.require(RealComponents.fish) else { return }
    #expect(try Self.fishComplete(line).sorted() == expected.sorted(), "completing '\(line)'")
  }

  // MARK: App identifiers from a running daemon

  /// `locationctl authorize` and `regions` complete the apps the daemon on the socket named on
  /// the command line knows, through the built `locationctl` found on PATH.
  @Test(
    .enabled(
      if: RealComponents.isCI
        || (BuiltPrograms.locationd != nil && BuiltPrograms.locationctl != nil
          && RealComponents.exists(RealComponents.fish)
          && FileManager.default.fileExists(atPath: RealComponents.bashCompletion)),
      "needs the built locationd and locationctl, fish and bash-completion"))
  func appIdentifiersComeFromTheDaemon() throws {
    guard let locationctl = BuiltPrograms.locationctl, BuiltPrograms.locationd != nil else {
      throw TestFailure(BuiltPrograms.missingMessage("locationctl"))
    }
    guard RealComponents.require(RealComponents.fish) else { return }
    let directory = try LocationdProcess.makeDirectory()
    let socket = LocationdProcess.socket(directory)
    let daemon = try LocationdProcess(
      LocationdProcess.arguments(directory, sources: []),
      environment: [
        "HOME": directory, "XDG_RUNTIME_DIR": directory, "XDG_STATE_HOME": directory + "/state",
        "XDG_CONFIG_HOME": directory + "/config", "PATH": "/usr/bin:/bin",
      ], directory: directory)
    defer { daemon.stop() }
    for app in ["org.example.Maps", "/usr/bin/my tracker"] {
      let result = try runProgram(
        locationctl, ["--socket", socket, "authorize", app, "always"],
        environment: ["PATH": "/usr/bin:/bin"])
      try #require(result.status == 0, "\(result.stderr)")
    }
    let path = URL(fileURLWithPath: locationctl).deletingLastPathComponent().path + ":/usr/bin:/bin"
    #expect(
      try Self.bashComplete("locationctl --socket \(socket) regions ", path: path).sorted()
        == ["/usr/bin/my\\ tracker", "org.example.Maps"])
    #expect(
      try Self.bashComplete("locationctl authorize --socket=\(socket) org", path: path)
        == ["org.example.Maps"])
    #expect(
      try Self.fishComplete("locationctl --socket \(socket) regions ", path: path).sorted()
        == ["/usr/bin/my tracker", "org.example.Maps"])
    // No daemon on the socket: nothing, and no error.
    #expect(
      try Self.bashComplete("locationctl --socket \(directory)/none regions ", path: path) == [])
  }
}
