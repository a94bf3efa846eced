import Foundation
import LocationProtocol
import LocationServices
import TestSupport
import Testing

/// Every input in `Tests/Fixtures/daemon-protocol` (the fuzz target's seeds and any input it ever
/// crashed on) goes through the line reader and the decoder: errors are fine, crashes are not.
/// Files named `bad-*` must give an error; the other one-line files must decode, and survive an
/// encode/decode/encode round trip unchanged (the fuzz target's property).
@Suite struct DaemonProtocolCorpusTests {
  static let folder = Paths.fixtureFolder("daemon-protocol")

  static let files: [String] = {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { !$0.hasPrefix(".") }.sorted()
  }()

  @Test func corpusIsThere() {
    #expect(Self.files.count >= 50, "the seed corpus is missing from \(Self.folder.path)")
  }

  @Test(arguments: files)
  func decodesWithoutCrashing(name: String) throws {
    let bytes = try [UInt8](Data(contentsOf: Self.folder.appendingPathComponent(name)))
    // The whole file as one line.
    let decodes = (try? DaemonProtocol.decode(line: bytes)) != nil
    // Line by line, through the reader, in small chunks.
    var reader = DaemonLineReader()
    var lines: [[UInt8]] = []
    var start = 0
    while start < bytes.count {
      let end = min(start + 7, bytes.count)
      reader.append(bytes[start..<end])
      while let item = reader.next() {
        if case .line(let line) = item { lines.append(line) }
      }
      start = end
    }
    _ = reader.finish()
    for line in lines {
      if let message = try? DaemonProtocol.decode(line: line) {
        let encoded = DaemonProtocol.encode(message)
        let again = try DaemonProtocol.decode(line: encoded)
        #expect(DaemonProtocol.encode(again) == encoded, "\(name): round trip differs")
      }
    }
    if name.hasPrefix("bad-") {
      #expect(!decodes, "\(name) must not decode")
    } else if !name.hasPrefix("script-") && !name.hasPrefix("crash-") {
      #expect(decodes, "\(name) must decode")
    }
  }
}
