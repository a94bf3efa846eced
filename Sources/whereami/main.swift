import Foundation
import LocationCLI

exit(WhereAmI.main(arguments: Array(CommandLine.arguments.dropFirst())))
