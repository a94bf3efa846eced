import Foundation
import TestSupport

/// What a program's `--help` promises, read from its text: the options, the commands (for
/// `locationctl`) and the exit statuses. The man pages and the shell completions must cover all
/// of them; the tests that check so read the help through this.
struct ProgramHelp {
  /// Every option named in the usage line and the OPTIONS and COMMANDS sections (`--watch`,
  /// `-w`), in order, without repeats.
  var options: [String] = []
  /// The commands of the COMMANDS section (`status`, `authorize`, ...).
  var commands: [String] = []
  /// The exit statuses of the EXIT STATUS section.
  var exitStatuses: [Int] = []

  /// Reads a help text: sections start with a heading in capitals ending in `:` at the start of
  /// a line (`OPTIONS:`); the usage line starts with `USAGE:`.
  init(_ text: String) {
    var section = ""
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
      if let first = line.first, first.isUppercase, let colon = line.firstIndex(of: ":"),
        line[..<colon].allSatisfy({ $0.isUppercase || $0 == " " })
      {
        section = String(line[..<colon])
        if section == "USAGE" { add(options: Self.optionWords(in: line)) }
        continue
      }
      switch section {
      case "OPTIONS":
        add(options: Self.optionWords(in: line))
      case "COMMANDS":
        add(options: Self.optionWords(in: line))
        if line.hasPrefix("  "), !line.hasPrefix("   "),
          let word = line.split(separator: " ").first, word.allSatisfy(\.isLetter)
        {
          commands.append(String(word))
        }
      case "EXIT STATUS":
        if let match = line.firstMatch(of: #/^\s+(\d+) /#), let status = Int(match.1) {
          exitStatuses.append(status)
        }
      default:
        continue
      }
    }
  }

  private mutating func add(options words: [String]) {
    for word in words where !options.contains(word) { options.append(word) }
  }

  /// The words of `line` that are options: `-x` or `--name`, cut at brackets, commas, bars and
  /// `=`, so that `[--format FORMAT | --json]` gives `--format` and `--json`. `Ctrl-D` and
  /// `when-in-use` are not options.
  static func optionWords(in line: String) -> [String] {
    let separators = Set<Character>(" \t[](),|=")
    return line.split(whereSeparator: { separators.contains($0) }).map(String.init).filter {
      word in
      guard word.hasPrefix("-") else { return false }
      let name = word.drop { $0 == "-" }
      return word.count - name.count <= 2 && name.first?.isLetter == true
        && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
    }
  }

  /// The help of the built program `name` (`whereami`, `locationd`, `locationctl`).
  static func of(_ program: String) throws -> ProgramHelp {
    let result = try runProgram(program, ["--help"], environment: ["PATH": "/usr/bin:/bin"])
    guard result.status == 0, !result.stdout.isEmpty else {
      throw TestFailure("\(program) --help: status \(result.status), \(result.stderr)")
    }
    return ProgramHelp(result.stdout)
  }
}
