#!/usr/bin/env bash
# Installs what building and testing CoreLocation for Linux needs on Debian 12, as root or, through
# sudo, as a user. Idempotent: packages already present are not fetched again.
set -euo pipefail

# Build: pkg-config and the -dev packages of the C libraries (SQLite, libxml2, sd-bus).
# Tests with real components (they start them themselves; see CONTRIBUTING.md, "Real
# components"): gpsd and gpsfake, socat for pseudo-terminal pairs, dbus-daemon and GeoClue for a
# private bus, iio-sensor-proxy and umockdev for a fake compass, bubblewrap for a Flatpak-style
# confined app (locationd's trust tests).
# libcurl4: Foundation's URLSession (the Nominatim client behind CORELOCATION_GEOCODER) loads it;
# libcurl4-openssl-dev: linking Foundation statically (make programs) links libcurl.
# curl: the optional Ichnaea geolocation fallback (IchnaeaClient) runs the curl program rather than
# linking FoundationNetworking into locationd; its tests run it against a loopback server.
# Installing (make man, make install) and its tests: scdoc renders the man pages, groff-base checks
# them; bash-completion, zsh and fish run the shell completions; systemd has systemd-analyze,
# which checks the unit files.
# python3-dbusmock mocks BlueZ (bluetoothd) and NetworkManager on a private bus for the beacon and
# Wi-Fi source tests.
# libmosquitto-dev: locationd's MQTT publisher and the owntracks+mqtt:// source (libmosquitto, the
# Eclipse Mosquitto client library); mosquitto, the broker their tests start on loopback; openssl
# makes the tests' certificate authority for MQTT over TLS; mosquitto-clients has mosquitto_pub,
# locbench publish's baseline.
# binutils: nm, with which a test checks the installed programs' code layout (Makefile, LAYOUT).
packages=(binutils pkg-config libsqlite3-dev libxml2-dev sqlite3 libsystemd-dev libcurl4 libcurl4-openssl-dev curl
  gpsd gpsd-clients socat dbus-daemon geoclue-2.0 geoclue-2-demo iio-sensor-proxy umockdev
  bubblewrap scdoc groff-base bash-completion zsh fish systemd python3-dbusmock libmosquitto-dev
  mosquitto mosquitto-clients openssl)

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
  # Installing gpsd or geoclue must not start system services on this machine (the tests start their
  # own on private ports and sockets): a policy-rc.d that refuses every start, for the install only.
  policy=/usr/sbin/policy-rc.d
  added_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
    "${as_root[@]}" chmod 755 "$policy"
    added_policy=1
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # libsystemd-dev must match libsystemd0 exactly: install (upgrade) both together.
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" $(printf '%s\n' "${missing[@]}" | grep -qx libsystemd-dev && echo libsystemd0)
  if [ "$added_policy" = 1 ]; then "${as_root[@]}" rm -f "$policy"; fi
fi

if ! command -v swift >/dev/null; then
  for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
    [ -x "$candidate/swift" ] && { echo "setup: add $candidate to PATH" >&2; break; }
  done
  echo "setup: the Swift 6 toolchain is required (swift not on PATH)" >&2
  exit 1
fi
