#!/usr/bin/env bash
# Installs what building and testing CoreLocation for Linux needs on Debian 12, as root or, through
# sudo, as a user. Idempotent: packages already present are not fetched again.
set -euo pipefail

packages=(pkg-config libsqlite3-dev libxml2-dev sqlite3)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    as_root=(sudo)
  fi
  echo "setup: installing ${missing[*]}" >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v swift >/dev/null; then
  for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
    [ -x "$candidate/swift" ] && { echo "setup: add $candidate to PATH" >&2; break; }
  done
  echo "setup: the Swift 6 toolchain is required (swift not on PATH)" >&2
  exit 1
fi
