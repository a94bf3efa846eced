import TestSupport
import Testing

@testable import LocationStore

@Suite struct LocationStoreEventsTests {
  @Test func eventsComeBackInOrderPerApp() throws {
    let store = try LocationStore.inMemory()
    var sequences: [Int64] = []
    for index in 0..<6 {
      let app = index % 2 == 0 ? "a" : "b"
      sequences.append(
        try store.appendEvent(
          PendingEvent(app: app, kind: "enter", payload: #"{"n":\#(index)}"#, time: Double(index))))
    }
    #expect(sequences == sequences.sorted())
    #expect(Set(sequences).count == 6)
    let events = try store.pendingEvents(app: "a")
    #expect(events.map(\.sequence) == [sequences[0], sequences[2], sequences[4]])
    #expect(events.map(\.payload) == [#"{"n":0}"#, #"{"n":2}"#, #"{"n":4}"#])
    #expect(events.allSatisfy { $0.app == "a" && $0.kind == "enter" })
    #expect(try store.pendingEvents(app: "nobody").isEmpty)
  }

  @Test func deletingThroughASequenceDeliversEachEventExactlyOnce() throws {
    let store = try LocationStore.inMemory()
    let first = try store.appendEvent(PendingEvent(app: "a", kind: "enter", payload: "1", time: 1))
    let second = try store.appendEvent(PendingEvent(app: "a", kind: "exit", payload: "2", time: 2))
    let other = try store.appendEvent(PendingEvent(app: "b", kind: "exit", payload: "x", time: 2))
    let third = try store.appendEvent(PendingEvent(app: "a", kind: "enter", payload: "3", time: 3))

    // Deliver the first two, acknowledge them.
    let delivered = try store.pendingEvents(app: "a").prefix(2)
    #expect(delivered.map(\.sequence) == [first, second])
    try store.deleteEvents(app: "a", throughSequence: second)
    #expect(try store.pendingEvents(app: "a").map(\.sequence) == [third])
    // A repeated acknowledgement removes nothing more; other apps are untouched.
    try store.deleteEvents(app: "a", throughSequence: second)
    #expect(try store.pendingEvents(app: "a").map(\.sequence) == [third])
    #expect(try store.pendingEvents(app: "b").map(\.sequence) == [other])
  }

  @Test func sequenceNumbersAreNeverReusedEvenAcrossReopening() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/store.sqlite"
      let last: Int64
      do {
        let store = try LocationStore(path: path)
        _ = try store.appendEvent(PendingEvent(app: "a", kind: "k", payload: "", time: 0))
        last = try store.appendEvent(PendingEvent(app: "a", kind: "k", payload: "", time: 0))
        try store.deleteEvents(app: "a", throughSequence: last)
        #expect(try store.pendingEvents(app: "a").isEmpty)
      }
      let store = try LocationStore(path: path)
      let next = try store.appendEvent(PendingEvent(app: "a", kind: "k", payload: "", time: 0))
      #expect(next > last)
      // A stale acknowledgement cannot remove the new event.
      try store.deleteEvents(app: "a", throughSequence: last)
      #expect(try store.pendingEvents(app: "a").map(\.sequence) == [next])
    }
  }

  @Test func aNonFiniteTimeIsRejected() throws {
    let store = try LocationStore.inMemory()
    let error = #expect(throws: StoreError.self) {
      try store.appendEvent(PendingEvent(app: "a", kind: "k", payload: "", time: .nan))
    }
    #expect(error?.code == .invalidValue)
    #expect(try store.pendingEvents(app: "a").isEmpty)
  }
}
