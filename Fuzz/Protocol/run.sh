#!/usr/bin/env bash
# Builds the daemon protocol's libFuzzer target and runs it.
#
#   Fuzz/Protocol/run.sh [SECONDS]        (default 60)
#
# The target covers DaemonProtocol.decode(line:) (and its JSON parser), the encoder (every decoded
# message is encoded and decoded again) and DaemonLineReader. The decoder uses Geodesy and
# LocationEngine types, so those two are compiled first as modules of their own (static libraries,
# with the same sanitizer and coverage flags); the protocol files, HubClient.swift (for
# AuthorizationSnapshot) and FuzzTarget.swift then form the fuzz binary. Stubs.swift stands in for
# the LocationServices types HubClient.swift names but the protocol never uses (LocationHub,
# LocationService).
#
# The corpus starts from Tests/Fixtures/daemon-protocol (one message or script per file). Crashes
# land in $FUZZ_WORK/artifacts (default .build/fuzz-protocol/artifacts); keep each one in
# Tests/Fixtures/daemon-protocol/ (DaemonProtocolCorpusTests decodes every file there).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
work=${FUZZ_WORK:-$root/.build/fuzz-protocol}
mkdir -p "$work/corpus" "$work/artifacts" "$work/modules"
flags=(-O -sanitize=fuzzer,address -parse-as-library)
quiet() { grep -v 'Cannot export local symbol' >&2 || true; }

swiftc "${flags[@]}" -module-name Geodesy -emit-module -emit-module-path "$work/modules/" \
  -emit-library -static -o "$work/modules/libGeodesy.a" \
  "$root"/Sources/Geodesy/*.swift 2> >(quiet)
swiftc "${flags[@]}" -module-name LocationEngine -I "$work/modules" \
  -emit-module -emit-module-path "$work/modules/" \
  -emit-library -static -o "$work/modules/libLocationEngine.a" \
  $(find "$root/Sources/LocationEngine" -name '*.swift' | sort) 2> >(quiet)

# The daemon's JSON is LocationFormats' parser: a LocationFormats module of just its JSON files.
swiftc "${flags[@]}" -module-name LocationFormats -emit-module -emit-module-path "$work/modules/" \
  -emit-library -static -o "$work/modules/libLocationFormats.a" \
  "$root"/Sources/LocationFormats/JSON/*.swift 2> >(quiet)

daemon="$root/Sources/LocationServices/Daemon"
swiftc "${flags[@]}" -module-name ProtocolFuzz -I "$work/modules" -L "$work/modules" \
  -lLocationEngine -lGeodesy -lLocationFormats \
  "$daemon/DaemonProtocol.swift" "$daemon/DaemonMessage.swift" "$daemon/DaemonJSON.swift" \
  "$daemon/DaemonLineReader.swift" "$daemon/DaemonProtocolError.swift" \
  "$root/Sources/LocationServices/HubClient.swift" \
  "$here/Stubs.swift" "$here/FuzzTarget.swift" \
  -o "$work/protocol-fuzz" 2> >(quiet)

if compgen -G "$root/Tests/Fixtures/daemon-protocol/*" > /dev/null; then
  cp "$root"/Tests/Fixtures/daemon-protocol/* "$work/corpus/"
fi

exec "$work/protocol-fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus"
