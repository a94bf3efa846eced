/// Placeholder until the benchmark lands.
enum ReplayBench {
  static func run() { print("not built yet") }
}
