# CoreLocation for Linux. `make demo` and `make test` set everything up on a fresh Debian 12 machine
# (apt packages through scripts/setup-debian.sh, as root or with sudo) and then run.
#
# Installing (README, "Installing"): `make` builds the programs and the man pages, then
# `sudo make install` copies them, with the systemd units, the example configuration and the shell
# completions, under PREFIX (default /usr/local), inside DESTDIR when set; `make uninstall` removes
# exactly what `make install` put there. `make dist` makes the source tarball.

SWIFT ?= swift
TRACK ?= $(CURDIR)/Examples/tracks/ijsselmeer-2018.nmea
# Warnings are errors for this package's own builds (Package.swift explains why it does not set it).
STRICT := -Xswiftc -warnings-as-errors

# The version of the programs (whereami --version); debian/changelog names the same one.
VERSION := $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/LocationCLI/WhereAmI.swift)

# Man pages carry a date: the last commit's (or SOURCE_DATE_EPOCH's), so that a build is
# reproducible.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
ifneq ($(SOURCE_DATE_EPOCH),)
export SOURCE_DATE_EPOCH
endif

# MARK: Where `make install` puts things
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/corelocation
# locationd reads /etc/corelocation/locationd.conf whatever the prefix.
SYSCONFDIR ?= /etc
# systemd reads units, and systemd-sysusers users, under /usr/local/lib as well as /usr/lib.
SYSTEMD_SYSTEM_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
SYSTEMD_USER_UNIT_DIR ?= $(PREFIX)/lib/systemd/user
SYSUSERS_DIR ?= $(PREFIX)/lib/sysusers.d
# The shells look in these under /usr/local/share as well as /usr/share.
BASH_COMPLETION_DIR ?= $(DATADIR)/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(DATADIR)/zsh/site-functions
FISH_COMPLETION_DIR ?= $(DATADIR)/fish/vendor_completions.d
INSTALL ?= install
# `install -s` strips the programs (symbols are most of an unstripped file); empty keeps them
# (Debian's dh_strip strips instead).
INSTALL_STRIP ?= -s

# MARK: What it installs
# whereami, locationd and locationctl are one statically linked executable under three names
# (hard links): Sources/corelocation-multicall/main.swift says why.
PROGRAM := .build/release/corelocation-multicall
PROGRAMS := whereami locationd locationctl
MAN_PAGES := whereami.1 locationctl.1 locationd.8 locationd.conf.5 corelocation-sources.7
RENDERED_MAN_PAGES := $(MAN_PAGES:%=.build/man/%)
EXAMPLE_CONFIG := dist/config/locationd.conf
INSTALLED_CONFIG := $(DESTDIR)$(SYSCONFDIR)/corelocation/locationd.conf

.DEFAULT_GOAL := all
.PHONY: all setup build programs bench-locationd print-sections man demo test lint format bench \
  bench-install install uninstall dist clean

# `make`: the installable programs (static, release) and the man pages.
all: setup programs man

setup:
	@scripts/setup-debian.sh

build: setup
	$(SWIFT) build $(STRICT) --product whereami

# The programs' code laid out for the path a fix takes (docs/performance.md, "Latency"): every
# function in a section of its own, linked by the Swift toolchain's ld.lld (SECTIONS), which places
# first, in the order of Data/hot-path.order (made by scripts/hot-path-profile.sh, which links with
# SECTIONS alone), the few hundred functions that a fix runs through, so that they share a few dozen
# pages.
SECTIONS := -Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -use-ld=lld
LAYOUT := $(SECTIONS) -Xlinker --symbol-ordering-file=$(CURDIR)/Data/hot-path.order \
  -Xlinker --no-warn-symbol-ordering

# The three programs in one executable, optimized, with the Swift runtime and Foundation linked
# statically: it needs only system libraries (README, "Installing").
# SwiftPM does not know the order file as an input: a newer one removes the program first, so
# that it is linked again.
programs:
	@if [ Data/hot-path.order -nt $(PROGRAM) ]; then rm -f $(PROGRAM); fi
	$(SWIFT) build $(STRICT) -c release --static-swift-stdlib $(LAYOUT) \
	  --product corelocation-multicall

