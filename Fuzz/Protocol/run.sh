#!/usr/bin/env bash
# Builds the daemon protocol's libFuzzer target and runs it.
#
#   Fuzz/Protocol/run.sh [SECONDS]        (default 60)
#
# The target covers DaemonProtocol.decode(line:) (and its JSON parser), the encoder (every decoded
# message is encoded and decoded again) and DaemonLineReader. The protocol is its own target
# (LocationProtocol) over LocationModel, LocationFormats' JSON parser and Geodesy: each is compiled
# first as a module of its own (a static library, with the same sanitizer and coverage flags); the
# protocol's files and FuzzTarget.swift then form the fuzz binary.
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
# flags, quiet and module: Fuzz/common.sh.
source "$here/../common.sh"
module Geodesy "$root"/Sources/Geodesy/*.swift
module LocationModel "$root"/Sources/LocationModel/*.swift
# The daemon's JSON is LocationFormats' parser: a LocationFormats module of just its JSON files.
module LocationFormats "$root"/Sources/LocationFormats/JSON/*.swift

swiftc "${flags[@]}" -module-name ProtocolFuzz -I "$work/modules" -L "$work/modules" \
  -lLocationModel -lGeodesy -lLocationFormats \
  "$root"/Sources/LocationProtocol/*.swift "$here/FuzzTarget.swift" \
  -o "$work/protocol-fuzz" 2> >(quiet)

if compgen -G "$root/Tests/Fixtures/daemon-protocol/*" > /dev/null; then
  cp "$root"/Tests/Fixtures/daemon-protocol/* "$work/corpus/"
fi

exec "$work/protocol-fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus"
