#!/usr/bin/env bash
# Makes Data/hot-path.order, the functions a fix runs through in the order the linker lays them
# (scripts/hot-path-order.py says how; docs/performance.md, "Latency", why), from profiles of the
# paths a fix takes:
#
#   scripts/hot-path-profile.sh [EPOCHS]      (default 1200)
#
# The installed program (whereami, locationd and locationctl in one) is built as `make` builds it
# (the runtime linked statically, every function in a section of its own) but with no order, in
# .build-bench, its link map kept; then `locbench latency` runs the embedded path (an app reading
# an NMEA terminal) and the locationd path (that program as locationd reading it, an app as its
# client) at 20 Hz, every process under valgrind's callgrind, which counts each function's calls.
# A function called at least 0.9 times per epoch in one of those processes is on the hot path.
# Never part of the tests; needs valgrind (apt install valgrind) and takes a few minutes. Run it
# again when the hot path's code changes much: a function it does not name is only left where the
# linker would put it anyway.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$PATH:/opt/swift/usr/bin:/usr/share/swift/usr/bin"
epochs=${1:-1200}
command -v valgrind >/dev/null || { echo "needs valgrind (apt install valgrind)" >&2; exit 1; }

scratch=$(mktemp -d /tmp/hot-path.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

swift build -c release --product locbench 2>&1 | grep -v '^\[' || true
program="$root/.build-bench/release/corelocation-multicall"
rm -f "$program"
# The Makefile's SECTIONS: its LAYOUT without the order.
read -r -a sections <<<"$(make -s --no-print-directory print-sections)"
swift build --scratch-path "$root/.build-bench" -c release --static-swift-stdlib \
  --product corelocation-multicall "${sections[@]}" -Xlinker "-Map=$scratch/program.map" 2>&1 \
  | grep -v '^\[' || true
# The program is locationd by the name it is started as.
ln -s "$program" "$scratch/locationd"

valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$scratch/profile.%p" \
  .build/release/locbench latency --rates 20 --epochs "$epochs" --paths embedded,locationd \
  --locationd "$scratch/locationd" >"$scratch/latency.log" 2>&1 &
harness=$!
wait "$harness" || { cat "$scratch/latency.log" >&2; exit 1; }
grep '^| ' "$scratch/latency.log" || true
# The harness (the terminal's writer) is not on any program's path.
rm -f "$scratch/profile.$harness"

python3 scripts/hot-path-order.py --calls $((epochs * 9 / 10)) --map "$scratch/program.map" \
  Data/hot-path.order "$scratch"/profile.*
