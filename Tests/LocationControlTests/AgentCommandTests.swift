import Foundation
import LocationControl
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `locationctl agent` driven through a pipe (its standard input) against a fake daemon.
@Suite struct AgentCommandTests {
  /// A pipe: the agent reads `read`, the test writes `write`.
  final class InputPipe: Sendable {
    let read: Int32
    let write: Int32
    private let closed = Atomic(false)

    init() throws {
      var fds: [Int32] = [-1, -1]
      guard pipe(&fds) == 0 else { throw TestFailure("pipe failed") }
      read = fds[0]
      write = fds[1]
    }

    func type(_ text: String) {
      let bytes = Array(text.utf8)
      _ = bytes.withUnsafeBytes { Glibc.write(write, $0.baseAddress, $0.count) }
    }

    func closeWriting() {
      if !closed.exchange(true, ordering: .sequentiallyConsistent) { close(write) }
    }

    deinit {
      closeWriting()
      close(read)
    }
  }

  @Test func answersInteractively() throws {
    let daemon = try FakeDaemon { peer in
      guard peer.readLine() != nil else { return }
      peer.send(FakeDaemon.controlWelcome)
      peer.send(#"{"type":"authorizationRequest","id":5,"app":"org.example.Maps","always":true}"#)
      _ = peer.readLine()
      peer.send(#"{"type":"authorizationRequest","id":6,"app":"/usr/bin/tracker","always":false}"#)
      _ = peer.readLine()
      // Until the agent closes the connection.
      _ = peer.readLine()
    }
    let input = try InputPipe()
    // Answers are typed only after each question shows, as a person would.
    let questions = Mutex(0)
    let captured = Captured()
    let io = captured.io(input: input.read) { text in
      if text.hasSuffix("[d]eny? ") {
        let count = questions.withLock {
          $0 += 1
          return $0
        }
        input.type(count == 1 ? "maybe\n" : count == 2 ? "a\n" : "d\n")
      } else if text.hasSuffix("[a]pproximate? ") {
        input.type("approximate\n")
      } else if text.hasPrefix("Denied") {
        input.closeWriting()
      }
    }
    let status = LocationControlCommand.run(
      arguments: ["agent", "--socket", daemon.path], environment: [:], io: io)
    let sent = daemon.finish()
    #expect(status == 0)
    #expect(
      sent == [
        #"{"type":"hello","version":1,"role":"agent"}"#,
        #"{"type":"authorizationDecision","id":5,"status":"always","accuracy":"reduced"}"#,
        #"{"type":"authorizationDecision","id":6,"status":"denied","accuracy":"full"}"#,
      ])
    #expect(
      captured.output == """
        org.example.Maps wants your location (always). [o]nce, [w]hile in use, [a]lways, [d]eny? \
        Please answer o (once), w (while in use), a (always) or d (deny).
        org.example.Maps wants your location (always). [o]nce, [w]hile in use, [a]lways, [d]eny? \
        [p]recise or [a]pproximate? Allowed org.example.Maps always, approximate location.
        /usr/bin/tracker wants your location (when in use). [o]nce, [w]hile in use, [a]lways, \
        [d]eny? Denied /usr/bin/tracker.

        """)
    #expect(captured.error.contains("answering location requests"))
  }

  @Test func pipedAnswersServeTheFirstRequestThenEnd() throws {
    let daemon = try FakeDaemon { peer in
      guard peer.readLine() != nil else { return }
      peer.send(FakeDaemon.controlWelcome)
      peer.send(#"{"type":"authorizationRequest","id":1,"app":"org.x","always":false}"#)
      _ = peer.readLine()
      // The agent ends after its answers are used up: the connection closes.
      _ = peer.readLine()
    }
    let input = try InputPipe()
    input.type("o\np\n")
    input.closeWriting()
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["agent", "--socket", daemon.path], environment: [:],
      io: captured.io(input: input.read))
    let sent = daemon.finish()
    #expect(status == 0)
    #expect(
      sent.last == #"{"type":"authorizationDecision","id":1,"status":"once","accuracy":"full"}"#)
  }

  @Test func endOfInputWithoutRequestsEndsCleanly() throws {
    let daemon = try FakeDaemon { peer in
      guard peer.readLine() != nil else { return }
      peer.send(FakeDaemon.controlWelcome)
      _ = peer.readLine()
    }
    let input = try InputPipe()
    input.closeWriting()
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["agent", "--socket", daemon.path], environment: [:],
      io: captured.io(input: input.read))
    #expect(daemon.finish() == [#"{"type":"hello","version":1,"role":"agent"}"#])
    #expect(status == 0)
  }

  @Test func endOfInputMidQuestionLeavesTheRequestUnanswered() throws {
    let daemon = try FakeDaemon { peer in
      guard peer.readLine() != nil else { return }
      peer.send(FakeDaemon.controlWelcome)
      peer.send(#"{"type":"authorizationRequest","id":3,"app":"org.x","always":false}"#)
      _ = peer.readLine()
    }
    let input = try InputPipe()
    let captured = Captured()
    let io = captured.io(input: input.read) { text in
      if text.hasSuffix("[d]eny? ") {
        input.type("w\n")
      } else if text.hasSuffix("[a]pproximate? ") {
        input.closeWriting()
      }
    }
    let status = LocationControlCommand.run(
      arguments: ["agent", "--socket", daemon.path], environment: [:], io: io)
    #expect(daemon.finish() == [#"{"type":"hello","version":1,"role":"agent"}"#])
    #expect(status == 0)
  }

  @Test func daemonGoingAwayEndsTheAgentWithAnError() throws {
    let daemon = try FakeDaemon { peer in
      guard peer.readLine() != nil else { return }
      peer.send(FakeDaemon.controlWelcome)
    }
    let input = try InputPipe()
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["agent", "--socket", daemon.path], environment: [:],
      io: captured.io(input: input.read))
    _ = daemon.finish()
    #expect(status == 1)
    #expect(captured.error.contains("closed the connection"))
  }

  @Test func refusedAgentRoleExitsOne() throws {
    let daemon = try FakeDaemon { peer in
      _ = peer.readLine()
      peer.send(#"{"type":"error","code":"forbidden","message":"the agent role needs uid 0"}"#)
    }
    let input = try InputPipe()
    let captured = Captured()
    let status = LocationControlCommand.run(
      arguments: ["agent", "--socket", daemon.path], environment: [:],
      io: captured.io(input: input.read))
    _ = daemon.finish()
    #expect(status == 1)
    #expect(captured.error.contains("the agent role needs root"))
  }
}
