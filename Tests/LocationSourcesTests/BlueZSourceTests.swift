import Foundation
import LocationFormats
import LocationModel
import Testing

@testable import LocationSources

/// A context that records the advertisements and failures a source sends and keeps scheduled
/// actions for the test to run.
final class BlueZRecordingContext: SourceContext, @unchecked Sendable {
  // Safe: every stored property is read and written with `condition` locked.
  private let condition = NSCondition()
  private var advertisements: [BeaconAdvertisement] = []
  private var other = 0
  private var failures: [SourceError] = []
  private var scheduled: [(delay: Double, action: @Sendable () -> Void)] = []

  /// A cancellation that does nothing (the test runs scheduled actions itself).
  struct Token: Cancellable {
    func cancel() {}
  }

  /// What arrived so far.
  struct Arrived {
    /// The advertisements, oldest first.
    var advertisements: [BeaconAdvertisement]
    /// Fixes and headings (a beacon source sends none).
    var other: Int
    /// The failures, oldest first.
    var failures: [SourceError]
    /// The delays of the scheduled actions.
    var delays: [Double]
  }

  var now: EngineInstant {
    EngineInstant(
      monotonic: ProcessInfo.processInfo.systemUptime, wall: Date().timeIntervalSince1970)
  }

  func emit(_ fix: Fix) { record { $0.other += 1 } }
  func emitHeading(_ sample: HeadingSample) { record { $0.other += 1 } }
  func emitAdvertisement(_ advertisement: BeaconAdvertisement) {
    record { $0.advertisements.append(advertisement) }
  }
  func fail(_ error: SourceError) { record { $0.failures.append(error) } }
  func end() {}

  @discardableResult
  func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> any Cancellable
  {
    record { $0.scheduled.append((seconds, action)) }
    return Token()
  }

  private func record(_ change: (BlueZRecordingContext) -> Void) {
    condition.lock()
    change(self)
    condition.broadcast()
    condition.unlock()
  }

  private var arrived: Arrived {
    Arrived(
      advertisements: advertisements, other: other, failures: failures,
      delays: scheduled.map(\.delay))
  }

  /// A snapshot of what arrived.
  var snapshot: Arrived {
    condition.lock()
    defer { condition.unlock() }
    return arrived
  }

