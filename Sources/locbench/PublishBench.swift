import Foundation
import LocationDaemon
import LocationSources
import LocationStore
import Synchronization

/// Issue 18's figures: `locationd`'s store-and-forward publisher (`OutboxPublisher`, on a store
/// file as the daemon has) against a real Mosquitto broker on loopback, beside the same client
/// publishing directly (no store) and `mosquitto_pub`, in the same run; then the fleet row
/// (`PublishFleetBench`): one broker and 10, 100 and 1,000 simulated devices publishing at 1 Hz,
/// each on a connection of its own, with the devices', the broker's and the subscriber's CPU per
/// message and whether the devices' cost per device stays flat as they grow
/// (`--fleet-seconds N`, 20 s per size; `--fleet-only` skips the rest).
enum PublishBench {
  static let broker = "/usr/sbin/mosquitto"
  static let mosquittoPub = "/usr/bin/mosquitto_pub"
  static let topic = "owntracks/bench/pi"

  static func run() {
    guard FileManager.default.isExecutableFile(atPath: broker) else {
      print("publish: \(broker) is missing (Debian's mosquitto; scripts/setup-debian.sh)")
      return
    }
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    if !arguments.contains("--fleet-only") {
      do {
        try measure()
      } catch {
        print("publish: \(error)")
      }
    }
    PublishFleetBench.run(arguments)
  }

  /// A broker on a free loopback port, its configuration in `directory`.
  static func startBroker(_ directory: String, port: Int) throws -> pid_t {
    let user = String(cString: getpwuid(geteuid()).pointee.pw_name)
    let config = directory + "/mosquitto.conf"
    try """
    listener \(port) 127.0.0.1
    allow_anonymous true
    max_queued_messages 0
    max_inflight_messages 0
    user \(user)
    """.write(toFile: config, atomically: true, encoding: .utf8)
    let pid = try DaemonBenchSystem.spawn(
      broker, ["-c", config], logPath: directory + "/mosquitto.log")
    let deadline = DaemonBenchSystem.now() + 30_000_000_000
    while !accepts(port) {
      guard DaemonBenchSystem.now() < deadline else { throw BenchError("mosquitto did not start") }
      usleep(10_000)
    }
    return pid
  }

  /// Whether something accepts a connection on 127.0.0.1:`port` now.
  static func accepts(_ port: Int) -> Bool {
    guard let fd = try? DaemonBenchSystem.connectLoopback(port: port) else { return false }
    close(fd)
    return true
  }

  /// Receives `n` from every message's payload `{"n":N,...}` with its arrival time.
  final class Receiver: Sendable {
    let arrivals = Mutex<[(n: Int, time: UInt64)]>([])
    let connected = Mutex(false)
    private let holder = Mutex<MQTTClient?>(nil)

    init(port: Int) throws {
      let made = try MQTTClient(
        MQTTClient.Configuration(host: "127.0.0.1", port: Int32(port), clientID: "bench-receiver")
      ) { [weak self] event in
        guard let self else { return }
        switch event {
        case .connected:
          try? holder.withLock { $0 }?.subscribe(PublishBench.topic)
          connected.withLock { $0 = true }
        case .message(_, let payload):
          let time = DaemonBenchSystem.now()
          if let n = PublishBench.number(payload) { arrivals.withLock { $0.append((n, time)) } }
        case .refused, .disconnected:
          connected.withLock { $0 = false }
        case .acknowledged: break
        }
      }
      holder.withLock { $0 = made }
      made.start()
    }

    /// Disconnects.
    func stop() { holder.withLock { $0 }?.stop() }

    /// Whether numbers 0..<count arrived (first copies), in order.
    func complete(_ count: Int) -> (all: Bool, ordered: Bool) {
      var seen = Set<Int>()
      let first = arrivals.withLock { $0 }.map(\.n).filter { $0 >= 0 && seen.insert($0).inserted }
      return (first.count >= count, first.prefix(count).elementsEqual(0..<count))
    }
  }

