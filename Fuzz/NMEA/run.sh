#!/usr/bin/env bash
# Builds the NMEA decoder's libFuzzer target and runs it.
#
#   Fuzz/NMEA/run.sh [SECONDS]        (default 60)
#
# The target is the NMEA sources and FormatError.swift compiled into one module with
# FuzzTarget.swift, over Geodesy and LocationModel built as modules of their own (static
# libraries, swiftc -sanitize=fuzzer,address). The corpus starts from the gpsd
# captures in Tests/Fixtures/gpsd-regress (cut into 40-line pieces) and Tests/Fixtures/nmea.
# Crashes land in $FUZZ_WORK/artifacts (default .build/fuzz-nmea/artifacts); keep each as a
# regression input in Tests/Fixtures/nmea/ with a test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
work=${FUZZ_WORK:-$root/.build/fuzz-nmea}
mkdir -p "$work/corpus" "$work/artifacts"

# flags, quiet and module: Fuzz/common.sh.
source "$here/../common.sh"
module Geodesy "$root"/Sources/Geodesy/*.swift
module LocationModel "$root"/Sources/LocationModel/*.swift

swiftc "${flags[@]}" -module-name NMEAFuzz -I "$work/modules" -L "$work/modules" \
  -lLocationModel -lGeodesy \
  "$root"/Sources/LocationFormats/NMEA/*.swift \
  "$root/Sources/LocationFormats/FormatError.swift" \
  "$here/FuzzTarget.swift" \
  -o "$work/nmea-fuzz" 2> >(quiet)

testdata="$root/Tests/Fixtures/gpsd-regress"
if [ -d "$testdata" ] && [ ! -e "$work/corpus/.seeded" ]; then
  for log in "$testdata"/*.log; do
    split -l 40 -d -a 4 "$log" "$work/corpus/$(basename "$log" .log)-"
  done
  touch "$work/corpus/.seeded"
fi
if compgen -G "$root/Tests/Fixtures/nmea/*" > /dev/null; then
  cp "$root"/Tests/Fixtures/nmea/* "$work/corpus/"
fi

exec "$work/nmea-fuzz" -max_total_time="$seconds" -max_len=2048 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$work/artifacts/" "$work/corpus"
