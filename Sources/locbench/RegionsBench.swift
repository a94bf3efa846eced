/// Placeholder until the benchmark lands.
enum RegionsBench {
  static func run() { print("not built yet") }
}
