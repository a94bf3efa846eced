// swift-tools-version:6.0
// CoreLocation for Linux: Apple's CoreLocation API on gpsd, NMEA, GeoClue2, static and replayed sources.
// Layers and import rules: DESIGN.md ("Layers"). Imports go downward only.
import PackageDescription

// Every Swift target builds in Swift 6 language mode (strict concurrency). Warnings are turned into
// errors by the test command (`-Xswiftc -warnings-as-errors`), not here, so that users who depend on
// the package never fail on a warning a newer compiler adds.
let swiftSettings: [SwiftSetting] = []

let package = Package(
  name: "CoreLocation",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "CoreLocation", targets: ["CoreLocation"]),
    .library(name: "CoreLocationTesting", targets: ["CoreLocationTesting"]),
    // Apple's Contacts framework, the part that CLPlacemark's postal address touches.
    .library(name: "Contacts", targets: ["Contacts"]),
    .executable(name: "whereami", targets: ["whereami"]),
    .executable(name: "locbench", targets: ["locbench"]),
    .executable(name: "locationd", targets: ["locationd"]),
    .executable(name: "locationctl", targets: ["locationctl"]),
  ],
  targets: [
    // MARK: C libraries (systemLibrary: a modulemap and one shim header each)
    .systemLibrary(
      name: "CSQLite",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"])]
    ),
    // sd-bus from libsystemd: GeoClue2 and iio-sensor-proxy over D-Bus.
    .systemLibrary(
      name: "CSystemd",
      pkgConfig: "libsystemd",
      providers: [.apt(["libsystemd-dev"])]
    ),
    // libxml2's SAX2 interface: the real XML parser behind the GPX decoder.
    .systemLibrary(
      name: "CLibXML2",
      pkgConfig: "libxml-2.0",
      providers: [.apt(["libxml2-dev"])]
    ),

    // MARK: Pure layers
    .target(name: "Geodesy", swiftSettings: swiftSettings),
    // The value types every layer shares: fixes, headings, regions, instants, authorization.
    .target(name: "LocationModel", dependencies: ["Geodesy"], swiftSettings: swiftSettings),
    .target(
      name: "LocationFormats",
      dependencies: ["LocationModel", "Geodesy", "CLibXML2"],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "LocationEngine", dependencies: ["LocationModel", "Geodesy"],
      swiftSettings: swiftSettings),
    // The offline gazetteer (a memory-mapped file built by scripts/build-gazetteer.py, kept in
    // Data/gazetteer/) and the Nominatim client behind CLGeocoder.
    .target(name: "Geocoding", swiftSettings: swiftSettings),

    // MARK: I/O layers
    .target(
      name: "LocationStore", dependencies: ["CSQLite", "LocationModel", "Geodesy"],
      swiftSettings: swiftSettings),
    .target(
      name: "LocationSources",
      dependencies: ["LocationFormats", "LocationModel", "Geodesy", "CSystemd"],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "LocationServices",
      dependencies: [
        "LocationEngine", "LocationSources", "LocationStore", "LocationFormats", "LocationModel",
        "Geodesy", "Geocoding",
      ],
      swiftSettings: swiftSettings
    ),

    // MARK: Public API
    // Apple's Contacts API, the postal-address part (CNPostalAddress and its formatter).
    .target(name: "Contacts", swiftSettings: swiftSettings),
    .target(
      name: "CoreLocation",
      dependencies: ["LocationServices", "LocationModel", "Geodesy", "Geocoding", "Contacts"],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "CoreLocationTesting",
      dependencies: [
        "CoreLocation", "LocationServices", "LocationModel", "LocationStore", "LocationSources",
        "LocationEngine", "Geodesy", "Geocoding", "Contacts",
      ],
      swiftSettings: swiftSettings
    ),

    // MARK: Programs
    // whereami's location work goes through the public CoreLocation API only (and Contacts for
    // formatting addresses); LocationFormats is here for reading `--regions` GeoJSON files and for
    // counting the points a GPX replay leaves out, LocationSources for parsing the source URLs
    // named on its command line.
    .target(
      name: "LocationCLI",
      dependencies: ["CoreLocation", "Contacts", "LocationFormats", "LocationSources"],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "whereami", dependencies: ["LocationCLI"], swiftSettings: swiftSettings),
    // locationd's server lives in LocationServices (DESIGN.md, "Layers"); its main is thin.
    .executableTarget(
      name: "locationd", dependencies: ["LocationServices"], swiftSettings: swiftSettings),
    // locationctl: the control tool, a client of locationd's protocol.
    .target(
      name: "LocationControl", dependencies: ["LocationServices", "LocationModel"],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "locationctl", dependencies: ["LocationControl"], swiftSettings: swiftSettings),
    .executableTarget(
      name: "locbench",
      dependencies: [
        "Geodesy", "LocationModel", "LocationFormats", "LocationEngine", "LocationStore",
        "LocationSources", "LocationServices", "CLibXML2", "Geocoding",
      ],
      swiftSettings: swiftSettings
    ),

    // MARK: Tests (one test target per source target; end-to-end tests run the built programs)
    // Test support shared by test targets (children started with an empty signal mask, a real
    // gpsd under gpsfake); not a product.
    .target(name: "RealComponents", path: "Tests/Support/RealComponents"),
    .testTarget(name: "GeodesyTests", dependencies: ["Geodesy"]),
    .testTarget(name: "LocationModelTests", dependencies: ["LocationModel"]),
    .testTarget(name: "GeocodingTests", dependencies: ["Geocoding", "RealComponents"]),
    .testTarget(name: "ContactsTests", dependencies: ["Contacts"]),
    .testTarget(name: "LocationFormatsTests", dependencies: ["LocationFormats", "LocationModel"]),
    .testTarget(
      name: "LocationEngineTests",
      dependencies: ["LocationEngine", "LocationModel", "LocationFormats"]),
    .testTarget(name: "LocationStoreTests", dependencies: ["LocationStore", "LocationModel"]),
    .testTarget(
      name: "LocationSourcesTests",
      dependencies: [
        "LocationSources", "LocationFormats", "LocationModel", "Geodesy", "RealComponents",
      ]),
    .testTarget(
      name: "LocationServicesTests",
      dependencies: [
        "LocationServices", "LocationEngine", "LocationSources", "LocationStore", "LocationModel",
        "RealComponents",
      ]
    ),
    .testTarget(
      name: "CoreLocationTests",
      dependencies: [
        "CoreLocation", "CoreLocationTesting", "Geodesy", "LocationModel", "LocationServices",
        "LocationSources", "RealComponents",
      ]),
    .testTarget(
      name: "LocationCLITests",
      dependencies: ["LocationCLI", "CoreLocation", "CoreLocationTesting"]
    ),
    .testTarget(
      name: "LocationControlTests",
      dependencies: [
        "LocationControl", "LocationServices", "LocationStore", "LocationModel", "RealComponents",
      ]),
    .testTarget(name: "EndToEndTests", dependencies: ["RealComponents"]),
  ],
  swiftLanguageModes: [.v6]
)
