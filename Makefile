# pvrdma for QEMU 10.0 and 10.2: build, test and run entry points.
#
#   make            install build dependencies, fetch QEMU 10.0 from Debian,
#                   build qemu-system-x86_64 with -device pvrdma
#   make check      build and run every test lane that runs on this machine
#   make check-slow the ibverbs backend end to end: a guest nested in a TCG
#                   host VM with Soft-RoCE, on -device pvrdma,ibdev=rxe0
#                   (tests/hostvm); make patches on QEMU 10.0 with every
#                   prefix of the series built, the manual built and the
#                   whole series' qtests run; NFS over RDMA from a pvrdma
#                   client to an rxe server (64 MiB); the qtests on QEMU
#                   10.2 under ASan; the Windows build under wine
#   make run        boot two Debian guests with the device on one link, show
#                   ibv_devinfo in each and run an RDMA ping-pong between them
#   make bench      pvrdma against Linux Soft-RoCE (rxe) in one TCG guest boot
#                   and between two guests on one link (next to the link's
#                   own ceiling), the host's memcpy bandwidth, NFS over
#                   RDMA, UCX and Open MPI between two guests,
#                   ib_write_bw through a link that loses 0.5% to 3% of
#                   its frames, 10,000 RDMA-CM connections, ib_write_bw
#                   on 1, 16 and 64 QPs, and make bench-mr (figures, not
#                   a test)
#   make bench-migration  what live migration costs: the device's state size
#                   and save/load time, and a guest's downtime with and
#                   without the device (figures, not a test)
#   make soak       two pvrdma guests for SOAK_SECONDS (7200) through a lossy
#                   link, guest A migrating every 5 minutes: ping-pongs,
#                   perftest, rping, NVMe over RDMA and short RDMA-CM
#                   connections in cycles, each checking its data; fails on
#                   any failed program or QEMU's own memory (RSS outside
#                   guest RAM and TCG's code) or descriptors growing 1% per hour after
#                   the warm-up (SOAK_ARGS: soak.sh's
#                   options, e.g. "--migrate-every 120 --lossy 3:0.03:0:0:0")
#   make bench-mr   cost of giving a 1 GiB guest MR to a host RDMA device
#                   (host ranges for ibv_reg_mr; ibv_reg_mr in the host VM)
#   make fuzz       coverage-guided fuzzing of the device (libFuzzer, ASan,
#                   UBSan; FUZZ_SECONDS=600, FUZZ_ARGS e.g. "--merge"):
#                   executions, crashes, corpus, hw/rdma line coverage
#   make fuzz-mux   the same for rdmacm-mux's socket protocol
#   make install    install QEMU with the device, rdmacm-mux (man page,
#                   systemd unit template) and the docs under PREFIX
#                   (/usr/local) in DESTDIR; make uninstall removes them
#   make patches AUTHOR="Name <address>"  the device as a git format-patch
#                   series against QEMU 10.0 in build/patches/series (for
#                   distributions and review), from and signed off by AUTHOR
#
#   QEMU_VERSION=10.2  (any target) the same on QEMU 10.2.2, in build/v10.2;
#                   make check on 10.0 also runs lane v10.2 (10.2's build,
#                   qtests, guest and two guests)
#
# Everything generated lives under build/.

TOP      := $(abspath .)
# The QEMU release to build on: 10.0 (Debian trixie's source, the default)
# or 10.2 (10.2.2, Debian sid's source), whose trees live in build/v10.2.
QEMU_VERSION ?= 10.0
ifeq ($(filter 10.0 10.2,$(QEMU_VERSION)),)
$(error QEMU_VERSION=$(QEMU_VERSION): 10.0 or 10.2)
endif
BUILD    := $(TOP)/build$(if $(filter 10.2,$(QEMU_VERSION)),/v10.2)
QEMU     := $(BUILD)/qemu/qemu-system-x86_64
export QEMU_VERSION
export QEMU_SRC := $(BUILD)/qemu-src
# ccache keys on the compiler's paths: under one base directory they are
# made relative, so a second clone (CI's, a colleague's) hits what this one
# built.  NOHASHDIR: with -g the build directory would be hashed as well.
export CCACHE_BASEDIR ?= $(TOP)
export CCACHE_NOHASHDIR ?= 1

# Debian packages the build and the test lanes need.
BUILD_DEPS := build-essential ninja-build pkg-config python3-venv \
	python3-pycotap libglib2.0-dev libpixman-1-dev libslirp-dev \
	zlib1g-dev libfdt-dev libattr1-dev flex bison xz-utils dpkg-dev \
	ccache seabios ipxe-qemu libibverbs-dev librdmacm-dev libibumad-dev
