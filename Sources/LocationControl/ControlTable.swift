/// A plain-text table with aligned columns, for people (scripts use `--json`).
///
/// Columns are separated by two spaces; text columns are left-aligned, columns marked numeric are
/// right-aligned; trailing spaces are trimmed from every line. Widths count Unicode characters
/// (grapheme clusters), which is right for the ASCII and Latin text of app ids and URLs.
package struct ControlTable: Equatable, Sendable {
  /// One column: its heading and alignment.
  package struct Column: Equatable, Sendable {
    /// The heading, printed in capitals.
    package var title: String
    /// Right-align the cells (numbers).
    package var numeric: Bool

    /// Creates a column.
    ///
    /// - Parameters:
    ///   - title: The heading.
    ///   - numeric: Whether the cells are right-aligned.
    package init(_ title: String, numeric: Bool = false) {
      self.title = title
      self.numeric = numeric
    }
  }

  /// The columns.
  package var columns: [Column]
  /// The rows; a row shorter than `columns` is padded with empty cells.
  package var rows: [[String]]

  /// Creates a table.
  ///
  /// - Parameters:
  ///   - columns: The columns.
  ///   - rows: The cells, row by row.
  package init(_ columns: [Column], rows: [[String]]) {
    self.columns = columns
    self.rows = rows
  }

  /// The table as text: a heading line, then one line per row, each ending in a newline.
  package var rendered: String {
    let cells = [columns.map { $0.title.uppercased() }] + rows
    var widths = Array(repeating: 0, count: columns.count)
    for row in cells {
      for (index, cell) in row.prefix(columns.count).enumerated() {
        widths[index] = max(widths[index], Self.clean(cell).count)
      }
    }
    var text = ""
    for row in cells {
      var line = ""
      for index in columns.indices {
        let cell = index < row.count ? Self.clean(row[index]) : ""
        let padding = String(repeating: " ", count: widths[index] - cell.count)
        if index > 0 { line += "  " }
        line += columns[index].numeric ? padding + cell : cell + padding
      }
      while line.last == " " { line.removeLast() }
      text += line + "\n"
    }
    return text
  }

  /// A cell with control characters (newlines, tabs, escapes) replaced by `?`, so that names from
  /// the daemon cannot break the table or the terminal.
  static func clean(_ cell: String) -> String {
    guard cell.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else { return cell }
    return String(
      String.UnicodeScalarView(
        cell.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
  }
}
