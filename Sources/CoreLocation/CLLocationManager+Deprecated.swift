import Foundation

// Properties of iPhone OS 2 and 3 that Apple still declares, deprecated, and that old code uses.
// Public, not open: members of an extension cannot be overridden without the Objective-C runtime.
extension CLLocationManager {
  /// An app-provided string that describes the reason for using location services. Through
  /// `locationd`, the agent shows it when it asks the user (`locationctl agent`) and
  /// `locationctl apps` lists it; in embedded mode nobody is asked. Set it before starting a
  /// service, as Apple says.
  @available(
    *, deprecated,
    message: "Set the purpose string in Info.plist using key NSLocationUsageDescription"
  )
  public var purpose: String? {
    get { core.purpose }
    set {
      core.purpose = newValue
      core.environment.hub.setPurpose(newValue)
    }
  }

  /// A Boolean value indicating whether location services are enabled on the device: the
  /// manager's own view of the global switch (iPhone OS 2's property, deprecated since iOS 4).
  @available(*, deprecated, message: "Use +locationServicesEnabled")
  public var locationServicesEnabled: Bool { core.environment.hub.authorization.servicesEnabled }
}
