import Foundation
import LocationFormats
import LocationModel
import LocationSources
import Synchronization

/// Issue 18's fleet figure: one broker, N simulated devices (10, 100, 1,000) each publishing an
/// OwnTracks `location` at 1 Hz with QoS 1 on a topic of its own, spread over the second.
///
/// A device is what `locationd`'s publisher is on the wire: one `MQTTClient` (a connection of its
/// own, with its loop thread) publishing the message `DevicePublisher` makes from a moving fix
/// (`OwnTracksLocation(fix:trackerID:)`, then `encoded()`), without the store (the outbox's commit
/// is measured in `locbench publish`'s first figure). The devices run in worker processes
/// (`locbench publish-fleet-worker`) of at most `--fleet-per-process` devices (250): libmosquitto
/// 2.0's `mosquitto_loop` refuses a socket numbered `FD_SETSIZE` (1,024) or more, and each client
/// holds three descriptors (its socket and a socket pair that wakes its loop), so one process
/// cannot hold more than about 330 clients. A subscriber on `owntracks/fleet/#` in this process
/// counts what arrives; latency is from the device's publish call to the arrival, both on
/// `CLOCK_MONOTONIC`, which the processes share.
enum PublishFleetBench {
  static let workerMode = "publish-fleet-worker"
  static let pattern = "owntracks/fleet/#"
  /// The fixes' first time (2026-01-01T00:00:00Z): a message's `tst` minus this is its second.
  static let epoch = 1_767_225_600

  static func topic(_ device: Int) -> String { "owntracks/fleet/d" + fourDigits(device) }