# The locationd that the benchmarks run (`locbench daemon`, `latency`, `hostile`; they run this
# target): built as the installed programs are, in a build directory of its own, so that
# `swift run -c release locbench`'s build is left alone.
BENCH_LOCATIOND := .build-bench/release/locationd
bench-locationd:
	@if [ Data/hot-path.order -nt $(BENCH_LOCATIOND) ]; then rm -f $(BENCH_LOCATIOND); fi
	$(SWIFT) build --scratch-path .build-bench -c release --static-swift-stdlib $(LAYOUT) \
	  --product locationd

# The flags of an unordered layout, for scripts/hot-path-profile.sh.
print-sections:
	@echo $(SECTIONS)

man: $(RENDERED_MAN_PAGES)

.build/man/%: docs/man/%.scd
	@mkdir -p $(@D)
	scdoc < $< > $@.tmp && mv $@.tmp $@

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
# the installable programs and man pages (the installation tests install them into a scratch
# directory), then every test.
# The test that holds a thousand connections runs in a process of its own: with the other tests'
# descriptors beside them, /proc/self/fd can pass the ~1,350 entries at which Foundation's
# Process.run() reads past its getdents buffer and crashes the test process when a test starts a
# program (Tests/LocationDaemonTests/DaemonPublishDescriptorTests.swift; fixed upstream by
# swift-corelibs-foundation's pull request 5472, which Swift 6.3.1 does not have).
ISOLATED_TESTS = DaemonPublishDescriptorTests

test: setup lint
	$(SWIFT) build $(STRICT) --build-tests
	$(MAKE) programs man
	$(SWIFT) test $(STRICT) --skip-build --skip $(ISOLATED_TESTS)
	$(SWIFT) test $(STRICT) --skip-build --filter $(ISOLATED_TESTS)

bench: setup
	$(SWIFT) run -c release locbench all

# The installation's figures: the installed size of the programs and whereami's cold start against
# gpspipe's, from an installation into a scratch directory.
bench-install: all
	scripts/bench-install.sh

# `make install` does not build (run `make` first, as yourself): a build as root would leave files
# in .build that your next build cannot replace.
$(PROGRAM):
	@echo "$@ is not built: run make (or make programs) first, then make install" >&2
	@exit 1

