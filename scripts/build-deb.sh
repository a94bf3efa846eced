#!/usr/bin/env bash
# Builds the Debian package from the source tarball, as a release would, and checks it: the
# pre-release check of the Debian package (README, "Debian package"). Not part of `make test`: a
# clean optimized build of everything takes minutes.
#
#   scripts/build-deb.sh             make dist, unpack, dpkg-buildpackage -b -us -uc, lintian
#   scripts/build-deb.sh --install   also install the package on this machine, check it, run
#                                    locationd --system from it as the user locationd, purge it
#   scripts/build-deb.sh --install --no-build   the same with the package built last time
#
# The package and the build log end up in .build/deb/. Needs the Swift 6 toolchain on PATH (or in
# /opt/swift/usr/bin) and, installed by this script when missing, dpkg-dev, debhelper and lintian.
# --install changes this machine (a package, the system user locationd) and needs root; the
# daemon it starts listens on a private socket, never on /run/locationd/socket, so that no other
# program on the machine becomes its client.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
install_check=0
build=1
for argument in "$@"; do
  case $argument in
  --install) install_check=1 ;;
  --no-build) build=0 ;;
  *) echo "usage: scripts/build-deb.sh [--install [--no-build]]" >&2; exit 2 ;;
  esac
done

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi

missing=()
for package in dpkg-dev debhelper lintian fakeroot; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "build-deb: installing ${missing[*]}" >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
"$root/scripts/setup-debian.sh"
export PATH="$PATH:/opt/swift/usr/bin:/usr/share/swift/usr/bin"

out="$root/.build/deb"
if [ "$build" = 1 ]; then
  rm -rf "$out"
  mkdir -p "$out"
  tarball=$(make -s -C "$root" dist DISTDIR="$out" | tail -1)
  tar -xzf "$tarball" -C "$out"
  source_dir=$(find "$out" -mindepth 1 -maxdepth 1 -type d -name 'corelocation-*')

  echo "build-deb: dpkg-buildpackage -b -us -uc in $source_dir (log: $out/build.log)" >&2
  start=$(date +%s)
  (cd "$source_dir" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 || {
    tail -40 "$out/build.log" >&2
    exit 1
  }
  echo "build-deb: built in $(($(date +%s) - start)) s" >&2
  deb=$(ls "$out"/corelocation_*.deb)
  changes=$(ls "$out"/corelocation_*.changes)

  echo "build-deb: lintian $(basename "$changes")" >&2
  lintian --fail-on error --display-info "$changes" | tee "$out/lintian.log"
  echo "build-deb: lintian: no errors" >&2
  dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
  dpkg-deb --contents "$deb" | awk '{print $1, $3, $6, $7, $8}'
fi
deb=$(ls "$out"/corelocation_*.deb)

[ "$install_check" = 1 ] || exit 0

# MARK: Installing, running and purging
if [ "$(id -u)" -ne 0 ]; then echo "build-deb: --install needs root" >&2; exit 1; fi
echo "build-deb: installing $(basename "$deb")" >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb"
# Whatever happens next, the package does not stay on this machine.
purged=0
trap '[ "$purged" = 1 ] || DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq corelocation >/dev/null 2>&1 || true' EXIT
fail() { echo "build-deb: FAILED: $*" >&2; exit 1; }
getent passwd locationd >/dev/null || fail "no user locationd after installation"
for program in whereami locationd locationctl; do
  [ -x "/usr/bin/$program" ] || fail "/usr/bin/$program is missing"
done
[ -f /etc/corelocation/locationd.conf ] || fail "no /etc/corelocation/locationd.conf"
# Nothing of the package runs (other programs named locationd may: look at executables).
for exe in /proc/[0-9]*/exe; do
  case $(readlink "$exe" 2>/dev/null) in
  /usr/bin/locationd | /usr/bin/whereami | /usr/bin/locationctl) fail "${exe%/exe} runs the package's program after installation" ;;
  esac
done
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  systemctl is-enabled locationd >/dev/null 2>&1 && fail "locationd.service is enabled"
fi
ldd /usr/bin/whereami | grep -E 'swift|Foundation|dispatch|not found' && fail "ldd: not only system libraries"

# The unit's command line, as the user, groups and capabilities the unit gives it (User=,
# SupplementaryGroups=dialout, AmbientCapabilities=CAP_SYS_PTRACE, NoNewPrivileges=yes), with the
# directories systemd would make (RuntimeDirectory=, StateDirectory=); the socket in a private
# directory.
run=$(mktemp -d /tmp/corelocation-deb.XXXXXX)
chmod 0755 "$run"
install -d -o locationd -g locationd -m 0755 "$run/run"
install -d -o locationd -g locationd -m 0700 /var/lib/locationd
printf '52.3702\n4.8952\n2\n50\n' >"$run/geolocation"
chmod 0644 "$run/geolocation"
setpriv --reuid=locationd --regid=locationd --groups=dialout --no-new-privs \
  --inh-caps=+sys_ptrace --ambient-caps=+sys_ptrace --bounding-set=-all,+sys_ptrace \
  /usr/bin/locationd --system --foreground --socket "$run/run/socket" \
  --source "static://$run/geolocation" --policy grant 2>"$run/locationd.log" &
daemon=$!
for _ in $(seq 100); do
  grep -q "listening on" "$run/locationd.log" 2>/dev/null && break
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.1
done
grep -q "listening on" "$run/locationd.log" || { cat "$run/locationd.log" >&2; fail "locationd --system did not start"; }
locationctl --socket "$run/run/socket" status || fail "locationctl status"
CORELOCATION_DAEMON=required CORELOCATION_DAEMON_SOCKET="$run/run/socket" whereami --timeout 30 ||
  fail "whereami through the system daemon"
kill "$daemon"
wait "$daemon" || true
cat "$run/locationd.log"
[ -f /var/lib/locationd/store.sqlite ] || fail "no store in /var/lib/locationd"
rm -rf "$run"

echo "build-deb: purging" >&2
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq corelocation
purged=1
for path in /usr/bin/whereami /usr/share/corelocation /etc/corelocation /var/lib/locationd \
  /lib/systemd/system/locationd.service /usr/share/man/man8/locationd.8.gz; do
  [ -e "$path" ] && fail "$path is left after purge"
done
echo "build-deb: installed, ran and purged cleanly (the user locationd stays, as Debian leaves system users)" >&2
