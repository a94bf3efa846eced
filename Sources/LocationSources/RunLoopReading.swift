import CEpoll
import CoreFoundation
import Foundation
import LocationModel
import Synchronization

/// A thread's run loop, as a reading run loop (`RunLoopReading`): the daemon client's, or a
/// stream source's (`StreamWatcher`).
package struct ReadingRunLoop: @unchecked Sendable {
  // @unchecked: Core Foundation's run loop functions may be called from any thread.
  let runLoop: CFRunLoop

  /// The main thread's run loop.
  package static var main: ReadingRunLoop { ReadingRunLoop(runLoop: CFRunLoopGetMain()) }

  /// The calling thread's run loop.
  package static var current: ReadingRunLoop { ReadingRunLoop(runLoop: CFRunLoopGetCurrent()) }

  /// Set by a program that parks its main thread in `dispatchMain()` before it starts anything
  /// (``mainThreadWillEnd()``).
  private static let mainThreadEnds = Atomic(false)

  /// Says, before anything starts, that the main thread will end in `dispatchMain()` (as
  /// `whereami`'s does): no reading is ever added to the main run loop then. Without it, a reading
  /// installed while `dispatchMain()` is ending the thread (after Core Foundation marked it gone,
  /// before `/proc` shows it parked) drew Core Foundation's complaint (a test's failure in CI).
  package static func mainThreadWillEnd() {
    mainThreadEnds.store(true, ordering: .releasing)
  }

  /// Whether the process's main thread has ended for Core Foundation: on Linux, `dispatchMain()`
  /// calls `pthread_exit` on it (Core Foundation's thread destructors then mark the main run loop
  /// gone), and libdispatch keeps the thread itself parked in `sigsuspend` so that the process
  /// does not turn into a zombie. Seen from `/proc`: the main task waits in `sigsuspend`
  /// (`wchan`), or is a zombie. False when neither can be read.
  package static func mainThreadHasEnded() -> Bool {
    if mainThreadEnds.load(ordering: .acquiring) { return true }
    let task = "/proc/self/task/\(getpid())/"
    if let wchan = Self.contents(task + "wchan"), wchan.contains("sigsuspend") { return true }
    guard let stat = Self.contents(task + "stat"),
      let close = stat.lastIndex(of: ")"),
      let state = stat[close...].dropFirst(2).first
    else { return false }
    return state == "Z" || state == "X"
  }

  /// The first 512 bytes of a small file, as text; nil when it cannot be read.
  private static func contents(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { Glibc.close(fd) }
    var buffer = [UInt8](repeating: 0, count: 512)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    return String(decoding: buffer[0..<count], as: UTF8.self)
  }
}

