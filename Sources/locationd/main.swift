// locationd: the location daemon (docs/architecture.md, "Layers"). Everything lives in
// LocationDaemon (testable); this is the thin main.
import Foundation
import LocationDaemon

exit(DaemonCommand.main(arguments: Array(CommandLine.arguments.dropFirst())))
