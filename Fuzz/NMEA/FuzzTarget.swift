// libFuzzer entry for the NMEA decoder. Built by Fuzz/NMEA/run.sh together with the NMEA sources and
// FormatError.swift into one module (no SwiftPM; Geodesy and LocationModel beside it), with
// -sanitize=fuzzer,address.
//
// Properties checked on every input (a violation traps, so libFuzzer keeps the input):
// - no crash, no hang, no sanitizer report;
// - every `.fix` has a valid coordinate (in range, finite, accuracy >= 0) and finite measures;
// - decoding in chunks of any size gives the same outputs and statistics as decoding at once.

@_cdecl("LLVMFuzzerTestOneInput")
public func nmeaFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  let whole = NMEADecoder.decodeLog(Array(bytes))
  for output in whole.outputs { check(output) }

  // The first byte picks a chunk size for the streaming run.
  let chunk = size > 0 ? Int(data[0] % 29) + 1 : 1
  var decoder = NMEADecoder()
  var outputs: [NMEAOutput] = []
  var start = 0
  while start < size {
    let end = min(start + chunk, size)
    outputs += decoder.decode(bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
    start = end
  }
  outputs += decoder.finish()
  precondition(outputs == whole.outputs, "chunked decoding differs")
  precondition(decoder.statistics == whole.statistics, "chunked statistics differ")

  // Line by line, with a default date: every fix comes out dated.
  var lines = NMEADecoder(options: .init(defaultDate: NMEADate(year: 2024, month: 2, day: 29)))
  var lineStart = 0
  for index in 0...size where index == size || data[index] == 0x0A {
    for output in lines.decode(line: UnsafeRawBufferPointer(rebasing: bytes[lineStart..<index])) {
      check(output)
      if case .undatedFix = output { preconditionFailure("undated fix despite a default date") }
    }
    lineStart = index + 1
  }
  for output in lines.finish() {
    check(output)
    if case .undatedFix = output { preconditionFailure("undated fix despite a default date") }
  }
  return 0
}

private func check(_ output: NMEAOutput) {
  switch output {
  case .fix(let fix), .undatedFix(let fix):
    precondition(fix.hasValidCoordinate, "fix with an invalid coordinate")
    precondition(fix.horizontalAccuracy.isFinite, "infinite accuracy")
    precondition(fix.time.isFinite, "bad time")
    precondition(fix.speed.isFinite && fix.course.isFinite && fix.course < 360, "bad speed/course")
    precondition(fix.altitude?.isFinite ?? true, "bad altitude")
  case .noFix(let time):
    precondition(time.isFinite, "bad time")
  case .heading(let heading):
    for angle in [heading.trueHeading, heading.magneticHeading] {
      if let angle { precondition(angle >= 0 && angle < 360, "heading out of range") }
    }
  case .satellites:
    break
  }
}
