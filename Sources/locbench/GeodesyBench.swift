/// Placeholder until the benchmark lands.
enum GeodesyBench {
  static func run() { print("not built yet") }
}
