#!/usr/bin/env bash
# Rebuilds the reference data sets under Tests/Fixtures from their published sources and compares
# them with the committed copies. Nothing here runs during `make test`: the copies are committed,
# so a clone alone passes the tests; this script says where they came from and checks them.
#
#   scripts/test-data.sh gpsd DIR       gpsd's regression captures (Debian's gpsd source package)
#   scripts/test-data.sh geodesic DIR   geodesic vectors recomputed with GeographicLib (PyPI)
#   scripts/test-data.sh wmm DIR        World Magnetic Model files, checked against their SHA-256
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?usage: scripts/test-data.sh gpsd|geodesic|wmm DIR}
out=${2:?usage: scripts/test-data.sh gpsd|geodesic|wmm DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)

case "$what" in
gpsd)
  # gpsd's test/daemon/ as Debian publishes it (deb.debian.org's source pool).
  version=3.27.5
  tarball="$out/gpsd_$version.orig.tar.xz"
  [ -f "$tarball" ] || curl -fsSL -o "$tarball" \
    "https://deb.debian.org/debian/pool/main/g/gpsd/gpsd_$version.orig.tar.xz"
  tar -xJf "$tarball" -C "$out" --wildcards '*/test/daemon/*' '*/COPYING'
  source_dir=$(ls -d "$out"/gpsd-*/ | head -1)
  cp "$source_dir/COPYING" "$out/COPYING"
  same=0 differ=0 absent=0
  for file in "$root"/Tests/Fixtures/gpsd-regress/*.log "$root"/Tests/Fixtures/gpsd-regress/*.chk; do
    name=$(basename "$file")
    if [ ! -f "$source_dir/test/daemon/$name" ]; then
      absent=$((absent + 1)); echo "not in gpsd $version: $name"
    elif cmp -s "$file" "$source_dir/test/daemon/$name"; then
      same=$((same + 1)); cp "$source_dir/test/daemon/$name" "$out/$name"
    else
      differ=$((differ + 1)); echo "differs in gpsd $version: $name"
      cp "$source_dir/test/daemon/$name" "$out/$name"
    fi
  done
  echo "gpsd $version: $same identical, $differ different, $absent absent; copies in $out"
  ;;
geodesic)
  # The end points are the committed ones; GeographicLib (Karney 2013) gives s12, azi1 and azi2.
  venv="$out/.venv"
  [ -x "$venv/bin/python" ] || { /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" -q install geographiclib; }
  "$venv/bin/python" - "$root/Tests/Fixtures/geodesic/vectors.csv" "$out/vectors.csv" <<'PY'
import csv, sys
from geographiclib.geodesic import Geodesic
source, target = sys.argv[1], sys.argv[2]
worst = 0.0
with open(source) as handle, open(target, "w", newline="") as result:
    rows = csv.DictReader(handle)
    writer = csv.writer(result, lineterminator="\n")
    writer.writerow(rows.fieldnames)
    for row in rows:
        lat1, lon1, lat2, lon2 = (float(row[k]) for k in ("lat1", "lon1", "lat2", "lon2"))
        g = Geodesic.WGS84.Inverse(lat1, lon1, lat2, lon2)
        worst = max(worst, abs(g["s12"] - float(row["s12"])))
        writer.writerow([row["lat1"], row["lon1"], row["lat2"], row["lon2"], "%.9f" % g["s12"],
                         repr(g["azi1"]), repr(g["azi2"]), row["class"]])
print("geodesic: largest difference in s12 from the committed file: %.3g m" % worst)
PY
  ;;
wmm)
  # NCEI publishes the model at https://www.ncei.noaa.gov/products/world-magnetic-model (the .COF
  # files inside its zip archives, and the test values). Put the downloaded files in DIR; this
  # checks them against the committed copies' SHA-256.
  cd "$out"
  sha256sum -c <<'SUMS'
6a190a3464e04782472593ae9402e95f565a087f35b445a5d35dec8435461ffe  WMM2010.COF
645b8e548ecbe09d348e4e4419656f0c5042c52a2ab4c341dd3741b055722de7  WMM2015v2.COF
e65453b7d2ed34ae30f6f7361aaec403e103c2abf59ee46393bd4c4f880c4fa8  WMM2020.COF
dfa8597825af4e0b87ff4198a5b4fb661b3c49f4cd090cd0164e0259b075582f  WMM2025.COF
e6975b093dddeb6153e0b23cc418425c438167e7c5b1dd795da379cb654f5819  WMM2025_TEST_VALUES.txt
SUMS
  ;;
*)
  echo "usage: scripts/test-data.sh gpsd|geodesic|wmm DIR" >&2
  exit 2
  ;;
esac
