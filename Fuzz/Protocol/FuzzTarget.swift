// libFuzzer entry for locationd's protocol decoder and line reader. Built by Fuzz/Protocol/run.sh
// with the protocol sources into one module (Geodesy, LocationModel and LocationFormats beside it),
// with -sanitize=fuzzer,address.
//
// Properties checked on every input (a violation traps, so libFuzzer keeps the input):
// - no crash, no hang, no sanitizer report, whatever the bytes;
// - a decoding error has a code and a message;
// - a decoded message encodes to one line (no raw newline inside), which decodes again, and
//   encoding that gives the same bytes (encode . decode is idempotent on the encoder's output);
// - the line reader gives the same items whether the bytes arrive at once or in chunks of any
//   size, never a line longer than its limit or containing a newline, and reports an unterminated
//   end the same way.

@_cdecl("LLVMFuzzerTestOneInput")
public func protocolFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  check(line: bytes)

  // The first byte picks a chunk size and a small line limit, so `tooLarge` is reached too.
  let first = size > 0 ? Int(bytes[0]) : 0
  let chunk = first % 31 + 1
  for limit in [first % 97 + 1, DaemonLineReader.defaultLimit] {
    let whole = read(bytes, limit: limit, chunk: max(size, 1))
    let chunked = read(bytes, limit: limit, chunk: chunk)
    precondition(whole == chunked, "chunked line reading differs")
    for item in whole {
      switch item {
      case .line(let line):
        precondition(line.count <= limit, "line over the limit")
        precondition(!line.contains(0x0A), "line with a newline")
        check(line: line)
      case .tooLarge:
        break
      case .truncated(let count):
        precondition(count > 0, "empty truncation")
      }
    }
  }
  return 0
}

/// Every item a reader with `limit` gives for `bytes` fed in pieces of `chunk` bytes.
private func read(_ bytes: [UInt8], limit: Int, chunk: Int) -> [DaemonLineReader.Item] {
  var reader = DaemonLineReader(limit: limit)
  var items: [DaemonLineReader.Item] = []
  var start = 0
  while start < bytes.count {
    let end = min(start + chunk, bytes.count)
    reader.append(bytes[start..<end])
    while let item = reader.next() { items.append(item) }
    start = end
  }
  if let last = reader.finish() { items.append(last) }
  precondition(reader.pendingByteCount == 0, "reader not empty after finish")
  return items
}

/// Decodes one line; a message must survive encode/decode/encode unchanged.
private func check(line: [UInt8]) {
  let message: DaemonMessage
  do {
    message = try DaemonProtocol.decode(line: line)
  } catch {
    precondition(!error.code.rawValue.isEmpty && !error.message.isEmpty, "empty error")
    return
  }
  let encoded = DaemonProtocol.encode(message)
  precondition(encoded.last == 0x0A, "encoded line without its newline")
  precondition(!encoded.dropLast().contains(0x0A), "encoded line with a raw newline")
  // A message that encodes longer than the line limit cannot be read back as one line; the fuzz
  // inputs are far too short for that (max_len 4096), but say so rather than trap on it.
  guard encoded.count <= DaemonLineReader.defaultLimit else { return }
  let again: DaemonMessage
  do {
    again = try DaemonProtocol.decode(line: encoded)
  } catch {
    preconditionFailure("the encoder wrote a line its decoder rejects: \(error)")
  }
  precondition(DaemonProtocol.encode(again) == encoded, "encode/decode/encode differs")
}
