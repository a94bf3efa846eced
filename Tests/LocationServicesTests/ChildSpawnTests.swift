import Foundation
import LocationServices
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `ChildSpawn`: what a child of `locationd` or of the Wi-Fi fallback gets of this process.
@Suite struct ChildSpawnTests {
  /// Runs `/bin/sh -c script` with its output on a pipe; returns what it printed.
  func run(_ script: String, environment: [String: String] = [:]) throws -> String {
    var pipe: [Int32] = [-1, -1]
    try #require(Glibc.pipe(&pipe) == 0)
    let pid = try ChildSpawn.spawn(
      ["/bin/sh", "-c", script], environment: environment, output: .descriptor(pipe[1])
    ).get()
    close(pipe[1])
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(pipe[0], &buffer, buffer.count)
      if count < 0, errno == EINTR { continue }
      if count <= 0 { break }
      output += buffer[0..<count]
    }
    close(pipe[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    return String(decoding: output, as: UTF8.self)
  }

  @Test func aDescriptorWithoutCloseOnExecDoesNotReachTheChild() throws {
    // An inherited descriptor with no close-on-exec (what a careless parent leaves open).
    let leaked = open("/dev/null", O_RDONLY)
    try #require(leaked > 2)
    defer { close(leaked) }
    let listing = try run("ls /proc/self/fd")
    let descriptors = listing.split(whereSeparator: \.isNewline).compactMap { Int32($0) }
    #expect(!descriptors.contains(leaked), "\(descriptors)")
    #expect(descriptors.contains(1))
  }

  @Test func theEnvironmentAndInputAreTheCallers() throws {
    #expect(try run("printf %s \"$ANSWER\"", environment: ["ANSWER": "42"]) == "42")
    #expect(try run("cat; printf done") == "done", "standard input is /dev/null")
  }

  @Test func aMissingProgramIsAnError() {
    let result = ChildSpawn.spawn(["/nonexistent/program"], environment: [:])
    #expect(throws: SpawnError(code: ENOENT)) { try result.get() }
  }
}
