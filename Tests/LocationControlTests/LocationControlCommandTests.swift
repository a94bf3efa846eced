import LocationControl
import Testing

@Suite struct LocationControlCommandTests {
  @Test func unknownCommandFails() {
    #expect(LocationControlCommand.main(arguments: ["no-such-command"]) != 0)
  }
}
