import CoreLocation

/// whereami.
public enum WhereAmI {
  /// Runs whereami with its arguments; returns the exit code.
  public static func main(arguments: [String]) -> Int32 { 0 }
}
