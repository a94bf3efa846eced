# CoreLocation for Linux. `make demo` and `make test` set everything up on a fresh Debian 12 machine
# (apt packages through scripts/setup-debian.sh, as root or with sudo) and then run.

SWIFT ?= swift
TRACK ?= $(CURDIR)/Examples/tracks/ijsselmeer-2018.nmea
# Warnings are errors for this package's own builds (Package.swift explains why it does not set it).
STRICT := -Xswiftc -warnings-as-errors

.PHONY: setup build demo test lint format bench clean

setup:
	@scripts/setup-debian.sh

build: setup
	$(SWIFT) build $(STRICT) --product whereami

# The main job: whereami on a bundled real recording (a sailing boat on the IJsselmeer), 30x speed.
demo: build
	@echo "whereami --watch replaying $(notdir $(TRACK)) at 30x:" >&2
	@$$($(SWIFT) build --show-bin-path)/whereami --watch --source "replay://$(TRACK)" --speed 30 \
	  --format '%time  %latitude %longitude  %speed m/s  course %direction'

# The formatter's lint, then the architecture's mechanical rules (docs/architecture.md, "Rules").
lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests
	$(SWIFT) package describe --type json | /usr/bin/python3 scripts/check-architecture.py

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

# The test command: formatter and architecture checks, a warnings-as-errors build of everything,
# then every test.
test: setup lint
	$(SWIFT) build $(STRICT) --build-tests
	$(SWIFT) test $(STRICT) --skip-build

bench: setup
	$(SWIFT) run -c release locbench all

clean:
	rm -rf .build
