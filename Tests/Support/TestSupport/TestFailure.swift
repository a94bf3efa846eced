/// A test could not go on: a harness or a fake failed, with a message (instead of `!` or `try!`).
package struct TestFailure: Error, CustomStringConvertible {
  package var description: String

  /// A failure saying `description`.
  package init(_ description: String) { self.description = description }
}