/// A run loop (the main run loop) reading a descriptor itself while it waits: the daemon's socket
/// for the daemon client, a receiver's stream for an in-process stream source (`StreamWatcher`).
/// A manager whose delegate runs there then gets each location after one wake-up, the run loop's
/// own, instead of two (the reader thread's, then the run loop's to run what the thread handed
/// it): `locbench latency`, through `locationd` and embedded.
///
/// How: a version-1 run loop source whose port is an epoll instance watching the descriptor. On
/// Linux, Core Foundation's run loop waits on an epoll set of its sources' ports
/// (`CFRunLoopSourceContext1`'s `getPort` gives a descriptor), so the descriptor's bytes wake the
/// waiting run loop directly, and the source's `perform` reads them. The run loop acknowledges a
/// wake-up by reading eight bytes from the port, as from an eventfd; from an epoll instance that
/// read fails (`EINVAL`) and takes nothing, which is why the port is not the descriptor itself.
///
/// Which of the two reads: the reader thread waits on an epoll instance of its own, edge-triggered,
/// and an observer of the run loop turns its interest in the descriptor's input off when the run
/// loop is about to wait (`epoll_ctl`, no wake-up of the thread), and on again when the run loop
/// wakes without bytes on the descriptor (for something else: it may stay busy), after its source
/// has read, and when it leaves the run loop. So bytes that arrive while the run loop waits wake
/// it alone, and bytes that arrive while it is busy wake the thread. Left to the run loop: bytes
/// that arrive in the moment after it woke with bytes of its own (it reads them all) and, when it
/// woke with bytes and for something else at once and runs the other first, until that is done. A
/// wait on the run loop's thread for the daemon's answer turns the thread's interest on first
/// (`DaemonClient.yieldRunLoopReading`). The owner makes both read one at a time, in order
/// (`DaemonConnectionReading`'s lock, a stream's queue).
package final class RunLoopReading: @unchecked Sendable {
  // @unchecked: `source`, `observer` and `runLoop` are Core Foundation objects, safe to use from
  // any thread; `source` and `observer` are set at `install`, before the reader thread starts,
  // and cleared by that thread's `uninstall`; nothing else touches them.

  /// The reader thread's epoll instance (-1 once closed) and whether it watches the socket's input.
  private struct ThreadInterest {
    var instance: Int32
    var reads = true
  }

  private let thread: Mutex<ThreadInterest>
  private let fd: Int32
  /// The source's port: an epoll instance watching `fd` (level-triggered).
  private let port: Int32
  private let read: @Sendable () -> Void
  private let runLoop: CFRunLoop
  private var source: CFRunLoopSource?
  private var observer: CFRunLoopObserver?
  /// A count of readings alive (`DaemonClient.runLoopReadings`), if any.
  private let alive: LiveCount?
  /// The wake-up or spin before the next epoch (`EpochLead`), nil when off.
  private let lead: EpochLead?
  /// The epochs' arrivals and the timer for the next wake-up or spin; used on the run loop's
  /// thread, and by `uninstall` (the reader thread) to invalidate the timer.
  private let early = Mutex(EarlyState())

  private struct EarlyState {
    var cadence = EpochCadence()
    var timer: CFRunLoopTimer?
    var ended = false
  }

  private init(
    fd: Int32, port: Int32, threadInstance: Int32, runLoop: CFRunLoop,
    alive: LiveCount?, lead: EpochLead?, read: @escaping @Sendable () -> Void
  ) {
    self.lead = lead
    self.fd = fd
    self.port = port
    self.thread = Mutex(ThreadInterest(instance: threadInstance))
    self.runLoop = runLoop
    self.read = read
    self.alive = alive
    alive?.value.add(1, ordering: .relaxed)
  }

  deinit {
    Glibc.close(port)
    alive?.value.subtract(1, ordering: .relaxed)
  }

  /// Adds the source and the observer to `runLoop`'s common modes.
  /// - Parameters:
  ///   - fd: the descriptor read (the daemon's socket, a stream source's device or connection).
  ///   - threadInstance: the reader thread's epoll instance, watching `fd`'s input
  ///     (edge-triggered); the reading closes it (`closeThreadInstance`).
  ///   - target: the run loop that reads while it waits.
  ///   - alive: a count of readings alive, if any.
  ///   - lead: the wake-up or spin before each epoch (`EpochLead`), nil for none.
  ///   - read: reads what the descriptor holds, on the run loop's thread.
  ///   - mainThreadHasEnded: whether the main thread has ended for Core Foundation (tests give
  ///     their own answer: the real one, once `mainThreadWillEnd()` is said, holds for the
  ///     process).
  /// - Returns: the reading, or nil when no epoll instance could be made, or when `target` is
  ///   the main run loop and the main thread has ended (the thread reads everything then).
  package static func install(
    fd: Int32, threadInstance: Int32, on target: ReadingRunLoop, alive: LiveCount? = nil,
    lead: EpochLead? = EpochLead.configured,
    mainThreadHasEnded: () -> Bool = ReadingRunLoop.mainThreadHasEnded,
    read: @escaping @Sendable () -> Void
  ) -> RunLoopReading? {
    let runLoop = target.runLoop
    // A main thread that has ended (`dispatchMain()` ends it on Linux) never runs its run loop
    // again, and Core Foundation prints a complaint for each kind of thing added to it.
    if runLoop === CFRunLoopGetMain() && mainThreadHasEnded() { return nil }
    let port = cepoll_watching(fd, 0)
    guard port >= 0 else { return nil }
    let reading = RunLoopReading(
      fd: fd, port: port, threadInstance: threadInstance, runLoop: runLoop, alive: alive,
      lead: lead, read: read)
    let info = Unmanaged.passUnretained(reading).toOpaque()
    var context = CFRunLoopSourceContext1()
    context.info = info
    context.retain = retainInfo
    context.release = releaseInfo
    context.getPort = { info in
      guard let info else { return -1 }
      return Unmanaged<RunLoopReading>.fromOpaque(info).takeUnretainedValue().port
    }
    context.perform = { info in
      guard let info else { return }
      Unmanaged<RunLoopReading>.fromOpaque(info).takeUnretainedValue().perform()
    }
    let source = makePortRunLoopSource(&context)
    var observing = CFRunLoopObserverContext(
      version: 0, info: info, retain: retainInfo, release: releaseInfo, copyDescription: nil)
    let activities = CFRunLoopActivity([.beforeWaiting, .afterWaiting, .exit]).rawValue
    let observer = CFRunLoopObserverCreate(
      nil, activities, true, 0,
      { _, activity, info in
        guard let info else { return }
        Unmanaged<RunLoopReading>.fromOpaque(info).takeUnretainedValue().observe(activity)
      }, &observing)
    guard let source, let observer else { return nil }
    reading.source = source
    reading.observer = observer
    CFRunLoopAddObserver(runLoop, observer, kCFRunLoopCommonModes)
    CFRunLoopAddSource(runLoop, source, kCFRunLoopCommonModes)
    return reading
  }

  /// The source's and the observer's hold on the reading (their `info`).
  private static let retainInfo: @convention(c) (UnsafeRawPointer?) -> UnsafeRawPointer? = {
    info in
    guard let info else { return nil }
    _ = Unmanaged<RunLoopReading>.fromOpaque(info).retain()
    return info
  }
  private static let releaseInfo: @convention(c) (UnsafeRawPointer?) -> Void = { info in
    guard let info else { return }
    Unmanaged<RunLoopReading>.fromOpaque(info).release()
  }

  /// Removes the source and the observer; the run loop no longer reads, and the thread watches the
  /// socket's input again. Called once, by the reader thread as it ends: the source and the
  /// observer hold this object (their `info`), so they are let go of here, and its port is closed
  /// when Core Foundation lets go of them in turn.
  package func uninstall() {
    if let source { CFRunLoopSourceInvalidate(source) }
    // The observer is invalidated on the run loop's own thread. Core Foundation lets go of an
    // observer's `info` when it is invalidated, while a callout to it may be under way on the run
    // loop's thread: invalidated from here, this object could be freed in the middle of
    // `observe` (a crash seen in CI). A source keeps its `info` until it is freed itself, after
    // any callout, so the source is invalidated here at once. The block runs at the run loop's
    // next turn; a run loop that never turns again lets go of the observer with its thread.
    // A main thread that ended after the install runs no callout, and takes no block (Core
    // Foundation would complain): the observer is let go of here.
    if let observer, runLoop === CFRunLoopGetMain() && ReadingRunLoop.mainThreadHasEnded() {
      CFRunLoopObserverInvalidate(observer)
    } else if let observer {
      let box = UncheckedObserver(observer: observer)
      CFRunLoopPerformBlock(runLoop, kCFRunLoopCommonModes) {
        CFRunLoopObserverInvalidate(box.observer)
      }
      CFRunLoopWakeUp(runLoop)
    }
    source = nil
    observer = nil
    let timer = early.withLock { early in
      early.ended = true
      defer { early.timer = nil }
      return early.timer.map(UncheckedTimer.init)
    }
    if let timer { CFRunLoopTimerInvalidate(timer.timer) }
    threadReads(true)
  }

  /// Closes the reader thread's epoll instance (the thread, as it ends); nothing changes it after.
  package func closeThreadInstance() {
    thread.withLock { thread in
      guard thread.instance >= 0 else { return }
      Glibc.close(thread.instance)
      thread.instance = -1
    }
  }

  /// Turns the reader thread's interest in the socket's input on or off. Turned on, epoll looks at
  /// the socket at once: bytes already there wake the thread.
  package func threadReads(_ on: Bool) {
    thread.withLock { thread in
      guard thread.instance >= 0, thread.reads != on else { return }
      if cepoll_watch_input(thread.instance, fd, on ? 1 : 0) == 0 { thread.reads = on }
    }
  }

  /// Whether the reader thread watches the descriptor's input now (the run loop is busy, or not
  /// running): it then wakes up or spins before an epoch itself (`EpochLead`), not the run loop.
  package var threadIsReading: Bool { thread.withLock { $0.reads } }

  /// `threadReads(true)` when called on the run loop's thread (before it waits for the daemon).
  package func threadReadsIfCurrent() {
    if CFRunLoopGetCurrent() === runLoop { threadReads(true) }
  }

  /// Whether `fd` has bytes (or an end) to read now.
  private static func readable(_ fd: Int32) -> Bool {
    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&descriptor, 1, 0) > 0
  }

  private func observe(_ activity: CFRunLoopActivity) {
    if activity.contains(.beforeWaiting) {
      threadReads(false)
    } else if activity.contains(.afterWaiting) {
      if LatencyTrace.isOn { LatencyTrace.noteWake() }
      // Bytes on the socket: the source reads them next; else the run loop woke for something
      // else and may stay busy.
      if !Self.readable(fd) { threadReads(true) }
    } else {
      threadReads(true)
    }
  }

  /// Reads what the descriptor holds and runs the deliveries taken meanwhile; returns whether
  /// there were any (an epoch went out).
  @discardableResult
  private func perform() -> Bool {
    let start = lead == nil ? 0 : LiveClock.monotonicSeconds()
    let works = RunLoopReadingDeliveries.collect(read)
    threadReads(true)
    for work in works { work() }
    if let lead, !works.isEmpty { scheduleEarly(arrival: start, lead: lead) }
    return !works.isEmpty
  }

  /// Notes an epoch's arrival (a read that delivered) and, when the epochs are steady, sets a
  /// timer for the wake-up or spin before the next one (`EpochLead`).
  private func scheduleEarly(arrival: Double, lead: EpochLead) {
    let previous = early.withLock { early -> UncheckedTimer? in
      early.cadence.note(arrival)
      guard !early.ended, let window = early.cadence.window(lead: lead) else { return nil }
      // Monotonic seconds to the run loop's absolute time.
      let fireDate = CFAbsoluteTimeGetCurrent() + (window.start - LiveClock.monotonicSeconds())
      let timer = CFRunLoopTimerCreateWithHandler(nil, fireDate, 0, 0, 0) { [weak self] _ in
        self?.beforeEpoch(window)
      }
      defer { early.timer = timer }
      CFRunLoopAddTimer(runLoop, timer, kCFRunLoopCommonModes)
      return early.timer.map(UncheckedTimer.init)
    }
    if let previous { CFRunLoopTimerInvalidate(previous.timer) }
  }

  /// The timer's callout before an epoch: a wake-up tries a read (it finds nothing, or the
  /// epoch's first bytes), a spin polls (`spinBeforeEpoch`).
  func beforeEpoch(_ window: EpochWindow) {
    if window.spins { spinBeforeEpoch(until: window.end) } else { perform() }
  }

  /// The spin's part of `beforeEpoch`: polls the descriptor until it has bytes or `end` has
  /// passed, and reads them at once; bytes that do not finish the epoch (its first sentences)
  /// keep it polling for the rest. The reader thread is kept from waking for them meanwhile.
  func spinBeforeEpoch(until end: Double) {
    threadReads(false)
    while EpochLead.spin(until: end, ready: { Self.readable(fd) }) {
      if perform() { return }
      threadReads(false)
    }
    threadReads(true)
  }
}

