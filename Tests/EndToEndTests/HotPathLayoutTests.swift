import Foundation
import TestSupport
import Testing

/// The installable program's code layout (Makefile, `LAYOUT`; `docs/performance.md`, "Latency"):
/// the functions that `Data/hot-path.order` names lie first in `.text`, close together, so that a
/// fix after an idle period runs through a few dozen pages of code. It fails when `make programs`
/// stops laying the program out, and when the order file has gone stale (a tenth of its names no
/// longer in the program: run `scripts/hot-path-profile.sh` again).
///
/// Needs the installable program (`make programs`, which `make test` runs first) and nm; skipped
/// with the reason when one is missing, a failure under `CI=true`.
@Suite(
  .enabled(
    if: RealComponents.isCI
      || (FileManager.default.isExecutableFile(atPath: BuiltPrograms.installable)
        && RealComponents.exists(RealComponents.nm)),
    Comment(rawValue: BuiltPrograms.installableMissingMessage + " (and nm, from binutils)")))
struct HotPathLayoutTests {
  static let orderFile = Paths.root.appendingPathComponent("Data/hot-path.order").path

  /// The names of the order file, without its comments.
  static func orderedNames() throws -> [String] {
    try String(contentsOfFile: orderFile, encoding: .utf8).split(separator: "\n")
      .map { $0.trimmingCharacters(in: .whitespaces) }
      .filter { !$0.isEmpty && !$0.hasPrefix("#") }
  }

  /// Each function symbol of `program` (`nm --defined-only -S`): its address and size.
  static func functions(_ program: String) throws -> [String: (address: UInt64, size: UInt64)] {
    let result = try runProgram(
      RealComponents.nm, ["--defined-only", "-S", program], limit: 120)
    #expect(result.status == 0, "nm failed: \(result.stderr)")
    var symbols: [String: (address: UInt64, size: UInt64)] = [:]
    for line in result.stdout.split(separator: "\n") {
      let fields = line.split(separator: " ", maxSplits: 3)
      guard fields.count == 4, fields[2] == "t" || fields[2] == "T",
        let address = UInt64(fields[0], radix: 16), let size = UInt64(fields[1], radix: 16)
      else { continue }
      symbols[String(fields[3])] = symbols[String(fields[3])] ?? (address, size)
    }
    return symbols
  }

  @Test func theOrderFileNamesEachFunctionOnceAsTheLinkerReadsIt() throws {
    let names = try Self.orderedNames()
    #expect(names.count >= 100, "the order file names \(names.count) functions")
    #expect(Set(names).count == names.count, "a name is repeated")
    let symbol = /^[A-Za-z_$][A-Za-z0-9_$.]*$/
    for name in names where name.wholeMatch(of: symbol) == nil {
      Issue.record("not a symbol the linker can be given: \(name)")
    }
  }

  @Test func theInstallableProgramHasTheOrderedFunctionsFirstAndTogether() throws {
    guard FileManager.default.isExecutableFile(atPath: BuiltPrograms.installable) else {
      throw TestFailure(BuiltPrograms.installableMissingMessage)
    }
    guard RealComponents.require(RealComponents.nm) else { return }
    let names = try Self.orderedNames()
    let symbols = try Self.functions(BuiltPrograms.installable)
    let present = names.compactMap { symbols[$0] }
    let missing = names.count - present.count
    #expect(
      present.count * 10 >= names.count * 9,
      "\(missing) of the \(names.count) ordered functions are not in the program: run scripts/hot-path-profile.sh again"
    )
    guard let textStart = symbols.values.map(\.address).min(),
      let first = present.map(\.address).min(),
      let end = present.map({ $0.address + $0.size }).max()
    else {
      Issue.record("no ordered function in the program")
      return
    }
    let size = present.reduce(UInt64(0)) { $0 + $1.size }
    // First in `.text`, and spread over at most twice their own size (the sections they lie in
    // may hold a little more; unordered, they spread over megabytes).
    #expect(first == textStart, "the ordered functions do not start `.text`")
    #expect(
      end - first <= 2 * size + 65_536,
      "the ordered functions (\(size) bytes) spread over \(end - first) bytes")
  }
}
