import LocationControl
import Testing

@Suite struct AgentSessionTests {
  typealias Decision = AgentSession.Decision

  static let request = AgentSession.Request(id: 7, app: "org.example.Maps", always: false)

  /// The decisions a session makes for one request and the typed lines, with input ending after.
  func decisions(for request: AgentSession.Request, typing lines: [String]) -> [AgentSession.Action]
  {
    var session = AgentSession()
    var actions = session.received(request)
    for line in lines { actions += session.typed(line) }
    actions += session.endOfInput()
    return actions.filter {
      if case .show = $0 { return false }
      return true
    }
  }

  @Test(arguments: [
    (["o", "p"], Decision(.once)),
    (["w", "a"], Decision(.whenInUse, approximate: true)),
    (["a", "p"], Decision(.always)),
    (["d"], Decision(.denied)),
    (["ALWAYS", "approximate"], Decision(.always, approximate: true)),
    (["  while in use ", "precise"], Decision(.whenInUse)),
    (["x", "", "o", "maybe", "a"], Decision(.once, approximate: true)),
    (["no"], Decision(.denied)),
  ])
  func answers(lines: [String], expected: Decision) {
    #expect(
      decisions(for: Self.request, typing: lines) == [.answer(id: 7, expected), .finish])
  }

  @Test func asksTheQuestionsInOrder() {
    var session = AgentSession()
    #expect(
      session.received(Self.request) == [
        .show(
          "org.example.Maps wants your location (when in use). "
            + "[o]nce, [w]hile in use, [a]lways, [d]eny? ")
      ])
    #expect(session.typed("w") == [.show("[p]recise or [a]pproximate? ")])
    #expect(
      session.typed("p") == [
        .answer(id: 7, Decision(.whenInUse)),
        .show("Allowed org.example.Maps while in use, precise location.\n"),
      ])
    #expect(!session.isFinished)
    #expect(session.endOfInput() == [.finish])
    #expect(session.isFinished)
  }

  @Test func alwaysRequestSaysSo() {
    let question = AgentSession.statusQuestion(.init(id: 1, app: "a", always: true))
    #expect(
      question == "a wants your location (always). [o]nce, [w]hile in use, [a]lways, [d]eny? ")
  }

  /// Issue 15: the app's purpose is part of the question, with control characters shown as `?`.
  @Test func theQuestionQuotesThePurpose() {
    let question = AgentSession.statusQuestion(
      .init(id: 1, app: "a", always: false, purpose: "Shows your boat\u{7} on the chart"))
    #expect(
      question
        == "a wants your location (when in use): \"Shows your boat? on the chart\". "
        + "[o]nce, [w]hile in use, [a]lways, [d]eny? ")
  }

  @Test func unclearAnswerRepeatsTheQuestionWithAHint() {
    var session = AgentSession()
    _ = session.received(Self.request)
    let actions = session.typed("yes")
    #expect(actions.count == 2)
    #expect(
      actions.first == .show("Please answer o (once), w (while in use), a (always) or d (deny).\n"))
  }

  @Test func requestsAreAskedOneAtATime() {
    var session = AgentSession()
    _ = session.received(.init(id: 1, app: "first", always: false))
    // A second request while the first is asked: nothing shown yet.
    #expect(session.received(.init(id: 2, app: "second", always: true)) == [])
    let actions = session.typed("d")
    #expect(actions.contains(.answer(id: 1, Decision(.denied))))
    #expect(
      actions.last == .show(AgentSession.statusQuestion(.init(id: 2, app: "second", always: true))))
  }

  @Test func typedAheadAnswersServeTheNextRequest() {
    var session = AgentSession()
    #expect(session.typed("a") == [])
    #expect(session.typed("a") == [])
    // Input ends with answers left over: the session waits for the request they answer.
    #expect(session.endOfInput() == [])
    #expect(!session.isFinished)
    let actions = session.received(Self.request)
    #expect(actions.contains(.answer(id: 7, Decision(.always, approximate: true))))
    #expect(actions.last == .finish)
  }

  @Test func endOfInputLeavesAnUnansweredRequestToTheDaemon() {
    var session = AgentSession()
    _ = session.received(Self.request)
    _ = session.typed("w")
    let actions = session.endOfInput()
    #expect(actions.last == .finish)
    #expect(!actions.contains { if case .answer = $0 { return true } else { return false } })
    #expect(session.received(Self.request) == [])
  }

  @Test func controlCharactersInAppNamesAreNotPrinted() {
    let question = AgentSession.statusQuestion(
      .init(id: 1, app: "evil\u{1B}[2J\napp", always: false))
    #expect(!question.contains("\u{1B}"))
    #expect(!question.contains("\n"))
  }

  /// Issue 15: a temporary full accuracy request is one question, showing the purpose key and the
  /// app's reason; allowing sends "when in use, precise", refusing sends "denied".
  @Test func temporaryFullAccuracyIsOneQuestion() {
    let request = AgentSession.Request(
      id: 8, app: "org.example.Maps", always: false, purpose: "Shows the boat",
      purposeKey: "Docking")
    var session = AgentSession()
    #expect(
      session.received(request) == [
        .show(
          "org.example.Maps asks for your precise location while it is in use (purpose key "
            + "\"Docking\"): \"Shows the boat\". [a]llow or [d]on't allow? ")
      ])
    #expect(
      decisions(for: request, typing: ["maybe", "a"]) == [
        .answer(id: 8, Decision(.whenInUse)), .finish,
      ])
    #expect(
      decisions(for: request, typing: ["no"]) == [.answer(id: 8, Decision(.denied)), .finish])
    let escaped = AgentSession.Request(
      id: 9, app: "org.example.Maps", always: false, purposeKey: "Dock\u{1B}[2J")
    #expect(!AgentSession.temporaryQuestion(escaped).contains("\u{1B}"))
  }
}
