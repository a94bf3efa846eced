import Foundation
import Testing

/// A connected pair of Unix stream sockets (close-on-exec): `watched` for the code under test
/// (a stream watcher, a run loop's reading), `feed` for the test to write to. The caller closes
/// what the code under test does not.
func localSocketPair() throws -> (watched: Int32, feed: Int32) {
  var fds: [Int32] = [-1, -1]
  let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
  try #require(socketpair(AF_UNIX, type, 0, &fds) == 0)
  return (fds[0], fds[1])
}
