import LocationControl
import Testing

@Suite struct ControlTableTests {
  @Test func alignsColumns() {
    let table = ControlTable(
      [.init("app"), .init("regions", numeric: true), .init("state")],
      rows: [["org.example.LongName", "3", "on"], ["b", "120", ""]])
    #expect(
      table.rendered == """
        APP                   REGIONS  STATE
        org.example.LongName        3  on
        b                         120

        """)
  }

  @Test func shortRowsArePadded() {
    let table = ControlTable([.init("a"), .init("b")], rows: [["x"]])
    #expect(table.rendered == "A  B\nx\n")
  }

  @Test func controlCharactersCannotBreakTheTable() {
    let table = ControlTable([.init("app")], rows: [["a\nb\u{1B}c"]])
    #expect(table.rendered == "APP\na?b?c\n")
  }
}