GUEST_DEPS := linux-source-6.1 rdma-core ibverbs-providers ibverbs-utils \
	rdmacm-utils perftest busybox-static cpio kmod
# The series' docs: docutils parses the manual's page (make check's lane
# patches), sphinx builds QEMU's manual with it (make check-slow).
DOCS_DEPS := python3-docutils python3-sphinx python3-sphinx-rtd-theme

.PHONY: all deps tree build build-asan check check-qtest check-abi \
	check-guest check-fuzz run bench bench-mr bench-migration soak fuzz \
	fuzz-mux install uninstall patches clean \
	distclean help

all: build

PREFIX   ?= /usr/local
DESTDIR  ?=

help:
	@sed -n '2,/^# Everything generated/p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@bash scripts/apt-setup.sh $(BUILD_DEPS)
	@bash scripts/meson-check.sh

tree: deps
	@bash scripts/qemu-tree.sh $(TOP) $(BUILD)

build: tree
	@bash scripts/build-qemu.sh $(TOP) $(BUILD)/qemu

build-asan: tree
	@bash scripts/build-qemu.sh $(TOP) $(BUILD)/qemu-asan asan

check: build build-asan
	@bash scripts/apt-setup.sh $(GUEST_DEPS) python3-docutils
	@bash scripts/check.sh $(TOP) $(BUILD)

check-qtest: build build-asan
	@bash scripts/check.sh $(TOP) $(BUILD) qtest

check-abi: deps
	@bash scripts/check.sh $(TOP) $(BUILD) abi

check-guest: build
	@bash scripts/apt-setup.sh $(GUEST_DEPS)
	@bash scripts/check.sh $(TOP) $(BUILD) guest

check-fuzz: deps
	@bash scripts/check.sh $(TOP) $(BUILD) fuzz mux-fuzz

FUZZ_SECONDS ?= 600
fuzz: tree
	@bash tests/fuzz/run.sh $(TOP) $(BUILD)/fuzz --seconds $(FUZZ_SECONDS) \
		$(FUZZ_ARGS)

fuzz-mux:
	@bash tests/rdmacm-mux/fuzz/run.sh --seconds $(FUZZ_SECONDS) \
		$(BUILD)/rdmacm-mux-fuzz

check-slow: build
	@bash scripts/apt-setup.sh $(GUEST_DEPS) libibumad-dev python3 $(DOCS_DEPS)
	@bash scripts/check.sh $(TOP) $(BUILD) patches-build v10.2-asan workloads-slow slow mingw

install: build
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) bash scripts/install.sh install $(TOP) $(BUILD)/qemu

patches: tree
	@python3 scripts/make-patches.py $(TOP) $(BUILD)

uninstall:
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) bash scripts/install.sh uninstall $(TOP) $(BUILD)/qemu

run: build
	@bash scripts/apt-setup.sh $(GUEST_DEPS)
	@bash tests/guest/run.sh $(QEMU) $(BUILD)/guest

bench: build
	@bash scripts/apt-setup.sh $(GUEST_DEPS)
	@bash tests/bench/mr-reg-bench.sh
	@bash tests/bench/run-bench.sh $(QEMU) $(BUILD)/guest
	@bash tests/bench/g2g-bench.sh $(QEMU) $(BUILD)/guest
	@bash tests/bench/workloads-bench.sh $(QEMU) $(BUILD)/guest
	@bash tests/bench/loss-bench.sh $(QEMU) $(BUILD)/guest
	@bash tests/bench/scale-bench.sh $(QEMU) $(BUILD)/guest
	@bash tests/bench/qscale-bench.sh $(QEMU) $(BUILD)/guest

bench-mr:
	@bash tests/bench/mr-reg-bench.sh

# make soak: hours of traffic, loss and migration (tests/guest/soak.sh)
SOAK_SECONDS ?= 7200
soak: build
	@bash scripts/apt-setup.sh $(GUEST_DEPS)
	@QEMU=$(QEMU) bash tests/guest/soak.sh --seconds $(SOAK_SECONDS) $(SOAK_ARGS)

bench-migration: build
	@bash scripts/apt-setup.sh $(GUEST_DEPS)
	@bash tests/bench/migration-bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)/qemu $(BUILD)/qemu-asan $(BUILD)/guest $(BUILD)/guest-arm64 $(BUILD)/bench \
		$(BUILD)/hostvm

distclean:
	rm -rf $(BUILD)
