import Foundation
import Geodesy
import LocationModel

/// A seeded synthetic day with known stays, for measuring visit detection (`locbench visits`).
///
/// The day, on the tangent plane at a city point: at home from the start (the arrival is before
/// the day, so unknown) for 1 to 3 hours; then 3 to 5 outings, each a trip to a place 0.8 to 12 km
/// away (a walk at 1.1 to 1.6 m/s when it is under 2 km and a coin says so, else a drive at 8 to
/// 16 m/s) and a stay of 15 minutes to 3 hours there; then home for the rest (1 to 2 hours; the
/// departure is after the day). Drives stop at traffic lights every 0.6 to 2 km for 20 to 120 s,
/// and three times in ten make a short stop of 2 to 4 minutes (a drop-off); walks wait at a
/// crossing for 20 to 90 s: none of these is a visit. The receiver's trouble is part of the day:
/// four stays in ten are indoors (more drift, and half of those longer than 30 minutes lose every
/// fix for 10 to 60 minutes, at least 10 minutes from either end of the stay), and three drives in
/// ten pass a tunnel (no fix for 1 to 4 minutes).
package struct SyntheticDay: Sendable {
  /// A stay the detector should report.
  package struct Stay: Sendable, Equatable {
    /// Metres east and north of the day's origin.
    package var east: Double
    package var north: Double
    /// Seconds from the day's start; nil when before the day (the first stay at home).
    package var arrival: Double?
    /// Seconds from the day's start; nil when after it (the last stay at home).
    package var departure: Double?
  }

  /// A stop that is no visit (a traffic light, a drop-off, a crossing).
  package struct Stop: Sendable, Equatable {
    package var east: Double
    package var north: Double
    package var start: Double
    package var end: Double
  }

  /// One piece of the movement: from a point to another at constant speed (equal points: a stay).
  struct Segment: Sendable {
    var start: Double
    var end: Double
    var from: (east: Double, north: Double)
    var to: (east: Double, north: Double)
    /// The receiver sees more drift here (a stay indoors).
    var indoors: Bool
  }

  /// The seed it was made from.
  package let seed: UInt64
  /// The origin of its tangent plane.
  package let plane: LocalTangentPlane
  /// Its length, seconds.
  package let duration: Double
  /// The stays, in order.
  package let stays: [Stay]
  /// The stops that are no visits, in order.
  package let stops: [Stop]
  /// Intervals (seconds from the start) in which the receiver gets no fix.
  package let outages: [ClosedRange<Double>]
  let segments: [Segment]

  /// Makes the day of a seed.
  package init(seed: UInt64) {
    self.seed = seed
    var random = SeededRandom(seed: seed)
    plane = LocalTangentPlane(latitude: 52.09, longitude: 5.12)
    var builder = Builder()
    builder.stay(random.uniform(3600...10_800), indoors: random.chance(0.4), random: &random)
    builder.stays.append(Stay(east: 0, north: 0, arrival: nil, departure: builder.time))
    for _ in 0..<(3 + Int(random.uniform(0...2.999))) {
      let distance = random.uniform(800...12_000)
      let bearing = random.uniform(0...(2 * Double.pi))
      let target = (
        east: builder.position.east + distance * sin(bearing),
        north: builder.position.north + distance * cos(bearing)
      )
      builder.trip(to: target, random: &random)
      builder.visit(random.uniform(900...10_800), random: &random)
    }
    builder.trip(to: (0, 0), random: &random)
    let arrival = builder.time
    builder.stay(random.uniform(3600...7200), indoors: random.chance(0.4), random: &random)
    builder.stays.append(Stay(east: 0, north: 0, arrival: arrival, departure: nil))
    duration = builder.time
    stays = builder.stays
    stops = builder.stops
    outages = builder.outages
    segments = builder.segments
  }

  /// Where the device truly is, metres east and north, and whether it is indoors.
  func position(at time: Double) -> (east: Double, north: Double, indoors: Bool) {
    var low = 0
    var high = segments.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if segments[middle].start <= time { low = middle } else { high = middle - 1 }
    }
    let segment = segments[low]
    let span = segment.end - segment.start
    let f = span > 0 ? min(max((time - segment.start) / span, 0), 1) : 0
    return (
      segment.from.east + f * (segment.to.east - segment.from.east),
      segment.from.north + f * (segment.to.north - segment.from.north), segment.indoors
    )
  }

  /// Whether the receiver gets no fix at this time.
  func inOutage(_ time: Double) -> Bool { outages.contains { $0.contains(time) } }

  /// Builds a day leg by leg.
  private struct Builder {
    var time = 0.0
    var position = (east: 0.0, north: 0.0)
    var segments: [Segment] = []
    var stays: [Stay] = []
    var stops: [Stop] = []
    var outages: [ClosedRange<Double>] = []

    mutating func stay(_ seconds: Double, indoors: Bool, random: inout SeededRandom) {
      segments.append(
        Segment(start: time, end: time + seconds, from: position, to: position, indoors: indoors))
      // An outage lies inside the stay, at least 10 minutes from either end: the device gets
      // fixes at the door.
      if indoors, random.chance(0.5), seconds >= 1800 {
        let length = random.uniform(600...min(3600, seconds - 1200))
        let start = time + 600 + random.uniform(0...(seconds - 1200 - length))
        outages.append(start...(start + length))
      }
      time += seconds
    }

    mutating func visit(_ seconds: Double, random: inout SeededRandom) {
      let arrival = time
      stay(seconds, indoors: random.chance(0.4), random: &random)
      stays.append(
        Stay(east: position.east, north: position.north, arrival: arrival, departure: time))
    }

    mutating func stop(_ seconds: Double) {
      stops.append(
        Stop(east: position.east, north: position.north, start: time, end: time + seconds))
      segments.append(
        Segment(start: time, end: time + seconds, from: position, to: position, indoors: false))
      time += seconds
    }

    mutating func move(to target: (east: Double, north: Double), speed: Double) {
      let de = target.east - position.east
      let dn = target.north - position.north
      let seconds = (de * de + dn * dn).squareRoot() / speed
      segments.append(
        Segment(start: time, end: time + seconds, from: position, to: target, indoors: false))
      time += seconds
      position = target
    }

    mutating func trip(to target: (east: Double, north: Double), random: inout SeededRandom) {
      let de = target.east - position.east
      let dn = target.north - position.north
      let distance = (de * de + dn * dn).squareRoot()
      let walking = distance < 2000 && random.chance(0.5)
      let speed = walking ? random.uniform(1.1...1.6) : random.uniform(8...16)
      let start = position
      let tripStart = time
      var covered = 0.0
      var dropOff = !walking && random.chance(0.3)
      while covered < distance {
        let step = walking ? random.uniform(300...900) : random.uniform(600...2000)
        covered = min(distance, covered + step)
        let f = covered / distance
        move(to: (start.east + f * de, start.north + f * dn), speed: speed)
        guard covered < distance else { break }
        if dropOff, covered > distance / 2 {
          dropOff = false
          stop(random.uniform(120...240))
        } else {
          stop(walking ? random.uniform(20...90) : random.uniform(20...120))
        }
      }
      if !walking, random.chance(0.3) {
        let length = random.uniform(60...240)
        let start = tripStart + random.uniform(0...max(0, time - tripStart - length - 60))
        outages.append(start...(start + length))
      }
    }
  }
}

/// The simulations' seeded generator: the days and the receiver's noise are the same on every run.
typealias SeededRandom = SplitMix64

extension SplitMix64 {
  /// A standard normal deviate (Box and Muller 1958).
  mutating func gaussian() -> Double {
    let u = max(unit(), 1e-300)
    return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * unit())
  }
}
