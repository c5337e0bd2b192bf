# The commands a newcomer needs. Every target installs what it needs itself
# (scripts/bootstrap is idempotent and quick when nothing is missing).
#
#   make demo    the quick start: build and run examples/minimal (embedded provider)
#   make test    bootstrap, build with ASan+UBSan, run every suite, then the
#                fuzzers' deterministic check (fixed seeds and run counts)
#   make fuzz    the fuzzers alone, exploring: random seed, growing corpus,
#                FUZZ_SECONDS (default 300) and/or FUZZ_RUNS (e.g. 10000000)
#   make bench   release build, then the benchmarks with their raw baselines
#   make soak    release build, then SOAK_RUNS (default 10000) runs per OS-level
#                provider through one daemon each (SOAK_MICROVM_RUNS, default 300,
#                for microvm), failing on growth or leftovers (docs/reliability.md)
#   make package release build, then the Debian package (scripts/make-deb) in
#                build/release/package and its install test in a fresh chroot
#                (tests/package/deb_install_test.sh)
#   make oracle  release build, then the exam oracle (examples/oracle): the accepted
#                cart-pole controller twice and its draft once on the linux provider,
#                and the HTML report in build/oracle/report.html (docs/exams.md)
#   make replays the agent integrations' examples run and recorded (debug build),
#                then their replay pages in build/debug/replays, checked in Chromium
#   make plant-replays  release build, then each plant's passing and failing example
#                controller on the linux provider, and a replay page per plant in
#                build/plant-replays/index.html (docs/exams.md, "Replay pages")
#   make attest-example  debug build, then a five-call session signed by plimsoll-attest
#                (embedded provider), verified intact, with a call dropped and with one
#                byte changed, and the page in build/attest-example/index.html
#                (docs/attest.md, "The example")
#   make fmt     clang-format the tree
#   make lint    clang-format check + clang-tidy

SHELL := /bin/bash
.DEFAULT_GOAL := help
JOBS ?= $(shell nproc)

CXX_SOURCES = $(shell git ls-files '*.cc' '*.h' 2>/dev/null | grep -v '^third_party/')

.PHONY: help bootstrap debug release demo package test test-unit fuzz bench soak oracle plant-replays attest-example replays fmt lint clean

help:
	@echo "make demo | test | fuzz | bench | soak | oracle | plant-replays | attest-example | package | replays | fmt | lint | clean"

bootstrap:
	@scripts/bootstrap

debug: bootstrap
	@cmake --preset debug >/dev/null
	@cmake --build --preset debug -j $(JOBS)

release: bootstrap
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

# The quick start: only what the embedded example needs is installed
# (scripts/bootstrap --demo) and built (its target and what it links: no guest
# image, no tests), into the release tree that `make release` completes later.
demo:
	@scripts/bootstrap --demo
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS) --target plimsoll_minimal_example
	@build/release/bin/plimsoll-minimal-example

# The Debian package of the release build, installed, run and removed in a
# fresh Debian chroot (mmdebstrap; needs root and Debian's archive).
package: release
	@deb=$$(scripts/make-deb build/release build/release/package) && echo "$$deb" && \
	  tests/package/deb_install_test.sh "$$deb"

# Every suite: C++ unit tests (ASan+UBSan), the conformance suite, the CLI
# acceptance checks, and the Python suites (record vectors, bench runner),
# all registered with CTest so one summary line counts them. The providers
# this machine hosts (scripts/hosted-providers: root, the OCI runtimes, QEMU)
# are required: the conformance and hostile suites fail rather than skip
# them (tests/README.md). After ctest, every skipped gtest case is listed with
# its reason (scripts/skip-summary), so what did not run is visible. Then the
# libFuzzer targets (fuzz/run: clang, its own build in build/fuzz) in their
# deterministic form: committed seeds and regressions replayed, then a fixed
# seed and run count per target (docs/reliability.md, "Fuzzing"), so the
# same tree passes or fails the same way every time. A crash fails `make
# test`; a machine without clang's libFuzzer prints "fuzz: skipped: <reason>".
# The fuzz step runs beside ctest at nice 19, so it takes only the CPU the
# tests leave idle (the suites that start sandboxes run one at a time; a
# quarter of two cores sits idle then); its output follows the skip summary.
# Its run counts are fixed, so running beside ctest changes no result.
test: debug
	@rm -rf build/debug/test-results build/fuzz-check.log
	@mkdir -p build
	@(JOBS=$(JOBS) nice -n 19 fuzz/run >build/fuzz-check.log 2>&1) & fuzz=$$!; \
	  status=0; cd build/debug && \
	  PLIMSOLL_REQUIRE_PROVIDERS=$$(../../scripts/hosted-providers) \
	    ctest --output-on-failure -j $(JOBS) --timeout 600 || status=$$?; \
	  ../../scripts/skip-summary test-results; \
	  fuzz_status=0; wait $$fuzz || fuzz_status=$$?; cat ../fuzz-check.log; \
	  [ $$status -eq 0 ] || exit $$status; exit $$fuzz_status

# Random exploration (fuzz/run --explore): FUZZ_SECONDS per target (default
# 300), or FUZZ_RUNS executions per target, e.g. `make fuzz FUZZ_RUNS=10000000`.
fuzz: bootstrap
	@JOBS=$(JOBS) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) fuzz/run --explore

bench: release
	@python3 bench/run.py --plimsoll-bin build/release/bin

oracle: release
	@python3 examples/oracle/oracle.py --plimsolld build/release/bin/plimsolld \
	  --image build/release/image --out build/oracle/report.html

plant-replays: release
	@python3 examples/plant_replays/plant_replays.py --plimsolld build/release/bin/plimsolld \
	  --image build/release/image --out build/plant-replays

attest-example: debug
	@python3 examples/attest/attest_example.py --plimsoll-attest build/debug/bin/plimsoll-attest \
	  --plimsolld build/debug/bin/plimsolld --out build/attest-example

replays: debug
	@cd build/debug && PLIMSOLL_REQUIRE_PROVIDERS=$$(../../scripts/hosted-providers) \
	  ctest --output-on-failure -R '^(clients_python|clients_python_linux|clients_typescript|integration_replay_pages)$$'
	@echo "replay pages: build/debug/replays/index.html"

# A provider this machine cannot host prints "skipped: PROVIDER: <reason>";
# SOAK_PROVIDERS narrows the list (e.g. SOAK_PROVIDERS="embedded linux").
SOAK_RUNS ?= 10000
SOAK_MICROVM_RUNS ?= 300
SOAK_PROVIDERS ?= embedded linux oci:runc oci:crun oci:runsc microvm
soak: release
	@PLIMSOLL_IMAGE=$(CURDIR)/build/release/image python3 tests/reliability/soak_test.py \
	  build/release/bin/plimsolld $(foreach p,$(SOAK_PROVIDERS),$(p)=$(if $(filter microvm,$(p)),$(SOAK_MICROVM_RUNS),$(SOAK_RUNS)))

fmt: bootstrap
	@clang-format -i $(CXX_SOURCES)

# fuzz/ is a clang project of its own (fuzz/run), not in build/release's
# compile database: clang-format checks it, clang-tidy does not.
lint: release
	@clang-format --dry-run --Werror $(CXX_SOURCES)
	@clang-tidy -p build/release --quiet $(filter-out fuzz/%,$(filter %.cc,$(CXX_SOURCES)))

clean:
	@rm -rf build
