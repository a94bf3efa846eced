import Foundation
import LocationModel
import Testing

@testable import LocationSources

/// A context that records the scans and failures a source sends. Scheduled actions are recorded;
/// those due in less than `autoRunBelow` seconds (the source's put-off emissions) also run on the
/// real clock, the others (retries, scan requests) only when the test runs them.
final class WifiRecordingContext: SourceContext, @unchecked Sendable {
  // Safe: every stored property is read and written with `condition` locked.
  private let condition = NSCondition()
  private let autoRunBelow: Double
  private var scans: [WifiScan] = []
  private var other = 0
  private var failures: [SourceError] = []
  private var scheduled: [(delay: Double, action: @Sendable () -> Void)] = []

  /// A cancellation that does nothing (cancelled actions find their session gone).
  struct Token: Cancellable {
    /// Does nothing.
    func cancel() {}
  }

  /// What arrived so far.
  struct Arrived {
    /// The scans, oldest first.
    var scans: [WifiScan]
    /// Fixes, headings and advertisements (a Wi-Fi source sends none).
    var other: Int
    /// The failures, oldest first.
    var failures: [SourceError]
    /// The delays of the scheduled actions.
    var delays: [Double]
  }

  /// A context that runs actions due in less than `autoRunBelow` seconds by itself.
  init(autoRunBelow: Double = WifiSource.minimumEmissionInterval) {
    self.autoRunBelow = autoRunBelow
  }

  /// The real clock.
  var now: EngineInstant {
    EngineInstant(
      monotonic: ProcessInfo.processInfo.systemUptime, wall: Date().timeIntervalSince1970)
  }

  /// Counts a fix.
  func emit(_ fix: Fix) { record { $0.other += 1 } }
  /// Counts a heading.
  func emitHeading(_ sample: HeadingSample) { record { $0.other += 1 } }
  /// Counts an advertisement.
  func emitAdvertisement(_ advertisement: BeaconAdvertisement) { record { $0.other += 1 } }
  /// Records a scan.
  func emitScan(_ scan: WifiScan) { record { $0.scans.append(scan) } }
  /// Records a failure.
  func fail(_ error: SourceError) { record { $0.failures.append(error) } }
  /// Ignored (a Wi-Fi source never ends).
  func end() {}

  /// Records the action; runs it on the real clock when it is due in less than `autoRunBelow`.
  @discardableResult
  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    record { $0.scheduled.append((seconds, action)) }
    if seconds < autoRunBelow {
      DispatchQueue.global().asyncAfter(deadline: .now() + max(seconds, 0), execute: action)
    }
    return Token()
  }

  /// Changes the record under the lock and wakes the waiters.
  private func record(_ change: (WifiRecordingContext) -> Void) {
    condition.lock()
    change(self)
    condition.broadcast()
    condition.unlock()
  }

  /// What arrived (call with `condition` locked).
  private var arrived: Arrived {
    Arrived(scans: scans, other: other, failures: failures, delays: scheduled.map(\.delay))
  }

  /// A snapshot of what arrived.
  var snapshot: Arrived {
    condition.lock()
    defer { condition.unlock() }
    return arrived
  }

  /// Runs the last scheduled action whose delay is `delay`, as the runtime's clock would when
  /// its time comes; returns whether there was one.
  @discardableResult
  func runScheduled(delay: Double) -> Bool {
    condition.lock()
    let action = scheduled.last { $0.delay == delay }?.action
    condition.unlock()
    action?()
    return action != nil
  }

  /// Waits until `predicate` holds for what arrived, at most `timeout` seconds (a bound on the
  /// mock's answer, not a delay); returns whether it holds.
  func wait(timeout: Double = 60, until predicate: (Arrived) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while !predicate(arrived) {
      guard condition.wait(until: deadline) else { return predicate(arrived) }
    }
    return true
  }
}

@Suite struct WifiSourceTests {
  // MARK: Without components

