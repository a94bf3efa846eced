import CoreLocation
import CoreLocationTesting
import Foundation
import Testing

@testable import LocationCLI

/// `whereami --beacons` driven in a simulated world with scripted beacons (`placeBeacon`), through
/// the public CoreLocation API as the program runs it, its output and end recorded.
@MainActor
@Suite struct BeaconRunnerTests {
  static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
  static let other = "B9407F30-F5F8-466E-AFF9-25556B57FE6D"

  /// A world where the app may range, a runner for `arguments` bound to it, and its recorder.
  static func rig(
    _ arguments: [String], authorization: CLAuthorizationStatus = .authorizedWhenInUse
  ) throws -> (SimulatedEnvironment, BeaconRunner, BeaconOutletRecorder) {
    let world = SimulatedEnvironment(authorization: authorization)
    let recorder = BeaconOutletRecorder()
    let options = try WhereAmIOptions.parse(arguments)
    let runner = world.run { BeaconRunner(options: options, outlet: recorder.outlet) }
    world.run { runner.start() }
    world.pump()
    return (world, runner, recorder)
  }

  /// Without --watch, empty deliveries are not printed; the first one with a beacon is, and the
  /// run ends with success.
  @Test func oncePrintsTheFirstDeliveryWithABeacon() throws {
    let (world, runner, recorder) = try Self.rig(["--beacons", Self.uuid])
    world.advance(by: 1)
    #expect(recorder.lines.isEmpty && recorder.ending == nil)
    let uuid = try #require(UUID(uuidString: Self.uuid))
    world.placeBeacon(uuid: uuid, major: 1, minor: 2, rssi: -65)
    world.placeBeacon(uuid: uuid, major: 1, minor: 3, rssi: -59)
    world.advance(by: 1)
    // Closest first; 6 dB below the measured power is 2 m with n = 2.
    #expect(recorder.lines == ["\(Self.uuid) 1 3 near 1.00 -59", "\(Self.uuid) 1 2 near 2.00 -65"])
    #expect(recorder.ending?.code == .success && recorder.ending?.message == nil)
    #expect(runner.finished)
    world.advance(by: 1)
    #expect(recorder.lines.count == 2)
  }

  /// --json prints one object per delivery with the beacons' fields.
  @Test func jsonPrintsOneObjectPerDelivery() throws {
    let (world, runner, recorder) = try Self.rig(["--beacons", Self.uuid, "--json"])
    defer { withExtendedLifetime(runner) {} }
    world.placeBeacon(uuid: try #require(UUID(uuidString: Self.uuid)), major: 7, minor: 1)
    world.advance(by: 1)
    #expect(recorder.lines.count == 1)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(recorder.lines[0].utf8)) as? [String: Any])
    #expect(object["uuid"] as? String == Self.uuid)
    let beacons = try #require(object["beacons"] as? [[String: Any]])
    #expect(beacons.count == 1)
    #expect(beacons.first?["major"] as? Int == 7 && beacons.first?["minor"] as? Int == 1)
    #expect(beacons.first?["proximity"] as? String == "near")
    #expect(beacons.first?["accuracy"] as? Double == 1 && beacons.first?["rssi"] as? Int == -59)
    #expect(beacons.first?["timestamp"] as? String == "2026-01-01T00:00:01Z")
  }

  /// --watch prints every delivery, a beacon no longer heard as unknown, and --count ends it.
  @Test func watchPrintsEveryDeliveryUntilTheCount() throws {
    let (world, runner, recorder) = try Self.rig([
      "--beacons", Self.uuid, "--watch", "--count", "3",
    ])
    defer { withExtendedLifetime(runner) {} }
    let beacon = world.placeBeacon(
      uuid: try #require(UUID(uuidString: Self.uuid)), major: 1, minor: 2)
    world.advance(by: 1)
    beacon.remove()
    // The advertisement of the first tick's instant is still in the second tick's window.
    world.advance(by: 1)
    #expect(recorder.ending == nil)
    world.advance(by: 1)
    #expect(
      recorder.lines == [
        "\(Self.uuid) 1 2 near 1.00 -59", "\(Self.uuid) 1 2 near 1.00 -59",
        "\(Self.uuid) 1 2 unknown -1 0",
      ])
    #expect(recorder.ending?.code == .success)
  }

  /// An empty delivery is a line saying that no beacon of the UUID is in range, one per UUID.
  @Test func watchSaysWhenNoBeaconIsInRange() throws {
    let (world, runner, recorder) = try Self.rig([
      "--beacons", Self.uuid, "--beacons", Self.other, "--watch", "--count", "2",
    ])
    defer { withExtendedLifetime(runner) {} }
    world.placeBeacon(uuid: try #require(UUID(uuidString: Self.other)), major: 3, minor: 4)
    world.advance(by: 1)
    #expect(
      Set(recorder.lines) == [
        "no beacon of \(Self.uuid) in range", "\(Self.other) 3 4 near 1.00 -59",
      ])
    #expect(recorder.ending?.code == .success)
  }

  /// Without a beacon, the run ends after the default wait (status 1) or --timeout (status 4).
  @Test func noBeaconEndsTheRunAfterTheWait() throws {
    let (world, runner, recorder) = try Self.rig(["--beacons", Self.uuid])
    defer { withExtendedLifetime(runner) {} }
    #expect(recorder.scheduled.map(\.seconds) == [BeaconRunner.defaultWait])
    world.advance(by: 3)
    recorder.fireLastWait()
    #expect(recorder.lines.isEmpty)
    #expect(recorder.ending?.code == .noLocation)
    #expect(recorder.ending?.message == "whereami: no beacon of \(Self.uuid) in range within 10 s")

    let (_, timedRunner, timed) = try Self.rig(["--beacons", Self.uuid, "--timeout", "2.5"])
    defer { withExtendedLifetime(timedRunner) {} }
    #expect(timed.scheduled.map(\.seconds) == [2.5])
    timed.fireLastWait()
    #expect(timed.ending?.code == .timedOut)
  }

  /// With --watch and --timeout, each delivery with a beacon restarts the wait; an old wait that
  /// fires ends nothing.
  @Test func watchTimeoutRestartsWithEachBeacon() throws {
    let (world, runner, recorder) = try Self.rig([
      "--beacons", Self.uuid, "--watch", "--timeout", "5",
    ])
    defer { withExtendedLifetime(runner) {} }
    world.placeBeacon(uuid: try #require(UUID(uuidString: Self.uuid)), major: 1, minor: 1)
    world.advance(by: 1)
    #expect(recorder.scheduled.count == 2)
    recorder.scheduled[0].body()
    #expect(recorder.ending == nil)
    recorder.fireLastWait()
    #expect(recorder.ending?.code == .timedOut)
    #expect(recorder.ending?.message == "whereami: no beacon of \(Self.uuid) in range for 5 s")
  }

  /// An app denied location cannot range: the run ends with status 3.
  @Test func deniedEndsTheRun() throws {
    let (world, runner, recorder) = try Self.rig(["--beacons", Self.uuid], authorization: .denied)
    defer { withExtendedLifetime(runner) {} }
    world.pump()
    #expect(recorder.ending?.code == .denied)
    #expect(recorder.ending?.message?.hasPrefix("whereami: location access denied") == true)
  }

  /// The message for a machine where ranging is not available names what is missing.
  @Test func unavailableMessageNamesWhatIsMissing() {
    #expect(BeaconRunner.unavailableMessage.contains("Bluetooth LE adapter under BlueZ"))
    #expect(BeaconRunner.unavailableMessage.contains("CORELOCATION_SOURCE=beacons+replay://"))
  }
}
