#!/usr/bin/python3
"""Write the synthetic beacon recording Tests/Fixtures/beacons/office.beacons.jsonl.

Usage: /usr/bin/python3 scripts/make-beacon-fixture.py > Tests/Fixtures/beacons/office.beacons.jsonl

Standard library only; seeded, so the output is the same on every run.

The scene: a receiver walks slowly along an office corridor (0.2 m/s for 60 s, from x = 0 to
x = 12 m) past three iBeacons of one proximity UUID mounted 1.5 m to the side, at x = 2, 7 and
12 m. The third runs out of battery half way (nothing from it after 30 s). A phone lies on a
desk 3 m away and sends Apple's "Nearby Info" advertisements (type 0x10, not an iBeacon), and a
Windows laptop 5 m away sends Microsoft's Swift Pair / CDP beacons (company 0x0006).

Each beacon advertises every 1/3 s plus BLE's random advDelay of 0-10 ms (Bluetooth Core
Specification, Vol 6, Part B, 4.4.2.2.1); the receiver misses 10 % of advertisements, and any
weaker than -100 dBm. RSSI follows the log-distance path-loss model
    RSSI = P1m - 10 n log10(d) + N(0, sigma)
with P1m = -59 dBm (the measured power the beacons advertise), n = 2.0 and sigma = 3 dB,
rounded to an integer dBm.

The lines are in the format of Sources/LocationFormats/Beacon/BeaconRecording.swift: the
manufacturer data as BlueZ's Device1.ManufacturerData gives it (decimal company identifier ->
hex of the bytes after it); the iBeacon frames follow Apple's Proximity Beacon Specification.
"""
import math
import random
import sys

SEED = 20251202
START = 1764662400.0  # 2025-12-02T08:00:00Z
DURATION = 60.0
P1M = -59
PATH_LOSS_EXPONENT = 2.0
SIGMA = 3.0
MISS_RATE = 0.10
SENSITIVITY = -100

UUID = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

# (address, major, minor, x in metres, last second it is heard)
BEACONS = [
    ("C3:4A:1F:00:00:01", 1, 1, 2.0, DURATION),
    ("C3:4A:1F:00:00:02", 1, 2, 7.0, DURATION),
    ("C3:4A:1F:00:00:03", 2, 7, 12.0, DURATION / 2),
]
BEACON_OFFSET = 1.5
BEACON_INTERVAL = 1 / 3

PHONE = ("5E:21:9B:6C:44:0D", 3.0, 1.0)  # address, distance, interval
LAPTOP = ("2B:7F:93:10:C8:E2", 5.0, 1.0)


def ibeacon_data(major, minor, power):
    """The bytes after Apple's company identifier: type 0x02, length 0x15, UUID, major, minor, power."""
    uuid = bytes.fromhex(UUID.replace("-", ""))
    return bytes([0x02, 0x15]) + uuid + major.to_bytes(2, "big") + minor.to_bytes(2, "big") + (
        power & 0xFF
    ).to_bytes(1, "big")


def receiver_x(t):
    return 0.2 * t


def rssi(rng, distance):
    return round(P1M - 10 * PATH_LOSS_EXPONENT * math.log10(max(distance, 0.1)) + rng.gauss(0, SIGMA))


def advertisements(rng, interval, until):
    """Advertising times: every interval plus advDelay, from a random phase."""
    t = rng.uniform(0, interval)
    while t < until:
        yield t
        t += interval + rng.uniform(0, 0.010)


def main():
    rng = random.Random(SEED)
    lines = []  # (time, text)

    def add(t, address, strength, company, data):
        if rng.random() < MISS_RATE or strength < SENSITIVITY:
            return
        time = round(START + t, 3)
        text = '{"time": %r, "address": "%s", "rssi": %d, "manufacturer": {"%d": "%s"}}' % (
            time, address, strength, company, data.hex())
        lines.append((time, text))

    for address, major, minor, x, until in BEACONS:
        data = ibeacon_data(major, minor, P1M)
        for t in advertisements(rng, BEACON_INTERVAL, until):
            distance = math.hypot(receiver_x(t) - x, BEACON_OFFSET)
            add(t, address, rssi(rng, distance), 76, data)

    address, distance, interval = PHONE
    for t in advertisements(rng, interval, DURATION):
        # Nearby Info: type 0x10, length 5, status flags, action code, 3 bytes of authentication tag.
        tag = bytes(rng.randrange(256) for _ in range(3))
        add(t, address, rssi(rng, distance) - 4, 76, bytes([0x10, 0x05, 0x01, 0x1C]) + tag)

    address, distance, interval = LAPTOP
    payload = bytes.fromhex("0109200296e1c44b7d3fa2e9c1") + bytes(rng.randrange(256) for _ in range(12))
    for t in advertisements(rng, interval, DURATION):
        add(t, address, rssi(rng, distance) + 2, 6, payload)

    lines.sort(key=lambda line: line[0])
    out = sys.stdout
    out.write("# Synthetic beacon recording, not a capture: an office corridor walked for 60 s.\n")
    out.write("# Made by scripts/make-beacon-fixture.py (seed %d): three iBeacons of %s\n" % (SEED, UUID))
    out.write("# (major 1 minor 1, major 1 minor 2, major 2 minor 7; the last silent after 30 s), an\n")
    out.write("# Apple phone (Nearby Info, not an iBeacon) and a Microsoft Swift Pair laptop.\n")
    out.write("# RSSI = %d - 10 * %.1f * log10(d) + N(0, %.0f dB); 10 %% of advertisements missed.\n"
              % (P1M, PATH_LOSS_EXPONENT, SIGMA))
    for _, text in lines:
        out.write(text + "\n")


if __name__ == "__main__":
    main()
