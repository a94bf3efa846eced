#!/bin/sh
# Lists the public and open declarations of the CoreLocation and Contacts modules (the API that
# code written for Apple's CoreLocation sees), one per line as FILE:LINE: DECLARATION, and, with
# --counts, the present/different/missing totals of docs/compatibility.md's tables.
# It reads the source only; nothing is built. Run from the repository root.
set -eu
if [ "${1:-}" = "--counts" ]; then
  for state in present different missing; do
    n=$(grep -c "^| .* | \*\*$state\*\*" docs/compatibility.md || true)
    printf '%s %s\n' "$state" "$n"
  done
  exit 0
fi
grep -n -E '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*(public|open)[[:space:]]' \
  Sources/CoreLocation/*.swift Sources/Contacts/*.swift \
  | grep -v -E ':[[:space:]]*(public|open)[[:space:]]+import[[:space:]]' \
  | sed -E 's/[[:space:]]+/ /g; s/ \{ ?$//'
