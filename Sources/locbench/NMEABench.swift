/// Placeholder until the benchmark lands.
enum NMEABench {
  static func run() { print("not built yet") }
}
