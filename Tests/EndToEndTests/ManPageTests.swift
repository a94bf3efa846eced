import Foundation
import TestSupport
import Testing

/// The man pages (`docs/man/*.scd`, scdoc sources rendered by `make man`): each program's
/// `--help` and its page agree on every option, command and exit status, and every page renders
/// with scdoc into roff that `groff -ww -z -man` takes without a warning.
@Suite struct ManPageTests {
  /// The pages, by the file name of their source.
  static let pages = [
    "whereami.1", "locationctl.1", "locationd.8", "locationd.conf.5", "corelocation-sources.7",
  ]

  /// The page of each program.
  static let programPages = [
    ("whereami", "whereami.1"), ("locationctl", "locationctl.1"), ("locationd", "locationd.8"),
  ]

  static func source(_ page: String) throws -> String {
    try String(
      contentsOf: Paths.root.appendingPathComponent("docs/man/\(page).scd"), encoding: .utf8)
  }

  /// The text of the section `# NAME` of an scdoc source, up to the next section.
  static func section(_ name: String, of source: String) -> String {
    guard let start = source.range(of: "\n# \(name)\n") else { return "" }
    let rest = source[start.upperBound...]
    let end = rest.range(of: "\n# ")?.lowerBound ?? rest.endIndex
    return String(rest[..<end])
  }

  @Test func everyPageHasASource() throws {
    let directory = Paths.root.appendingPathComponent("docs/man").path
    let sources = try FileManager.default.contentsOfDirectory(atPath: directory)
      .filter { $0.hasSuffix(".scd") }.sorted()
    #expect(sources == Self.pages.map { $0 + ".scd" }.sorted())
    for page in Self.pages {
      // The first line names the page as its file does: `whereami(1) ...`.
      let name = page.split(separator: ".").dropLast().joined(separator: ".")
      let section = page.split(separator: ".").last ?? ""
      #expect(try Self.source(page).hasPrefix("\(name)(\(section)) "), "\(page)")
    }
  }

  @Test(arguments: programPages)
  func helpAndManPageAgree(program: String, page: String) throws {
    guard let binary = BuiltPrograms.path(program) else {
      try RealComponents.unavailable(BuiltPrograms.missingMessage(program))
      return
    }
    let help = try ProgramHelp.of(binary)
    let source = try Self.source(page)
    #expect(!help.options.isEmpty && !help.exitStatuses.isEmpty, "\(program) --help unread")
    // (Booleans first: an expectation on `source.contains` would print the whole page.)
    for option in help.options {
      let documented = source.contains("*\(option)*")
      #expect(documented, "\(page) does not document \(option)")
    }
    let commands = Self.section("COMMANDS", of: source)
    for command in help.commands {
      let documented = commands.contains("\n*\(command)*")
      #expect(documented, "\(page) does not document \(command)")
    }
    let statuses = Self.section("EXIT STATUS", of: source)
    let documented = statuses.matches(of: #/\n\*(\d+)\*\n/#).compactMap { Int($0.1) }
    #expect(documented == help.exitStatuses, "\(page)'s EXIT STATUS against --help")
    // And the other way: no option in the page's OPTIONS section that --help does not know.
    let described = Self.section("OPTIONS", of: source).split(separator: "\n")
      .filter { $0.hasPrefix("*-") }
      .flatMap { line in line.matches(of: #/\*(-[^*]+)\*/#).map { String($0.1) } }
    for option in described {
      #expect(help.options.contains(option), "\(page) documents \(option), --help does not")
    }
  }

  @Test(
    .enabled(
      if: RealComponents.runnable(RealComponents.scdoc, RealComponents.groff),
      "needs scdoc and groff (scripts/setup-debian.sh installs them)"),
    arguments: pages)
  func rendersWithoutWarnings(page: String) throws {
    guard
      RealComponents.require(
        RealComponents.scdoc, RealComponents.groff,
        install: "install Debian's scdoc and groff-base (scripts/setup-debian.sh)")
    else { return }
    let scdoc = try runProgram(RealComponents.scdoc, [], input: try Self.source(page))
    #expect(scdoc.status == 0, "scdoc \(page): \(scdoc.stderr)")
    #expect(scdoc.stdout.contains(".TH "))
    let groff = try runProgram(RealComponents.groff, ["-ww", "-z", "-man"], input: scdoc.stdout)
    #expect(groff.status == 0 && groff.stderr.isEmpty, "groff -ww -z -man \(page): \(groff.stderr)")
    // What man shows (groff's text output) still names every option of the page.
    let text = try runProgram(
      RealComponents.groff, ["-man", "-Tutf8", "-P", "-cbou", "-rLL=200n"], input: scdoc.stdout)
    for option in try Self.source(page).matches(of: #/\*(--[a-z-]+)\*/#).map({ String($0.1) }) {
      let rendered = text.stdout.contains(option)
      #expect(rendered, "\(page) renders without \(option)")
    }
  }
}
