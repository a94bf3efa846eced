#!/usr/bin/env bash
# The installation's figures (README, "Installing"), never part of the tests' pass/fail:
#
#   scripts/bench-install.sh [--runs N]      (or: make bench-install)
#
# Installs into a scratch directory (make install DESTDIR=...), links the three programs once
# more as separate static executables for the size baseline, and runs `locbench install` on the
# scratch installation: installed size, and whereami's cold start to its first line on a static
# source against `gpspipe -w -n 1` on gpsd (Debian's gpsd and gpsd-clients) in the same run.
# Optimized builds: a few minutes the first time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$PATH:/opt/swift/usr/bin:/usr/share/swift/usr/bin"

make -s programs man
for program in whereami locationd locationctl; do
  swift build -c release --static-swift-stdlib --product "$program" 2>&1 | grep -v '^\[' | grep -v mktemp || true
done
swift build -c release --product locbench 2>&1 | grep -v '^\[' || true

scratch=$(mktemp -d /tmp/bench-install.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
make -s install DESTDIR="$scratch/dest" >/dev/null
mkdir "$scratch/separate"
for program in whereami locationd locationctl; do
  cp ".build/release/$program" "$scratch/separate/$program"
  strip "$scratch/separate/$program"
done
echo "(installed by make install DESTDIR=$scratch/dest; PREFIX /usr/local)"
.build/release/locbench install --prefix "$scratch/dest/usr/local" --separate "$scratch/separate" "$@"