  /// Runs the scheduled action at `index`, as the runtime's clock would when its time comes.
  func runScheduled(at index: Int) {
    condition.lock()
    let action = scheduled.indices.contains(index) ? scheduled[index].action : nil
    condition.unlock()
    action?()
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

@Suite struct BlueZSourceTests {
  /// E2C56DB5-DFFB-48D2-B060-D0F5A71096E0.
  static let uuid = BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)

  /// Apple's manufacturer data for an iBeacon of `uuid`, as hexadecimal.
  static func iBeacon(major: UInt16, minor: UInt16, power: Int = -59) -> String {
    IBeaconFrame(uuid: uuid, major: major, minor: minor, measuredPower: power).manufacturerData
      .map { String(format: "%02x", $0) }.joined()
  }

  /// `ManufacturerData` with an iBeacon (major 1, minor 2, -59 dBm at 1 m) as Apple's entry.
  static let beaconData = "004c=" + iBeacon(major: 1, minor: 2)

  // MARK: Without components

  @Test func descriptorSaysBeaconsOnlyAtLowPower() {
    let source = BlueZSource()
    #expect(source.descriptor.url == "bluez")
    #expect(source.descriptor.producesBeacons)
    #expect(!source.descriptor.producesLocation)
    #expect(!source.descriptor.producesHeading)
    #expect(source.descriptor.power == .low)
    #expect(source.descriptor.nominalAccuracy == .infinity)
    #expect(BlueZSource(adapter: "hci1").descriptor.url == "bluez://hci1")
    #expect(source.malformedFrames == 0)
  }

  @Test func appleEntryIsPickedOutOfManufacturerData() throws {
    let frame = IBeaconFrame(uuid: Self.uuid, major: 1, minor: 2, measuredPower: -59)
    let data = DBusValue.dictionary([
      .init(key: .uint16(0x0075), value: .bytes([0xAA, 0xBB])),
      .init(key: .uint16(0x004C), value: .bytes(frame.manufacturerData)),
    ])
    #expect(try BlueZBeaconTable.frame(inManufacturerData: data) == frame)
    // Another company only; Apple's other data (type 0x10, Nearby); not a dictionary.
    let others = DBusValue.dictionary([.init(key: .uint16(0x0075), value: .bytes([0x02, 0x15]))])
    #expect(try BlueZBeaconTable.frame(inManufacturerData: others) == nil)
    let nearby = DBusValue.dictionary([.init(key: .uint16(0x004C), value: .bytes([0x10, 0x05]))])
    #expect(try BlueZBeaconTable.frame(inManufacturerData: nearby) == nil)
    #expect(try BlueZBeaconTable.frame(inManufacturerData: .bytes([0x02, 0x15])) == nil)
    let short = DBusValue.dictionary([
      .init(key: .uint16(0x004C), value: .bytes(Array(frame.manufacturerData.dropLast())))
    ])
    #expect(throws: FormatError.self) { try BlueZBeaconTable.frame(inManufacturerData: short) }
  }

  @Test func tableHearsDevicesWithAnRSSIAndCountsMalformedFrames() {
    let frame = IBeaconFrame(uuid: Self.uuid, major: 1, minor: 2, measuredPower: -59)
    let apple = { (bytes: [UInt8]) in
      DBusValue.dictionary([.init(key: .uint16(0x004C), value: .bytes(bytes))])
    }
    let path = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
    var table = BlueZBeaconTable()
    // Cached: no RSSI, nothing heard; then heard.
    #expect(
      table.add(path: path, properties: ["ManufacturerData": apple(frame.manufacturerData)])
        == nil)
    let heard = table.change(path: path, changed: ["RSSI": .int16(-60)], invalidated: [])
    #expect(heard == .init(frame: frame, rssi: -60, address: "AA:BB:CC:DD:EE:01"))
    // Another property alone is not an advertisement; an invalidated RSSI silences the device.
    #expect(table.change(path: path, changed: ["Connected": .bool(false)], invalidated: []) == nil)
    #expect(table.change(path: path, changed: [:], invalidated: ["RSSI"]) == nil)
    #expect(
      table.change(
        path: path, changed: ["ManufacturerData": apple(frame.manufacturerData)],
        invalidated: []) == nil)
    // Malformed: counted, and the device keeps no frame.
    #expect(
      table.change(
        path: path,
        changed: [
          "RSSI": .int16(-61),
          "ManufacturerData": apple([
            0x02, 0x14,
          ]),
        ], invalidated: []) == nil)
    #expect(table.malformedFrames == 1)
    #expect(table.change(path: path, changed: ["RSSI": .int16(-62)], invalidated: []) == nil)
    table.removeAll(under: "/org/bluez/hci0")
    #expect(table.devices.isEmpty)
    #expect(BlueZBeaconTable.address(fromPath: "/org/bluez/hci0/dev_00_11") == "00:11")
  }

  @Test func adapterIsPickedByNameOrPower() {
    let adapter = { (powered: Bool) in
      [BlueZClient.adapterInterface: ["Powered": DBusValue.bool(powered)]]
    }
    let objects: [String: BlueZClient.Interfaces] = [
      "/org/bluez": ["org.bluez.AgentManager1": [:]],
      "/org/bluez/hci0": adapter(false),
      "/org/bluez/hci1": adapter(true),
      "/org/bluez/hci1/dev_AA_BB_CC_DD_EE_FF": [BlueZClient.deviceInterface: [:]],
    ]
    #expect(BlueZClient.adapter(named: nil, in: objects)?.path == "/org/bluez/hci1")
    #expect(BlueZClient.adapter(named: "hci0", in: objects)?.path == "/org/bluez/hci0")
    #expect(BlueZClient.adapter(named: "hci2", in: objects) == nil)
    #expect(
      BlueZClient.adapter(named: nil, in: ["/org/bluez/hci0": adapter(false)])?.path
        == "/org/bluez/hci0")
  }

  @Test func unreachableBusIsARetriedNonPermanentFailure() throws {
    let address = "unix:path=/nonexistent/bluez-test/bus"
    let source = BlueZSource(adapter: nil, busAddress: address, callTimeout: 1_000_000)
    let context = BlueZRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait(timeout: 30) { $0.delays.count >= 1 && !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(!failure.isPermanent)
    #expect(failure.code == .unavailable)
    #expect(failure.message.hasPrefix("bluez:"))
    #expect(context.snapshot.delays == [BlueZSource.initialRetryDelay])
    #expect(!BlueZSource.adapterAvailable(adapter: nil, busAddress: address))
  }

  // MARK: With BlueZ mocked on a private bus

  /// Starts the harness, or skips (fails under CI) when a component is missing.
  private static func harness(withMock: Bool = true) throws -> BlueZMockHarness? {
    do {
      return try BlueZMockHarness.start(withMock: withMock)
    } catch {
      try PrivateBusHarness.skipOrFail(error)
      return nil
    }
  }

  /// `adapterAvailable` on the harness's bus, with a generous wait for the mock (CI's two cores
  /// are shared with the whole suite).
  private static func available(_ adapter: String?, _ harness: BlueZMockHarness) -> Bool {
    BlueZSource.adapterAvailable(
      adapter: adapter, busAddress: harness.busAddress, timeout: 60_000_000)
  }

  @Test func noBlueZOnTheBusNamesBluetoothd() throws {
    guard let harness = try Self.harness(withMock: false) else { return }
    defer { harness.stop() }
    #expect(!Self.available(nil, harness))
    let source = BlueZSource(adapter: nil, busAddress: harness.busAddress)
    let context = BlueZRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { $0.delays.count >= 1 && !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(!failure.isPermanent)
    #expect(failure.code == .unavailable)
    #expect(failure.message.contains("bluetoothd"), "\(failure.message)")
    #expect(context.snapshot.delays == [1])
  }

  @Test func advertisementsFlowFromDevicesAndPropertyChanges() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    try harness.addAdapter("hci0")
    let beacon = try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:01", data: Self.beaconData, rssi: -60)
    let cached = try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:02", data: Self.beaconData, rssi: nil)
    let other = try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:03", data: "0075=0215aabbccdd", rssi: -50)
    #expect(Self.available(nil, harness))
    #expect(Self.available("hci0", harness))
    #expect(!Self.available("hci1", harness))

    let source = BlueZSource(adapter: "hci0", busAddress: harness.busAddress)
    let context = BlueZRecordingContext()
    let before = Date().timeIntervalSince1970
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.advertisements.isEmpty || !$0.failures.isEmpty })
    let first = try #require(context.snapshot.advertisements.first, "\(harness.log())")
    #expect(first.uuid.description == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
    #expect((first.major, first.minor, first.measuredPower, first.rssi) == (1, 2, -59, -60))
    #expect(first.address == "AA:BB:CC:DD:EE:01")
    #expect(first.time >= before - 1 && first.time <= Date().timeIntervalSince1970 + 1)
    // Discovery is LE with every advertisement reported (the filter is set before the start).
    #expect(try harness.adapterProperty("hci0", "Discovering") == .bool(true))
    let filter = try harness.adapterProperty("hci0", "DiscoveryFilter")
    #expect(filter[.string("Transport")] == .string("le"), "\(filter)")
    #expect(filter[.string("DuplicateData")] == .bool(true), "\(filter)")

    // A new RSSI alone repeats the frame; the non-Apple device stays silent.
    try harness.updateBeacon(other, rssi: -40)
    try harness.updateBeacon(beacon, rssi: -70)
    #expect(context.wait { $0.advertisements.count >= 2 })
    #expect(context.snapshot.advertisements.map(\.rssi) == [-60, -70])
    // New manufacturer data with an RSSI.
    try harness.updateBeacon(beacon, data: "004c=" + Self.iBeacon(major: 3, minor: 4), rssi: -65)
    #expect(context.wait { $0.advertisements.count >= 3 })
    let third = try #require(context.snapshot.advertisements.last)
    #expect((third.major, third.minor, third.rssi) == (3, 4, -65))
    // A malformed frame (length byte 0x14) is counted and skipped; then the cached device is
    // heard (which also shows that the malformed change was handled before it).
    try harness.updateBeacon(beacon, data: "004c=0214" + String(repeating: "00", count: 21))
    try harness.updateBeacon(cached, rssi: -80)
    #expect(context.wait { $0.advertisements.count >= 4 })
    let arrived = context.snapshot
    #expect(arrived.advertisements.map(\.address).last == "AA:BB:CC:DD:EE:02")
    #expect(arrived.advertisements.count == 4, "\(arrived.advertisements)")
    #expect(source.malformedFrames == 1)
    #expect(arrived.failures.isEmpty, "\(arrived.failures)")
    #expect(arrived.other == 0)

    // A removed device is forgotten; a new one is heard.
    try harness.removeBeacon(cached)
    try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:04", data: Self.beaconData, rssi: -55)
    #expect(context.wait { $0.advertisements.count >= 5 })
    #expect(context.snapshot.advertisements.last?.address == "AA:BB:CC:DD:EE:04")

    source.stop()
    #expect(try harness.adapterProperty("hci0", "Discovering") == .bool(false))
  }

  @Test func adapterRemovedIsAFailureUntilItReturns() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    try harness.addAdapter("hci0")
    let beacon = try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:01", data: Self.beaconData, rssi: -60)
    let source = BlueZSource(adapter: nil, busAddress: harness.busAddress)
    let context = BlueZRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.advertisements.isEmpty })

    try harness.removeAdapter("hci0")
    #expect(context.wait { !$0.failures.isEmpty })
    let heardBefore = context.snapshot.advertisements.count
    let failure = try #require(context.snapshot.failures.first)
    #expect(failure.code == .unavailable)
    #expect(!failure.isPermanent)
    #expect(failure.message.contains("hci0"), "\(failure.message)")
    #expect(context.snapshot.delays.isEmpty)

    // Back: discovery is set up again, and the device (still in BlueZ's objects) is heard.
    try harness.addAdapter("hci0")
    #expect(context.wait { $0.advertisements.count > heardBefore })
    #expect(try harness.adapterProperty("hci0", "Discovering") == .bool(true))
    try harness.updateBeacon(beacon, rssi: -66)
    #expect(context.wait { $0.advertisements.last?.rssi == -66 })
    #expect(context.snapshot.failures.count == 1)
  }

  @Test func noAdapterOrPoweredOffWaitsForOne() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    let source = BlueZSource(adapter: "hci0", busAddress: harness.busAddress)
    let context = BlueZRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.failures.isEmpty })
    #expect(context.snapshot.failures.first?.message.contains("no Bluetooth adapter") == true)

    // An adapter appears powered on, then is powered off and on again.
    try harness.addAdapter("hci0")
    try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:01", data: Self.beaconData, rssi: -60)
    #expect(context.wait { !$0.advertisements.isEmpty })
    try harness.setPowered("hci0", false)
    #expect(context.wait { $0.failures.count >= 2 })
    #expect(context.snapshot.failures.last?.message.contains("powered off") == true)
    #expect(!Self.available("hci0", harness))
    let heardBefore = context.snapshot.advertisements.count
    try harness.setPowered("hci0", true)
    #expect(context.wait { $0.advertisements.count > heardBefore })
    let arrived = context.snapshot
    #expect(arrived.failures.allSatisfy { !$0.isPermanent && $0.code == .unavailable })
    #expect(arrived.delays.isEmpty)
  }

  @Test func bluetoothdLeavingIsADisconnectionThenARetry() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    try harness.addAdapter("hci0")
    try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:01", data: Self.beaconData, rssi: -60)
    let source = BlueZSource(adapter: nil, busAddress: harness.busAddress)
    let context = BlueZRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.advertisements.isEmpty })

    harness.stopMock()
    #expect(context.wait { !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(failure.code == .disconnected, "\(failure)")
    #expect(!failure.isPermanent)
    #expect(failure.message.contains("bluetoothd"), "\(failure.message)")
    #expect(context.snapshot.delays == [BlueZSource.initialRetryDelay])

    // Back on the bus: the scheduled attempt starts discovery again.
    try harness.startMock()
    try harness.addAdapter("hci0")
    try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:05", data: Self.beaconData, rssi: -58)
    context.runScheduled(at: 0)
    #expect(context.wait { $0.advertisements.last?.address == "AA:BB:CC:DD:EE:05" })
    #expect(try harness.adapterProperty("hci0", "Discovering") == .bool(true))
    #expect(context.snapshot.failures.count == 1)
  }

  @Test func busGoingAwayIsARetriedDisconnection() throws {
    guard let harness = try Self.harness() else { return }
    defer { harness.stop() }
    try harness.addAdapter("hci0")
    try harness.addBeacon(
      adapter: "hci0", address: "AA:BB:CC:DD:EE:01", data: Self.beaconData, rssi: -60)
    let source = BlueZSource(adapter: nil, busAddress: harness.busAddress)
    let context = BlueZRecordingContext()
    source.start(context: context)
    defer { source.stop() }
    #expect(context.wait { !$0.advertisements.isEmpty })

    harness.busDaemon?.stop()
    #expect(context.wait { !$0.failures.isEmpty })
    let failure = try #require(context.snapshot.failures.first)
    #expect(failure.code == .disconnected, "\(failure)")
    #expect(!failure.isPermanent)
    #expect(context.snapshot.delays == [BlueZSource.initialRetryDelay])
  }
}
