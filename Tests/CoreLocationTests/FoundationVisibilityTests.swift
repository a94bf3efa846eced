// This file imports CoreLocation and Testing only, as Apple code that relies on CoreLocation
// bringing Foundation along does: it compiles only while `import CoreLocation` makes Foundation's
// types visible (issue 15).
import CoreLocation
import Testing

@Suite struct FoundationVisibilityTests {
  @Test func foundationTypesComeWithCoreLocation() {
    let date: Date = Date(timeIntervalSince1970: 0)
    let interval: TimeInterval = 5
    let url = URL(fileURLWithPath: "/tmp")
    let number = NSNumber(value: 7)
    let location = CLLocation(latitude: 52, longitude: 5)
    #expect(location.timestamp > date.addingTimeInterval(interval))
    #expect(url.path == "/tmp" && number.intValue == 7)
    #expect(DispatchQueue.main.label == "com.apple.main-thread")
  }
}