/// A version-1 run loop source from `context` (whose `version` it sets): on Linux, Core
/// Foundation's run loop waits on the descriptor its `getPort` gives, and calls its `perform` when
/// that descriptor is readable.
package func makePortRunLoopSource(_ context: inout CFRunLoopSourceContext1) -> CFRunLoopSource? {
  context.version = 1
  // A version-1 context is passed where the version-0 type is declared; `version` tells them
  // apart.
  return withUnsafeMutablePointer(to: &context) { pointer in
    pointer.withMemoryRebound(to: CFRunLoopSourceContext.self, capacity: 1) {
      CFRunLoopSourceCreate(nil, 0, $0)
    }
  }
}

/// A Core Foundation observer handed to the run loop's thread (CF objects may be used from any
/// thread).
private struct UncheckedObserver: @unchecked Sendable {
  let observer: CFRunLoopObserver
}

/// A Core Foundation timer handed between threads (CF objects may be used from any thread).
private struct UncheckedTimer: @unchecked Sendable {
  let timer: CFRunLoopTimer
}

/// A count of live objects, shared with the objects counted.
package final class LiveCount: Sendable {
  package let value = Atomic<Int>(0)

  package init() {}
}

/// Deliveries a reading run loop's `perform` runs itself, after it has read: a delivery for the
/// run loop's own thread, made while that thread reads, runs there at once instead of in a later
/// turn of the run loop (which costs tens of microseconds on a cold cache), and never under the
/// reading's lock (a delegate may call back into the client and wait for the daemon).
package enum RunLoopReadingDeliveries {
  private final class Collected {
    var works: [@Sendable () -> Void] = []
  }

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()

  /// Whether the calling thread is reading in a run loop's `perform`.
  package static var isCollecting: Bool { pthread_getspecific(key) != nil }

  /// Takes `work` to run when the calling thread's reading is done, if the thread is reading in a
  /// run loop's `perform`.
  /// - Returns: whether `work` was taken (else the caller schedules it as it would otherwise).
  package static func take(_ work: @escaping @Sendable () -> Void) -> Bool {
    guard let pointer = pthread_getspecific(key) else { return false }
    Unmanaged<Collected>.fromOpaque(pointer).takeUnretainedValue().works.append(work)
    return true
  }

  /// Runs `read` with deliveries for this thread taken; returns them, in order.
  static func collect(_ read: () -> Void) -> [@Sendable () -> Void] {
    let collected = Collected()
    let previous = pthread_getspecific(key)
    pthread_setspecific(key, Unmanaged.passUnretained(collected).toOpaque())
    read()
    pthread_setspecific(key, previous)
    return collected.works
  }
}
