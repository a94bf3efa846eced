import LocationModel

/// The project's seeded generator (`LocationModel.SplitMix64`) for the tests' seeded inputs.
package typealias SplitMix64 = LocationModel.SplitMix64
