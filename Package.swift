// swift-tools-version:6.0
// CoreLocation for Linux: Apple's CoreLocation API on gpsd, NMEA, GeoClue2, static and replayed sources.
// Layers and import rules: docs/architecture.md ("Layers"). Imports go downward only;
// scripts/check-architecture.py checks them.
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
    // The three programs above in one executable: what `make install` installs (hard-linked
    // under their three names), so that the statically linked runtime is installed once.
    .executable(name: "corelocation-multicall", targets: ["corelocation-multicall"]),
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
    // libmosquitto: MQTT for locationd's publisher (issue 18).
    .systemLibrary(
      name: "CMosquitto",
      pkgConfig: "libmosquitto",
      providers: [.apt(["libmosquitto-dev"])]
    ),
    // The compiler's prefetch hint, which Swift lacks, for the gazetteer's nearest-place search.
    .systemLibrary(name: "CPrefetch"),
    // epoll(7), which Glibc's module leaves out, for the daemon client's reading.
    .systemLibrary(name: "CEpoll"),
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
    .target(name: "Geocoding", dependencies: ["CPrefetch"], swiftSettings: swiftSettings),
    // The Nominatim client and the choice of the live geocoder: the only code on
    // FoundationNetworking (libcurl and its TLS stack), kept out of LocationServices and so out of
    // locationd.
    .target(
      name: "GeocodingService", dependencies: ["Geocoding"], swiftSettings: swiftSettings),

    // locationd's wire protocol: messages, their one field table, the line reader, socket paths.
    .target(
      name: "LocationProtocol", dependencies: ["LocationModel", "LocationFormats", "Geodesy"],
      swiftSettings: swiftSettings),

    // MARK: I/O layers
    .target(
      name: "LocationStore", dependencies: ["CSQLite", "LocationModel", "Geodesy"],
      swiftSettings: swiftSettings),
    .target(
      name: "LocationSources",
      dependencies: [
        "LocationFormats", "LocationModel", "Geodesy", "CSystemd", "CMosquitto", "CEpoll",
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "LocationServices",
      dependencies: [
        "LocationEngine", "LocationSources", "LocationStore", "LocationFormats", "LocationModel",
        "LocationProtocol", "Geodesy", "Geocoding", "CEpoll",
      ],
      swiftSettings: swiftSettings
    ),

    // The power simulation behind `locbench power`: a trace through a real hub on a manual clock.
    .target(
      name: "LocationSimulation",
      dependencies: [
        "LocationServices", "LocationEngine", "LocationSources", "LocationModel", "Geodesy",
      ],
      swiftSettings: swiftSettings),

    // MARK: Public API
    // Apple's Contacts API, the postal-address part (CNPostalAddress and its formatter).
    .target(name: "Contacts", swiftSettings: swiftSettings),
    .target(
      name: "CoreLocation",
      dependencies: [
        "LocationServices", "LocationModel", "Geodesy", "Geocoding", "GeocodingService",
        "Contacts",
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "CoreLocationTesting",
      dependencies: [
        "CoreLocation", "LocationServices", "LocationModel", "LocationStore", "LocationSources",
        "LocationEngine", "LocationFormats", "Geodesy", "Geocoding", "Contacts",
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
      dependencies: [
        "CoreLocation", "Contacts", "LocationFormats", "LocationSources", "LocationModel",
      ],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "whereami", dependencies: ["LocationCLI"], swiftSettings: swiftSettings),
    // locationd's server: socket and poll loop, app hosts, source pool, configuration, launcher.
    // No app links it; its main is thin.
    .target(
      name: "LocationDaemon",
      dependencies: [
        "LocationServices", "LocationProtocol", "LocationEngine", "LocationSources",
        "LocationStore", "LocationModel", "Geodesy",
      ],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "locationd", dependencies: ["LocationDaemon"], swiftSettings: swiftSettings),
    // locationctl: the control tool, a client of locationd's protocol.
    .target(
      name: "LocationControl",
      dependencies: ["LocationProtocol", "LocationModel", "LocationFormats", "Geodesy"],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "locationctl", dependencies: ["LocationControl"], swiftSettings: swiftSettings),
    // whereami, locationd and locationctl in one executable, chosen by the name it is started
    // as (Sources/corelocation-multicall/main.swift says why).
    .executableTarget(
      name: "corelocation-multicall",
      dependencies: ["LocationCLI", "LocationDaemon", "LocationControl"],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "locbench",
      dependencies: [
        "Geodesy", "LocationModel", "LocationFormats", "LocationEngine", "LocationStore",
        "LocationSources", "LocationServices", "LocationSimulation", "LocationProtocol", "CLibXML2",
        "Geocoding", "CoreLocation", "LocationDaemon",
      ],
      swiftSettings: swiftSettings
    ),

    // MARK: Tests (one test target per source target; end-to-end tests run the built programs)
    // The test kit shared by every test target: paths to fixtures and temporary directories, the
    // built programs and a harness for locationd, the CI rule for missing components, `eventually`,
    // SplitMix64, fakes (a daemon, an NMEA receiver, hub doubles, a pumped manager), sockets,
    // children started with an empty signal mask, a real gpsd under gpsfake, SQLite I/O faults
    // (CSQLite's fault-injecting VFS), a size-limited tmpfs and a TCP proxy that cuts, refuses
    // and stalls connections (a network that flaps). Not a product.
    .target(
      name: "TestSupport",
      dependencies: [
        "CoreLocation", "LocationServices", "LocationProtocol", "LocationSources", "LocationEngine",
        "LocationModel", "Geodesy", "CSQLite",
      ],
      path: "Tests/Support/TestSupport"),
    .testTarget(name: "GeodesyTests", dependencies: ["Geodesy", "TestSupport"]),
    .testTarget(name: "LocationModelTests", dependencies: ["LocationModel"]),
    .testTarget(
      name: "GeocodingTests", dependencies: ["Geocoding", "GeocodingService", "TestSupport"]),
    .testTarget(name: "ContactsTests", dependencies: ["Contacts"]),
    .testTarget(
      name: "LocationFormatsTests",
      dependencies: ["LocationFormats", "LocationModel", "Geodesy", "TestSupport"]),
    .testTarget(
      name: "LocationEngineTests",
      dependencies: [
        "LocationEngine", "LocationFormats", "LocationModel", "Geodesy", "TestSupport",
        // BeaconWalk: the seeded walk past a beacon that `locbench beacons` measures too.
        "LocationSimulation",
      ]),
    .testTarget(
      name: "LocationStoreTests",
      dependencies: ["LocationStore", "LocationModel", "Geodesy", "TestSupport"]),
    .testTarget(
      name: "LocationSourcesTests",
      dependencies: [
        "LocationSources", "LocationFormats", "LocationModel", "Geodesy", "TestSupport",
      ]),
    .testTarget(
      name: "LocationServicesTests",
      dependencies: [
        "LocationServices", "LocationEngine", "LocationSources", "LocationStore", "LocationModel",
        "Geodesy", "TestSupport", "LocationSimulation",
      ]),
    .testTarget(
      name: "CoreLocationTests",
      dependencies: [
        "CoreLocation", "CoreLocationTesting", "LocationServices", "LocationSources",
        "LocationModel", "Geodesy", "TestSupport",
      ]),
    .testTarget(
      name: "LocationProtocolTests",
      dependencies: [
        "LocationProtocol", "LocationServices", "LocationEngine", "LocationModel", "Geodesy",
        "TestSupport",
      ]),
    .testTarget(
      name: "LocationDaemonTests",
      dependencies: [
        "LocationDaemon", "LocationServices", "LocationProtocol", "LocationEngine",
        "LocationSources", "LocationStore", "LocationModel", "Geodesy", "TestSupport",
      ]),
    .testTarget(
      name: "LocationSimulationTests", dependencies: ["LocationSimulation", "LocationServices"]),
    .testTarget(
      name: "LocationCLITests",
      dependencies: ["LocationCLI", "CoreLocation", "CoreLocationTesting", "TestSupport"]),
    .testTarget(
      name: "LocationControlTests",
      dependencies: ["LocationControl", "LocationFormats", "LocationModel", "TestSupport"]),
    .testTarget(
      name: "EndToEndTests",
      dependencies: [
        "CoreLocation", "LocationServices", "LocationProtocol", "LocationStore", "LocationModel",
        "LocationFormats", "TestSupport",
      ]),
  ],
  swiftLanguageModes: [.v6]
)