# A program that needs the Swift toolchain's libraries is refused: a plain `swift build -c release`
# after `make` relinks it without --static-swift-stdlib, and the installed programs would then
# not run on a machine without the toolchain.
install: $(PROGRAM) $(RENDERED_MAN_PAGES)
	@if ldd $(PROGRAM) 2>/dev/null | grep -q 'libswift\|libFoundation\|libdispatch\|libBlocksRuntime'; then \
	  echo "$(PROGRAM) needs the Swift toolchain's libraries (rebuilt by swift build -c release?):" \
	    "run make (or make programs) first, then make install" >&2; \
	  exit 1; \
	fi
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 0755 $(INSTALL_STRIP) $(PROGRAM) $(DESTDIR)$(BINDIR)/whereami
	ln -f $(DESTDIR)$(BINDIR)/whereami $(DESTDIR)$(BINDIR)/locationd
	ln -f $(DESTDIR)$(BINDIR)/whereami $(DESTDIR)$(BINDIR)/locationctl
	$(INSTALL) -d $(DESTDIR)$(DATADIR)/corelocation
	$(INSTALL) -m 0644 Data/gazetteer/gazetteer.clgz $(DESTDIR)$(DATADIR)/corelocation/
	$(INSTALL) -d $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR) $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)
	sed 's|/usr/local/bin/locationd|$(BINDIR)/locationd|' dist/systemd/locationd.service \
	  > $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/locationd.service
	sed 's|%h/.local/bin/locationd|$(BINDIR)/locationd|' dist/systemd/user/locationd.service \
	  > $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/locationd.service
	chmod 0644 $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/locationd.service \
	  $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/locationd.service
	$(INSTALL) -d $(DESTDIR)$(SYSUSERS_DIR)
	$(INSTALL) -m 0644 dist/sysusers/corelocation.conf $(DESTDIR)$(SYSUSERS_DIR)/corelocation.conf
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	  $(DESTDIR)$(MANDIR)/man8
	for page in $(MAN_PAGES); do \
	  $(INSTALL) -m 0644 .build/man/$$page $(DESTDIR)$(MANDIR)/man$${page##*.}/$$page || exit 1; \
	done
	$(INSTALL) -d $(DESTDIR)$(BASH_COMPLETION_DIR) $(DESTDIR)$(ZSH_COMPLETION_DIR) \
	  $(DESTDIR)$(FISH_COMPLETION_DIR)
	$(INSTALL) -m 0644 dist/completions/bash/corelocation $(DESTDIR)$(BASH_COMPLETION_DIR)/whereami
	ln -sf whereami $(DESTDIR)$(BASH_COMPLETION_DIR)/locationd
	ln -sf whereami $(DESTDIR)$(BASH_COMPLETION_DIR)/locationctl
	$(INSTALL) -m 0644 dist/completions/zsh/_corelocation $(DESTDIR)$(ZSH_COMPLETION_DIR)/
	$(INSTALL) -m 0644 $(PROGRAMS:%=dist/completions/fish/%.fish) $(DESTDIR)$(FISH_COMPLETION_DIR)/
	$(INSTALL) -d $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0644 $(EXAMPLE_CONFIG) $(DESTDIR)$(DOCDIR)/locationd.conf.example
	$(INSTALL) -m 0644 Data/gazetteer/README.md $(DESTDIR)$(DOCDIR)/README.gazetteer.md
	@# The example configuration goes to /etc only where there is none: never over a file of yours.
	@if [ -e $(INSTALLED_CONFIG) ]; then \
	  echo "install: kept $(INSTALLED_CONFIG); the example is $(DOCDIR)/locationd.conf.example"; \
	else \
	  echo "$(INSTALL) -D -m 0644 $(EXAMPLE_CONFIG) $(INSTALLED_CONFIG)"; \
	  $(INSTALL) -D -m 0644 $(EXAMPLE_CONFIG) $(INSTALLED_CONFIG); \
	fi

# Removes what `make install` installed with the same variables. The configuration file in /etc
# goes only while it is the example, unchanged: a file you changed (or had before) stays.
uninstall:
	@if [ -e $(INSTALLED_CONFIG) ] && ! cmp -s $(INSTALLED_CONFIG) $(EXAMPLE_CONFIG); then \
	  echo "uninstall: kept $(INSTALLED_CONFIG): it is not the example"; \
	else \
	  echo "rm -f $(INSTALLED_CONFIG)"; rm -f $(INSTALLED_CONFIG); \
	fi
	rm -f $(PROGRAMS:%=$(DESTDIR)$(BINDIR)/%)
	rm -f $(DESTDIR)$(DATADIR)/corelocation/gazetteer.clgz
	rm -f $(DESTDIR)$(SYSTEMD_SYSTEM_UNIT_DIR)/locationd.service \
	  $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/locationd.service
	rm -f $(DESTDIR)$(SYSUSERS_DIR)/corelocation.conf
	for page in $(MAN_PAGES); do rm -f $(DESTDIR)$(MANDIR)/man$${page##*.}/$$page; done
	rm -f $(PROGRAMS:%=$(DESTDIR)$(BASH_COMPLETION_DIR)/%)
	rm -f $(DESTDIR)$(ZSH_COMPLETION_DIR)/_corelocation
	rm -f $(PROGRAMS:%=$(DESTDIR)$(FISH_COMPLETION_DIR)/%.fish)
	rm -f $(DESTDIR)$(DOCDIR)/locationd.conf.example $(DESTDIR)$(DOCDIR)/README.gazetteer.md
	@# The project's own directories, when empty; shared ones (bin, man1, ...) stay.
	-rmdir $(DESTDIR)$(DATADIR)/corelocation $(DESTDIR)$(DOCDIR) \
	  $(DESTDIR)$(SYSCONFDIR)/corelocation 2>/dev/null

# The source tarball: every file under version control (the working tree's, changes included),
# which is everything `make test` needs; outside a git checkout, the tree without build products.
DISTDIR ?= $(CURDIR)
DIST_NAME := corelocation-$(VERSION)
dist:
	@mkdir -p $(DISTDIR)
	@if git rev-parse --git-dir >/dev/null 2>&1; then \
	  tree=$$(git stash create); \
	  git archive --format=tar --prefix=$(DIST_NAME)/ $${tree:-HEAD} \
	    | gzip -9n > $(DISTDIR)/$(DIST_NAME).tar.gz; \
	else \
	  tar --exclude=./.build --exclude='./.build-*' --exclude=./.swiftpm \
	    --exclude='./corelocation-*.tar.gz' --transform 's|^\.|$(DIST_NAME)|' \
	    -czf $(DISTDIR)/$(DIST_NAME).tar.gz .; \
	fi
	@echo "$(DISTDIR)/$(DIST_NAME).tar.gz"

clean:
	rm -rf .build .build-bench