  /// The `n` of `{"n":N` at the payload's start.
  static func number(_ payload: [UInt8]) -> Int? {
    guard payload.starts(with: Array(#"{"n":"#.utf8)) else { return nil }
    var value = 0
    var negative = false
    for byte in payload.dropFirst(5) {
      if byte == UInt8(ascii: "-") {
        negative = true
        continue
      }
      guard (48...57).contains(byte) else { break }
      value = value * 10 + Int(byte - 48)
    }
    return negative ? -value : value
  }

  /// A location-sized message numbered `n` (an OwnTracks location is about 150 bytes).
  static func payload(_ n: Int) -> String {
    #"{"n":\#(n),"_type":"location","lat":52.370216,"lon":4.895168,"acc":5,"alt":2,"vac":3,"vel":36,"cog":90,"tst":1767225600,"tid":"pi"}"#
  }

  /// The value at fraction `p` of the sorted `values` (index `count * p`), NaN when empty.
  static func percentile(_ values: [Double], _ p: Double) -> Double {
    values.isEmpty ? .nan : values[min(values.count - 1, Int(Double(values.count) * p))]
  }

  static func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = DaemonBenchSystem.now() + UInt64(seconds * 1e9)
    while !condition() {
      if DaemonBenchSystem.now() > deadline { return false }
      usleep(1000)
    }
    return true
  }

  static func measure() throws {
    DaemonLog.enabled.store(false, ordering: .relaxed)
    let directory = try DaemonBenchLocationd.temporaryDirectory(prefix: "locbench-publish")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let port = try DaemonBenchSystem.freeLoopbackPort()
    var brokerPID = try startBroker(directory, port: port)
    defer { DaemonBenchSystem.stop(brokerPID) }
    let receiver = try Receiver(port: port)
    defer { receiver.stop() }
    guard waitUntil(30, { receiver.connected.withLock { $0 } }) else {
      throw BenchError("the receiver did not connect")
    }
    usleep(200_000)
    let store = try LocationStore(path: directory + "/store.sqlite")
    let mqtt = MQTTClient.Configuration(host: "127.0.0.1", port: Int32(port), clientID: "bench")
    print("Publishing (issue 18): OutboxPublisher on a store file, mosquitto 2 on loopback, QoS 1")

    // 1. Latency at 10 Hz: submit (commit, publish) to the receiver's arrival.
    let rate = 10.0
    let count = 600
    let publisher = try OutboxPublisher(store: store, mqtt: mqtt)
    publisher.start()
    guard waitUntil(30, { publisher.status.connected }) else {
      throw BenchError("the publisher did not connect")
    }
    var submitted = [UInt64](repeating: 0, count: count)
    let cpuBefore = DaemonBenchSystem.ownCPUSeconds()
    for n in 0..<count {
      let due = DaemonBenchSystem.now()
      submitted[n] = due
      try publisher.submit([
        OutboxMessage(topic: topic, payload: payload(n), kind: .position, time: Double(n))
      ])
      let next = due + UInt64(1e9 / rate)
      let now = DaemonBenchSystem.now()
      if now < next { usleep(UInt32((next - now) / 1000)) }
    }
    _ = waitUntil(30) { receiver.complete(count).all }
    let cpuOutbox = DaemonBenchSystem.ownCPUSeconds() - cpuBefore
    let latencies = receiver.arrivals.withLock { $0 }.filter { $0.n >= 0 && $0.n < count }
      .map { Double($0.time - submitted[$0.n]) / 1e6 }.sorted()
    publisher.stop()
    receiver.arrivals.withLock { $0.removeAll() }

    // The same, published directly (no store): the floor.
    let direct = PublishFleetBench.Counters()
    let directClient = try MQTTClient(
      MQTTClient.Configuration(host: "127.0.0.1", port: Int32(port), clientID: "bench-direct")
    ) { event in
      if case .connected = event { direct.connected.add(1, ordering: .relaxed) }
    }
    directClient.start()
    guard waitUntil(30, { direct.connected.load(ordering: .relaxed) > 0 }) else {
      throw BenchError("the direct client did not connect")
    }
    for n in 0..<count {
      let due = DaemonBenchSystem.now()
      submitted[n] = due
      _ = try? directClient.publish(topic: topic, payload: Array(payload(n).utf8))
      let next = due + UInt64(1e9 / rate)
      let now = DaemonBenchSystem.now()
      if now < next { usleep(UInt32((next - now) / 1000)) }
    }
    _ = waitUntil(30) { receiver.complete(count).all }
    let floor = receiver.arrivals.withLock { $0 }.filter { $0.n >= 0 && $0.n < count }
      .map { Double($0.time - submitted[$0.n]) / 1e6 }.sorted()
    directClient.stop()
    receiver.arrivals.withLock { $0.removeAll() }
    print(
      String(
        format:
          "  10 Hz, %d messages, submit to arrival: p50 %.2f ms, p99 %.2f ms, max %.2f ms"
          + " (target p99 <= 10 ms); published directly without the store: p50 %.2f, p99 %.2f ms",
        latencies.count, percentile(latencies, 0.5), percentile(latencies, 0.99),
        latencies.last ?? .nan, percentile(floor, 0.5), percentile(floor, 0.99)))
    print(
      String(
        format:
          "  CPU per message through the outbox at 10 Hz (this process: the publisher and the"
          + " receiving client): %.0f µs",
        cpuOutbox / Double(count) * 1e6))

    // 2. Throughput after an outage: 100,000 messages kept while the broker is away.
    DaemonBenchSystem.stop(brokerPID)
    let backlog = 100_000
    let offline = try OutboxPublisher(
      store: store,
      mqtt: MQTTClient.Configuration(
        host: "127.0.0.1", port: Int32(port), clientID: "bench-offline"),
      outboxLimit: 200_000)
    offline.start()
    let fill = DaemonBenchSystem.now()
    for start in stride(from: 0, to: backlog, by: 1000) {
      try offline.submit(
        (start..<(start + 1000)).map {
          OutboxMessage(topic: topic, payload: payload($0), kind: .position, time: Double($0))
        })
    }
    let fillSeconds = Double(DaemonBenchSystem.now() - fill) / 1e9
    brokerPID = try startBroker(directory, port: port)
    guard waitUntil(60, { receiver.connected.withLock { $0 } && offline.status.connected }) else {
      throw BenchError("no reconnection")
    }
    let drainStart = DaemonBenchSystem.now()
    let cpuDrain = DaemonBenchSystem.ownCPUSeconds()
    let drained = waitUntil(300) { receiver.complete(backlog).all }
    let drainSeconds = Double(DaemonBenchSystem.now() - drainStart) / 1e9
    let drainCPU = DaemonBenchSystem.ownCPUSeconds() - cpuDrain
    let (_, ordered) = receiver.complete(backlog)
    _ = waitUntil(30) { (try? store.outboxDepth()) == 0 }
    offline.stop()
    print(
      String(
        format:
          "  outage of %d messages: kept in %.2f s (%.0f/s); after the broker returned, %@ in"
          + " %.2f s: %.0f messages/s (target >= 20,000), %@; CPU %.1f µs a message",
        backlog, fillSeconds, Double(backlog) / fillSeconds,
        drained ? "all delivered" : "NOT ALL delivered", drainSeconds,
        Double(backlog) / drainSeconds, ordered ? "in order" : "OUT OF ORDER",
        drainCPU / Double(backlog) * 1e6))
    receiver.arrivals.withLock { $0.removeAll() }

    // 3. mosquitto_pub publishing the same messages (QoS 1, one per line).
    if FileManager.default.isExecutableFile(atPath: mosquittoPub) {
      let input = directory + "/messages.txt"
      try (0..<backlog).map(payload).joined(separator: "\n").appending("\n").write(
        toFile: input, atomically: true, encoding: .utf8)
      let started = DaemonBenchSystem.now()
      let pid = try DaemonBenchSystem.spawn(
        "/bin/sh",
        ["-c", "exec \(mosquittoPub) -h 127.0.0.1 -p \(port) -q 1 -t \(topic) -l < \(input)"],
        logPath: directory + "/mosquitto_pub.log")
      var usage = rusage()
      var status: Int32 = 0
      _ = wait4(pid, &status, 0, &usage)
      let seconds = Double(DaemonBenchSystem.now() - started) / 1e9
      let cpu =
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
      _ = waitUntil(60) { receiver.complete(backlog).all }
      print(
        String(
          format:
            "  mosquitto_pub -q 1 -l, the same %d messages: %.2f s (%.0f/s), CPU %.1f µs a message",
          backlog, seconds, Double(backlog) / seconds, cpu / Double(backlog) * 1e6))
    }
  }
}

/// A benchmark that could not run, with why.
struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