  static func fourDigits(_ value: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, 4 - text.count)) + text
  }

  /// The run's parameters: `--fleet-seconds N` (20) and `--fleet-per-process N` (250).
  struct Options {
    var seconds = 20
    var perProcess = 250
    var sizes = [10, 100, 1000]

    init(_ arguments: [String]) {
      var index = 0
      while index + 1 < arguments.count {
        let value = Int(arguments[index + 1])
        switch arguments[index] {
        case "--fleet-seconds": seconds = max(2, value ?? seconds)
        case "--fleet-per-process": perProcess = max(1, value ?? perProcess)
        default:
          index += 1
          continue
        }
        index += 2
      }
    }
  }

  static func run(_ arguments: [String]) {
    do {
      try measure(Options(arguments))
    } catch {
      print("publish fleet: \(error)")
    }
  }

  /// Raises this process's descriptor limit to its hard limit (the broker inherits it and holds
  /// one descriptor per device).
  static func raiseDescriptorLimit() -> rlim_t {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_cur < limit.rlim_max {
      limit.rlim_cur = limit.rlim_max
      setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
      getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return limit.rlim_cur
  }

  /// One fleet size's figures.
  struct Row {
    var devices: Int
    var processes: Int
    var connectSeconds: Double
    var sent: Int
    var failed: Int
    var delivered: Int
    var latencies: [Double]
    var devicesCPU: Double
    var brokerCPU: Double
    var subscriberCPU: Double
    var seconds: Int

    var perDeviceSecond: Double { devicesCPU / Double(devices * seconds) }
  }

  static func measure(_ options: Options) throws {
    let descriptors = raiseDescriptorLimit()
    let directory = try DaemonBenchLocationd.temporaryDirectory(prefix: "locbench-fleet")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let port = try DaemonBenchSystem.freeLoopbackPort()
    let brokerPID = try PublishBench.startBroker(directory, port: port)
    defer { DaemonBenchSystem.stop(brokerPID) }
    let subscriber = try Subscriber(port: port)
    defer { subscriber.stop() }
    guard PublishBench.waitUntil(30, { subscriber.connected.withLock { $0 } }) else {
      throw BenchError("the fleet's subscriber did not connect")
    }
    usleep(200_000)
    print(
      "Fleet (issue 18): N devices, each its own MQTTClient (one connection and loop thread) "
        + "publishing an OwnTracks location at 1 Hz, QoS 1, on owntracks/fleet/dNNNN, spread over "
        + "the second, \(options.seconds) s per N; devices in worker processes of at most "
        + "\(options.perProcess) (libmosquitto's loop refuses descriptors >= 1024, 3 per client); "
        + "one subscriber on \(pattern) here; descriptor limit \(descriptors)")
    var rows: [Row] = []
    for devices in options.sizes {
      let row = try round(
        devices: devices, options: options, port: port, brokerPID: brokerPID,
        directory: directory, subscriber: subscriber)
      rows.append(row)
      report(row)
    }
    if let first = rows.first, let last = rows.last, first.devices != last.devices {
      print(
        String(
          format:
            "  devices' CPU per device-second at N=%d against N=%d: %.2f (flat is near 1); "
            + "broker's CPU per message: %.2f",
          last.devices, first.devices, last.perDeviceSecond / first.perDeviceSecond,
          (last.brokerCPU / Double(max(1, last.sent)))
            / (first.brokerCPU / Double(max(1, first.sent)))))
    }
  }

  static func report(_ row: Row) {
    func percentile(_ p: Double) -> Double { PublishBench.percentile(row.latencies, p) }
    let messages = Double(max(1, row.sent))
    print(
      String(
        format:
          "  N=%d (%d process%@, connected in %.2f s): %.0f messages/s, delivered %d/%d%@; "
          + "latency p50 %.2f ms, p99 %.2f ms; devices' CPU %.1f µs per device-second, %.1f µs "
          + "a message; broker %.1f µs a message; subscriber %.1f µs a message",
        row.devices, row.processes, row.processes == 1 ? "" : "es", row.connectSeconds,
        Double(row.sent) / Double(row.seconds), row.delivered, row.sent,
        row.failed > 0 ? " (\(row.failed) publish calls failed)" : "", percentile(0.5),
        percentile(0.99), row.perDeviceSecond * 1e6, row.devicesCPU / messages * 1e6,
        row.brokerCPU / messages * 1e6, row.subscriberCPU / messages * 1e6))
  }

  /// Runs `devices` devices for `options.seconds` seconds.
  static func round(
    devices: Int, options: Options, port: Int, brokerPID: pid_t, directory: String,
    subscriber: Subscriber
  ) throws -> Row {
    let roundDirectory = directory + "/n\(devices)"
    try FileManager.default.createDirectory(
      atPath: roundDirectory, withIntermediateDirectories: true)
    subscriber.arrivals.withLock { $0.removeAll(keepingCapacity: true) }
    let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let processes = (devices + options.perProcess - 1) / options.perProcess
    let connectStart = DaemonBenchSystem.now()
    var workers: [pid_t] = []
    var reaped: Set<pid_t> = []
    func anyExited() -> Bool {
      for pid in workers where !reaped.contains(pid) && DaemonBenchSystem.hasExited(pid) {
        reaped.insert(pid)
      }
      return !reaped.isEmpty
    }
    defer {
      for pid in workers where !reaped.contains(pid) && !DaemonBenchSystem.hasExited(pid) {
        DaemonBenchSystem.stop(pid)
      }
    }
    for index in 0..<processes {
      let first = index * options.perProcess
      workers.append(
        try DaemonBenchSystem.spawn(
          executable,
          [
            workerMode, "--port", "\(port)", "--first", "\(first)", "--count",
            "\(min(options.perProcess, devices - first))", "--devices", "\(devices)",
            "--seconds", "\(options.seconds)", "--directory", roundDirectory, "--worker",
            "\(index)",
          ], logPath: roundDirectory + "/worker\(index).log"))
    }
    func logs() -> String {
      (0..<processes).compactMap {
        try? String(contentsOfFile: roundDirectory + "/worker\($0).log", encoding: .utf8)
      }.joined(separator: " ")
    }
    let ready = PublishBench.waitUntil(120) {
      (0..<processes).allSatisfy { access(roundDirectory + "/ready\($0)", F_OK) == 0 }
        || anyExited()
    }
    guard ready, (0..<processes).allSatisfy({ access(roundDirectory + "/ready\($0)", F_OK) == 0 })
    else { throw BenchError("N=\(devices): the devices did not all connect: \(logs())") }
    let connectSeconds = Double(DaemonBenchSystem.now() - connectStart) / 1e9
    let start = DaemonBenchSystem.now() + 300_000_000
    try "\(start)".write(toFile: roundDirectory + "/start", atomically: true, encoding: .utf8)
    sleepUntil(start)
    let broker0 = cpuSeconds(of: brokerPID)
    let subscriber0 = subscriber.cpuSeconds()
    sleepUntil(start + UInt64(options.seconds) * 1_000_000_000)
    let broker1 = cpuSeconds(of: brokerPID)
    let subscriber1 = subscriber.cpuSeconds()
    var statuses: [Int32] = []
    for pid in workers { statuses.append(DaemonBenchSystem.waitForExit(pid)) }
    workers.removeAll()
    guard statuses.allSatisfy({ $0 == 0 }) else {
      throw BenchError("N=\(devices): a worker failed (\(statuses)): \(logs())")
    }
    var published: [Int: UInt64] = [:]
    var row = Row(
      devices: devices, processes: processes, connectSeconds: connectSeconds, sent: 0, failed: 0,
      delivered: 0, latencies: [], devicesCPU: 0, brokerCPU: broker1 - broker0,
      subscriberCPU: subscriber1 - subscriber0, seconds: options.seconds)
    for index in 0..<processes {
      let text = try String(contentsOfFile: roundDirectory + "/result\(index)", encoding: .utf8)
      for line in text.split(separator: "\n") {
        let fields = line.split(separator: " ")
        if fields.first == "cpu", fields.count == 8 {
          row.devicesCPU += Double(fields[1]) ?? .nan
          row.sent += Int(fields[3]) ?? 0
          row.failed += Int(fields[5]) ?? 0
        } else if fields.count == 3, let device = Int(fields[0]), let second = Int(fields[1]),
          let time = UInt64(fields[2])
        {
          published[device * options.seconds + second] = time
        }
      }
    }
    // Everything sent has arrived, or 10 s passed.
    _ = PublishBench.waitUntil(10) { subscriber.arrivals.withLock { $0.count } >= row.sent }
    var seen = Set<Int>()
    for arrival in subscriber.arrivals.withLock({ $0 }) {
      let key = arrival.device * options.seconds + arrival.second
      guard arrival.device < devices, arrival.second < options.seconds,
        let sentAt = published[key], seen.insert(key).inserted
      else { continue }
      row.latencies.append(Double(Int64(arrival.time) - Int64(sentAt)) / 1e6)
    }
    row.delivered = seen.count
    row.latencies.sort()
    return row
  }

  /// The CPU time of the single-threaded process `pid`, seconds: from `/proc/PID/schedstat`
  /// (nanoseconds on the CPU) where the kernel keeps it, else `/proc/PID/stat` (10 ms ticks).
  static func cpuSeconds(of pid: pid_t) -> Double {
    if let text = try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8),
      let first = text.split(separator: " ").first, let nanoseconds = Double(first)
    {
      return nanoseconds / 1e9
    }
    return DaemonBenchSystem.usage(of: pid)?.cpuSeconds ?? .nan
  }

  static func sleepUntil(_ nanoseconds: UInt64) {
    var due = timespec(
      tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil) == EINTR {}
  }

  /// The device number of `owntracks/fleet/dNNNN`.
  static func device(_ topic: String) -> Int? {
    guard let slash = topic.lastIndex(of: "/") else { return nil }
    let name = topic[topic.index(after: slash)...]
    guard name.first == "d" else { return nil }
    return Int(name.dropFirst())
  }

  /// The payload's `"tst":N` minus `epoch`.
  static func second(_ payload: [UInt8]) -> Int? {
    let key = Array(#""tst":"#.utf8)
    guard payload.count > key.count else { return nil }
    for start in 0...(payload.count - key.count) where payload[start] == key[0] {
      guard payload[start..<(start + key.count)].elementsEqual(key) else { continue }
      var value = 0
      var digits = 0
      for byte in payload[(start + key.count)...] {
        guard (48...57).contains(byte) else { break }
        value = value * 10 + Int(byte - 48)
        digits += 1
      }
      return digits > 0 ? value - epoch : nil
    }
    return nil
  }

  /// The subscriber on `owntracks/fleet/#`: each arrival's device, second and time.
  final class Subscriber: Sendable {
    struct Arrival {
      var device: Int
      var second: Int
      var time: UInt64
    }

    let arrivals = Mutex<[Arrival]>([])
    let connected = Mutex(false)
    /// The CPU clock of the client's loop thread, where the messages are handled.
    private let threadClock = Mutex<clockid_t?>(nil)
    private let holder = Mutex<MQTTClient?>(nil)

    init(port: Int) throws {
      let made = try MQTTClient(
        MQTTClient.Configuration(host: "127.0.0.1", port: Int32(port), clientID: "fleet-subscriber")
      ) { [weak self] event in
        guard let self else { return }
        switch event {
        case .connected:
          var clock = clockid_t()
          if pthread_getcpuclockid(pthread_self(), &clock) == 0 {
            threadClock.withLock { $0 = clock }
          }
          try? holder.withLock { $0 }?.subscribe(PublishFleetBench.pattern)
          connected.withLock { $0 = true }
        case .message(let topic, let payload):
          let time = DaemonBenchSystem.now()
          if let device = PublishFleetBench.device(topic),
            let second = PublishFleetBench.second(payload)
          {
            arrivals.withLock { $0.append(Arrival(device: device, second: second, time: time)) }
          }
        case .refused, .disconnected:
          connected.withLock { $0 = false }
        case .acknowledged: break
        }
      }
      holder.withLock { $0 = made }
      made.start()
    }

    /// The loop thread's CPU time so far, seconds.
    func cpuSeconds() -> Double {
      guard let clock = threadClock.withLock({ $0 }) else { return .nan }
      var spec = timespec()
      clock_gettime(clock, &spec)
      return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Disconnects.
    func stop() { holder.withLock { $0 }?.stop() }
  }
}

extension PublishFleetBench {
  /// What a worker process's devices count, from their clients' loop threads.
  final class Counters: Sendable {
    let connected = Atomic<Int>(0)
    let acknowledged = Atomic<Int>(0)
    let lost = Atomic<Int>(0)
  }

  /// `locbench publish-fleet-worker --port P --first F --count C --devices N --seconds S
  /// --directory D --worker W`: devices F..<F+C of N; writes `D/readyW` when all are connected,
  /// waits for `D/start` (a `CLOCK_MONOTONIC` time), publishes for S seconds, then writes
  /// `D/resultW`: `cpu SECONDS sent N failed N acknowledged N`, then `DEVICE SECOND TIME` for each
  /// message published.
  static func worker(_ arguments: [String]) {
    var values: [String: String] = [:]
    for index in stride(from: 0, to: arguments.count - 1, by: 2) {
      values[arguments[index]] = arguments[index + 1]
    }
    guard let port = values["--port"].flatMap({ Int32($0) }),
      let first = values["--first"].flatMap({ Int($0) }),
      let count = values["--count"].flatMap({ Int($0) }),
      let devices = values["--devices"].flatMap({ Int($0) }),
      let seconds = values["--seconds"].flatMap({ Int($0) }),
      let directory = values["--directory"], let worker = values["--worker"]
    else {
      print(
        "usage: locbench \(workerMode) --port P --first F --count C --devices N --seconds S "
          + "--directory D --worker W")
      exit(2)
    }
    do {
      try work(
        port: port, devices: first..<(first + count), of: devices, seconds: seconds,
        directory: directory, worker: worker)
      exit(0)
    } catch {
      print("worker \(worker): \(error)")
      exit(1)
    }
  }

  static func work(
    port: Int32, devices range: Range<Int>, of devices: Int, seconds: Int, directory: String,
    worker: String
  ) throws {
    let counters = Counters()
    var clients: [MQTTClient] = []
    defer { for client in clients { client.stop() } }
    // Started 50 at a time, so that the broker's listen queue (100) does not overflow.
    for device in range {
      let client = try MQTTClient(
        MQTTClient.Configuration(
          host: "127.0.0.1", port: port, clientID: "fleet-d" + fourDigits(device))
      ) { event in
        switch event {
        case .connected: counters.connected.add(1, ordering: .relaxed)
        case .acknowledged: counters.acknowledged.add(1, ordering: .relaxed)
        case .disconnected, .refused: counters.lost.add(1, ordering: .relaxed)
        case .message: break
        }
      }
      clients.append(client)
      client.start()
      if clients.count % 50 == 0 || clients.count == range.count {
        let started = clients.count
        guard
          PublishBench.waitUntil(30, { counters.connected.load(ordering: .relaxed) >= started })
        else {
          throw BenchError(
            "\(counters.connected.load(ordering: .relaxed)) of \(started) clients connected "
              + "(\(counters.lost.load(ordering: .relaxed)) failures); highest descriptor "
              + "\(highestDescriptor()) (libmosquitto's loop refuses descriptors >= 1024)")
        }
      }
    }
    try "".write(toFile: directory + "/ready" + worker, atomically: true, encoding: .utf8)
    // The parent writes the start time when every worker is ready; a worker whose parent went
    // away gives up rather than waiting for ever.
    var startText: String?
    let told = PublishBench.waitUntil(600) {
      startText = try? String(contentsOfFile: directory + "/start", encoding: .utf8)
      return startText != nil
    }
    guard told else { throw BenchError("no start time in 600 s") }
    guard let start = startText.flatMap({ UInt64($0) }) else { throw BenchError("bad start") }
    // Each device's messages in time order: device d's k-th at start + k s + d/N s.
    var times: [(device: Int, second: Int, time: UInt64)] = []
    times.reserveCapacity(range.count * seconds)
    var failed = 0
    sleepUntil(start)
    let cpuStart = DaemonBenchSystem.ownCPUSeconds()
    for second in 0..<seconds {
      for (index, device) in range.enumerated() {
        let offset = UInt64(device) * 1_000_000_000 / UInt64(devices)
        sleepUntil(start + UInt64(second) * 1_000_000_000 + offset)
        // A device moving east at 10 m/s (about 0.000146° of longitude at 52° N).
        let fix = Fix(
          latitude: 52 + Double(device) * 0.001, longitude: 4.9 + Double(second) * 0.000146,
          altitude: 2, horizontalAccuracy: 5, verticalAccuracy: 3, speed: 10, course: 90,
          time: Double(epoch + second))
        do {
          let location = try OwnTracksLocation(fix: fix, trackerID: "fl")
          let payload = try OwnTracksMessage.location(location).encoded()
          let time = DaemonBenchSystem.now()
          try clients[index].publish(topic: topic(device), payload: Array(payload.utf8))
          times.append((device, second, time))
        } catch {
          failed += 1
        }
      }
    }
    sleepUntil(start + UInt64(seconds) * 1_000_000_000)
    let cpu = DaemonBenchSystem.ownCPUSeconds() - cpuStart
    _ = PublishBench.waitUntil(10) {
      counters.acknowledged.load(ordering: .relaxed) >= times.count
    }
    var text = "cpu \(cpu) sent \(times.count) failed \(failed) acknowledged "
    text += "\(counters.acknowledged.load(ordering: .relaxed))\n"
    for entry in times { text += "\(entry.device) \(entry.second) \(entry.time)\n" }
    try text.write(toFile: directory + "/result" + worker, atomically: true, encoding: .utf8)
  }

  /// The highest open descriptor of this process.
  static func highestDescriptor() -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap { Int($0) }.max() ?? -1
  }
}
