// corelocation-multicall: whereami, locationd and locationctl in one executable, the file that
// `make install` installs (README, "Installing"). With the Swift runtime and Foundation linked
// statically, each program alone is about 60 MB stripped, nearly all of it the same runtime,
// Foundation and ICU data; one file with three names (hard links) is installed once. The name it
// is started by picks the program; under any other name the first argument does
// (`corelocation-multicall whereami --help`).
import Foundation
import LocationCLI
import LocationControl
import LocationDaemon

/// The programs, by the name they are started as.
let programs = ["whereami", "locationd", "locationctl"]

var arguments = Array(CommandLine.arguments.dropFirst())
var name = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? ""
if !programs.contains(name), let first = arguments.first, programs.contains(first) {
  name = first
  arguments.removeFirst()
}

switch name {
case "locationd":
  exit(DaemonCommand.main(arguments: arguments))
case "locationctl":
  exit(LocationControlCommand.main(arguments: arguments))
case "whereami":
  MainActor.assumeIsolated {
    WhereAmI.main(arguments: arguments)
  }
default:
  FileHandle.standardError.write(
    Data(
      """
      usage: \(name) {\(programs.joined(separator: "|"))} [ARGUMENTS]
      (installed as whereami, locationd and locationctl, it is the program of that name)

      """.utf8))
  exit(2)
}
