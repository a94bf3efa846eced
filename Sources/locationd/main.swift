// locationd: the location daemon (DESIGN.md, "locationd"). Everything lives in LocationServices
// (testable); this is the thin main.
import Foundation
import LocationServices

exit(DaemonCommand.main(arguments: Array(CommandLine.arguments.dropFirst())))
