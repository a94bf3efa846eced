import Foundation

/// `locationd`'s command line.
public enum DaemonCommand {
  /// Runs the daemon with the given arguments (without the program name).
  ///
  /// - Parameter arguments: The command-line arguments.
  /// - Returns: The process's exit status.
  public static func main(arguments: [String]) -> Int32 {
    FileHandle.standardError.write(Data("locationd: not built yet\n".utf8))
    return 1
  }
}
