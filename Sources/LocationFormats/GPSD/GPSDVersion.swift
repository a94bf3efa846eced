/// gpsd's `VERSION` object.
package struct GPSDVersion: Sendable, Equatable {
  /// The release, as in `3.22`.
  package var release: String?
  /// The revision (a release or a git description).
  package var revision: String?
  /// The protocol's major version: 3 for every gpsd since 2.90 (2009). Clients refuse others.
  package var protocolMajor: Int?
  /// The protocol's minor version (14 in gpsd 3.22).
  package var protocolMinor: Int?

  /// Creates a version object.
  package init(
    release: String? = nil, revision: String? = nil, protocolMajor: Int? = nil,
    protocolMinor: Int? = nil
  ) {
    self.release = release
    self.revision = revision
    self.protocolMajor = protocolMajor
    self.protocolMinor = protocolMinor
  }
}
