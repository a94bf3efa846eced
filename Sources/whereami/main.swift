// whereami: prints where this machine is. Everything lives in LocationCLI (testable); this is the
// thin main.
import LocationCLI

MainActor.assumeIsolated {
  WhereAmI.main(arguments: Array(CommandLine.arguments.dropFirst()))
}