  @Test func descriptorSaysScansAndLocationsAtLowPower() {
    let source = WifiSource()
    #expect(source.descriptor.url == "wifi")
    #expect(source.descriptor.producesScans)
    #expect(source.descriptor.producesLocation)
    #expect(!source.descriptor.producesHeading)
    #expect(!source.descriptor.producesBeacons)
    #expect(source.descriptor.power == .low)
    #expect(source.descriptor.nominalAccuracy == 50)
    #expect(WifiSource(interface: "wlan0").descriptor.url == "wifi://wlan0")
    #expect(WifiSource(interface: "wlan0").interface == "wlan0")
  }

  @Test func strengthPercentIsConvertedToDBm() {
    #expect(WifiAccessPointTable.dBm(percent: 0) == -100)
    #expect(WifiAccessPointTable.dBm(percent: 60) == -70)
    #expect(WifiAccessPointTable.dBm(percent: 75) == -62.5)
    #expect(WifiAccessPointTable.dBm(percent: 100) == -50)
    #expect(WifiAccessPointTable.dBm(percent: 255) == -50)
    #expect(WifiAccessPointTable.dBm(percent: -3) == -100)
  }

  @Test func bssidsAreParsedFromHwAddress() {
    #expect(AccessPointReading.bssid("00:11:22:AA:bb:Cc") == 0x0011_22AA_BBCC)
    #expect(AccessPointReading.bssid("00:11:22:AA:BB") == nil)
    #expect(AccessPointReading.bssid("00:11:22:AA:BB:CG") == nil)
    #expect(AccessPointReading.bssid("") == nil)
    let point = WifiAccessPointTable.accessPoint(
      .init(),
      applying: [
        "HwAddress": .string("02:00:00:00:00:01"), "Ssid": .bytes(Array("cafe".utf8)),
        "Strength": .byte(80), "Frequency": .uint32(5180), "LastSeen": .int32(12),
        "Flags": .uint32(1),
      ])
    #expect(
      point
        == .init(
          bssid: 0x0200_0000_0001, ssid: Array("cafe".utf8), strength: 80, frequency: 5180,
          lastSeen: 12))
    // A wrong type is ignored; an unreadable address leaves the access point out.
    let unchanged = WifiAccessPointTable.accessPoint(point, applying: ["Strength": .string("x")])
    #expect(unchanged.strength == 80)
    let bad = WifiAccessPointTable.accessPoint(point, applying: ["HwAddress": .string("nope")])
    #expect(WifiAccessPointTable.readings([bad]).isEmpty)
  }

  @Test func staleAndNeverSeenAccessPointsAreLeftOut() {
    let point = { (bssid: UInt64, strength: Int, lastSeen: Int) in
      WifiAccessPointTable.AccessPoint(
        bssid: bssid, ssid: [], strength: strength, frequency: 2412, lastSeen: lastSeen)
    }
    let readings = WifiAccessPointTable.readings([
      point(3, 50, 1000), point(1, 40, 880), point(2, 40, 879), point(4, 90, -1),
      // The same BSSID twice (two devices): the stronger one.
      point(3, 70, 990),
    ])
    #expect(readings.map(\.bssid) == [1, 3])
    #expect(readings.map(\.signal) == [-80, -65])
    #expect(WifiAccessPointTable.readings([point(4, 90, -1)]).isEmpty)
    #expect(WifiAccessPointTable.readings([]).isEmpty)
  }

  @Test func tableFollowsDevicesAndAccessPoints() {
    var table = WifiAccessPointTable()
    let properties: [String: DBusValue] = [
      "HwAddress": .string("02:00:00:00:00:01"), "Strength": .byte(50), "LastSeen": .int32(5),
    ]
    table.add(device: "/d/1", path: "/ap/1", properties: properties)
    #expect(table.readings.isEmpty)  // unknown device: ignored
    table.addDevice("/d/1")
    table.addDevice("/d/2")
    table.add(device: "/d/1", path: "/ap/1", properties: properties)
    #expect(table.readings.map(\.signal) == [-75])
    let known = table.change(path: "/ap/1", changed: ["Strength": .byte(100)])
    let unknown = table.change(path: "/ap/9", changed: ["Strength": .byte(100)])
    #expect(known && !unknown)
    #expect(table.readings.map(\.signal) == [-50])
    let elsewhere = table.remove(device: "/d/2", path: "/ap/1")
    let removed = table.remove(device: "/d/1", path: "/ap/1")
    #expect(!elsewhere && removed)
    #expect(table.readings.isEmpty)
    table.removeDevice("/d/1")
    #expect(table.devicePaths == ["/d/2"])
  }

  @Test func unreachableBusIsARetriedNonPermanentFailure() throws {
    let address = "unix:path=/nonexistent/wifi-test/bus"
    let source = WifiSource(interface: nil, busAddress: address, callTimeout: 1_000_000)
    let context = WifiRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait(timeout: 30) { $0.delays.count >= 1 && !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(!failure.isPermanent)
    #expect(failure.code == .unavailable)
    #expect(failure.message.hasPrefix("wifi:"))
    #expect(context.snapshot.delays == [WifiSource.initialRetryDelay])
    #expect(!WifiSource.isOnBus(busAddress: address))
  }

  // MARK: With NetworkManager mocked on a private bus

  /// Starts the harness, or skips (fails under CI) when a component is missing.
  private static func harness(withMock: Bool = true) throws -> NetworkManagerMockHarness? {
    do {
      return try NetworkManagerMockHarness.start(withMock: withMock)
    } catch {
      try PrivateBusHarness.skipOrFail(error)
      return nil
    }
  }

  /// A Wi-Fi device `wlan0` with three access points (one of them `_nomap`) and an Ethernet
  /// device; returns the device's path and the access points' paths.
  private static func populate(_ harness: NetworkManagerMockHarness) throws -> (
    device: String, accessPoints: [String]
  ) {
    try harness.addEthernetDevice("eth0", interface: "eth0")
    let device = try harness.addWifiDevice("wlan0", interface: "wlan0")
    let accessPoints = [
      try harness.addAccessPoint(
        device: device, name: "ap1", ssid: "cafe", bssid: "02:00:00:00:00:01", frequency: 2412,
        strength: 80),
      try harness.addAccessPoint(
        device: device, name: "ap2", ssid: "library", bssid: "02:00:00:00:00:02",
        frequency: 5180, strength: 45),
      try harness.addAccessPoint(
        device: device, name: "ap3", ssid: "home_nomap", bssid: "02:00:00:00:00:03",
        frequency: 2437, strength: 100),
    ]
    return (device, accessPoints)
  }

  @Test func noNetworkManagerOnTheBusSaysSo() throws {
    guard let harness = try Self.harness(withMock: false) else { return }
    defer { harness.stop() }
    #expect(!WifiSource.isOnBus(busAddress: harness.busAddress, timeout: 60_000_000))
    let source = WifiSource(interface: nil, busAddress: harness.busAddress)
    let context = WifiRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { $0.delays.count >= 1 && !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(!failure.isPermanent)
    #expect(failure.code == .unavailable)
    #expect(
      failure.message.hasPrefix("wifi: NetworkManager is not on the system bus; start"),
      "\(failure.message)")
    #expect(context.snapshot.delays == [WifiSource.initialRetryDelay])
  }

  @Test func firstScanHasEveryAccessPointOfTheDevice() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    _ = try Self.populate(harness)
    #expect(WifiSource.isOnBus(busAddress: harness.busAddress, timeout: 60_000_000))

    let source = WifiSource(interface: "wlan0", busAddress: harness.busAddress)
    let context = WifiRecordingContext()
    let before = Date().timeIntervalSince1970
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.scans.isEmpty || !$0.failures.isEmpty })
    let scan = try #require(context.snapshot.scans.first, "\(harness.log())")
    #expect(scan.source == "wifi://wlan0")
    #expect(scan.time >= before - 1 && scan.time <= Date().timeIntervalSince1970 + 1)
    #expect(scan.readings.map(\.bssid) == [0x0200_0000_0001, 0x0200_0000_0002, 0x0200_0000_0003])
    #expect(
      scan.readings.map { String(decoding: $0.ssid, as: UTF8.self) } == [
        "cafe", "library", "home_nomap",
      ])
    #expect(scan.readings.map(\.signal) == [-60, -77.5, -50])
    #expect(scan.readings.map(\.frequency) == [2412, 5180, 2437])
    // The source passes `_nomap` networks on: the engine filters them.
    #expect(scan.readings.last?.optsOut == true)
    // A scan was asked for at start (after the first scan went out), and the next round is
    // planned.
    #expect(context.wait { $0.delays.contains(WifiSource.scanInterval) })
    #expect(harness.scanRequests == 1, "\(harness.log())")
    #expect(context.runScheduled(delay: WifiSource.scanInterval))
    #expect(context.wait { $0.delays.filter { $0 == WifiSource.scanInterval }.count >= 2 })
    #expect(harness.scanRequests == 2, "\(harness.log())")
    let arrived = context.snapshot
    #expect(arrived.failures.isEmpty, "\(arrived.failures)")
    #expect(arrived.other == 0)
  }

  @Test func oneCompletedScanIsOneWifiScan() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    let (device, accessPoints) = try Self.populate(harness)
    let source = WifiSource(interface: nil, busAddress: harness.busAddress)
    let context = WifiRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.scans.isEmpty })
    #expect(context.snapshot.scans.first?.source == "wifi")

    // What a scan of NetworkManager announces: access points gone and new, then `LastScan`.
    try harness.removeAccessPoint(device: device, path: accessPoints[1])
    try harness.addAccessPoint(
      device: device, name: "ap4", ssid: "station", bssid: "02:00:00:00:00:04", frequency: 2462,
      strength: 30)
    try harness.setLastScan(device, 200_000)
    let expected: [UInt64] = [0x0200_0000_0001, 0x0200_0000_0003, 0x0200_0000_0004]
    #expect(context.wait { $0.scans.last?.readings.map(\.bssid) == expected })
    let scans = context.snapshot.scans
    #expect(scans.count == 2, "one WifiScan at start, one for the scan: \(scans.count)")
    #expect(scans.last?.readings.last?.signal == -85)
    #expect(context.snapshot.failures.isEmpty)
  }

  @Test func withoutLastScanAddedAndRemovedAccessPointsMakeANewScan() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    let device = try harness.addOldWifiDevice("wlan0", interface: "wlan0")
    let first = try harness.addAccessPoint(
      device: device, name: "ap1", ssid: "cafe", bssid: "02:00:00:00:00:01", frequency: 2412,
      strength: 80)
    let source = WifiSource(interface: nil, busAddress: harness.busAddress)
    let context = WifiRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.scans.isEmpty })

    try harness.removeAccessPoint(device: device, path: first)
    try harness.addAccessPoint(
      device: device, name: "ap4", ssid: "station", bssid: "02:00:00:00:00:04", frequency: 2462,
      strength: 30)
    #expect(context.wait { $0.scans.last?.readings.map(\.bssid) == [0x0200_0000_0004] })
    // Two changes within a second: at most one scan per second.
    let times = context.snapshot.scans.map(\.time)
    for (earlier, later) in zip(times, times.dropFirst()) {
      #expect(later - earlier >= WifiSource.minimumEmissionInterval - 0.05, "\(times)")
    }
    #expect(context.snapshot.failures.isEmpty)
  }

  @Test func strengthChangesShowInTheScanAfterLastScanChanges() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    let (device, accessPoints) = try Self.populate(harness)
    let source = WifiSource(interface: nil, busAddress: harness.busAddress)
    let context = WifiRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.scans.isEmpty })

    try harness.setStrength(accessPoints[0], 20)
    // An access point not reported for more than 120 s (relative to the newest) is left out.
    try harness.setLastSeen(accessPoints[1], 1)
    try harness.setLastSeen(accessPoints[0], 200)
    try harness.setLastSeen(accessPoints[2], 200)
    try harness.setLastScan(device, 200_000)
    #expect(context.wait { $0.scans.count >= 2 })
    let scan = try #require(context.snapshot.scans.last)
    #expect(scan.readings.map(\.bssid) == [0x0200_0000_0001, 0x0200_0000_0003])
    #expect(scan.readings.first?.signal == -90)
    // The same LastScan again is not a new scan; a later one is.
    try harness.setLastScan(device, 200_000)
    try harness.setStrength(accessPoints[2], 50)
    try harness.setLastScan(device, 230_000)
    #expect(context.wait { $0.scans.count >= 3 })
    #expect(context.snapshot.scans.last?.readings.last?.signal == -75)
    #expect(context.snapshot.scans.count == 3)
    #expect(context.snapshot.failures.isEmpty)
  }

  @Test func noWifiDeviceIsUnavailableUntilOneIsAdded() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    try harness.addEthernetDevice("eth0", interface: "eth0")
    let source = WifiSource(interface: nil, busAddress: harness.busAddress)
    let context = WifiRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(failure.code == .unavailable)
    #expect(!failure.isPermanent)
    #expect(failure.message.contains("no Wi-Fi device"), "\(failure.message)")
    #expect(failure.message.contains("eth0"), "\(failure.message)")

    // A device appears (DeviceAdded): its scan follows, without a retry. Its access point then
    // comes with the scan that found it (`LastScan` moves), as from NetworkManager: the source
    // may read the device before or after the access point was added (it was read before it
    // once, on a loaded CI machine, and a device with `LastScan` waits for the next scan).
    let device = try harness.addWifiDevice("wlan0", interface: "wlan0")
    try harness.addAccessPoint(
      device: device, name: "ap1", ssid: "cafe", bssid: "02:00:00:00:00:01", frequency: 2412,
      strength: 80)
    try harness.setLastScan(device, 2000)
    #expect(context.wait { $0.scans.last?.readings.count == 1 })
    let arrived = context.snapshot
    #expect(arrived.failures.count == 1)
    #expect(!arrived.delays.contains(WifiSource.initialRetryDelay))

    // A named interface that is not there.
    let named = WifiSource(interface: "wlan1", busAddress: harness.busAddress)
    let namedContext = WifiRecordingContext()
    named.start(context: namedContext)
    defer { named.stop() }
    #expect(namedContext.wait { !$0.failures.isEmpty })
    let message = namedContext.snapshot.failures.first?.message ?? ""
    #expect(message.contains("named wlan1") && message.contains("wlan0"), "\(message)")
  }

  @Test func removedDeviceIsUnavailableUntilOneReturns() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    let (device, _) = try Self.populate(harness)
    let source = WifiSource(interface: nil, busAddress: harness.busAddress)
    let context = WifiRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.scans.isEmpty })

    try harness.removeDevice(device)
    #expect(context.wait { !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(failure.code == .unavailable)
    #expect(!failure.isPermanent)
    #expect(failure.message.contains("removed"), "\(failure.message)")

    let heard = context.snapshot.scans.count
    let again = try harness.addWifiDevice("wlan2", interface: "wlan2")
    try harness.addAccessPoint(
      device: again, name: "ap7", ssid: "back", bssid: "02:00:00:00:00:07", frequency: 2412,
      strength: 60)
    #expect(context.wait { $0.scans.count > heard && $0.scans.last?.readings.count == 1 })
    #expect(context.snapshot.scans.last?.readings.first?.bssid == 0x0200_0000_0007)
    #expect(!context.snapshot.delays.contains(WifiSource.initialRetryDelay))
  }

  @Test func networkManagerLeavingIsADisconnectionThenARetry() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    _ = try Self.populate(harness)
    let source = WifiSource(interface: nil, busAddress: harness.busAddress)
    let context = WifiRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.scans.isEmpty })

    harness.stopMock()
    #expect(context.wait { !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(failure.code == .disconnected, "\(failure)")
    #expect(!failure.isPermanent)
    #expect(failure.message.contains("NetworkManager"), "\(failure.message)")
    #expect(context.snapshot.delays.filter { $0 == WifiSource.initialRetryDelay }.count == 1)

    // Back on the bus: the scheduled attempt reads the new device.
    try harness.startMock()
    let device = try harness.addWifiDevice("wlan1", interface: "wlan1")
    try harness.addAccessPoint(
      device: device, name: "ap9", ssid: "new", bssid: "02:00:00:00:00:09", frequency: 2412,
      strength: 60)
    let heard = context.snapshot.scans.count
    #expect(context.runScheduled(delay: WifiSource.initialRetryDelay))
    #expect(context.wait { $0.scans.count > heard })
    #expect(context.snapshot.scans.last?.readings.map(\.bssid) == [0x0200_0000_0009])
    #expect(context.snapshot.failures.count == 1)
  }
}
