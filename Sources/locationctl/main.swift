// locationctl: the control tool for locationd. Everything lives in LocationControl (testable);
// this is the thin main.
import Foundation
import LocationControl

exit(LocationControlCommand.main(arguments: Array(CommandLine.arguments.dropFirst())))
