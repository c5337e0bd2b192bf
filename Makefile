# The commands a newcomer needs. Every target installs what it needs itself
# (scripts/bootstrap is idempotent and quick when nothing is missing).
#
#   make demo    the quick start: build and run examples/minimal (embedded provider)
#   make test    bootstrap, build with ASan+UBSan, run every suite, then the
#                fuzzers for FUZZ_SECONDS (default 20) each
#   make fuzz    the fuzzers alone, longer (FUZZ_SECONDS, default 300)
#   make bench   release build, then the benchmarks with their raw baselines
#   make fmt     clang-format the tree
#   make lint    clang-format check + clang-tidy

SHELL := /bin/bash
.DEFAULT_GOAL := help
JOBS ?= $(shell nproc)

CXX_SOURCES = $(shell git ls-files '*.cc' '*.h' 2>/dev/null | grep -v '^third_party/')

.PHONY: help bootstrap debug release demo test test-unit fuzz bench fmt lint clean

help:
	@echo "make demo | test | fuzz | bench | fmt | lint | clean"

bootstrap:
	@scripts/bootstrap

debug: bootstrap
	@cmake --preset debug >/dev/null
	@cmake --build --preset debug -j $(JOBS)

release: bootstrap
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

demo: release
	@build/release/bin/plimsoll-minimal-example

# Every suite: C++ unit tests (ASan+UBSan), the conformance suite, the CLI
# acceptance checks, and the Python suites (record vectors, bench runner),
# all registered with CTest so one summary line counts them. Then the
# libFuzzer targets (fuzz/run: clang, its own build in build/fuzz), both at
# once for FUZZ_SECONDS each; a crash fails `make test`, a machine without
# clang's libFuzzer prints "fuzz: skipped: <reason>".
test: debug
	@cd build/debug && ctest --output-on-failure -j $(JOBS) --timeout 600
	@JOBS=$(JOBS) fuzz/run --seconds $(or $(FUZZ_SECONDS),20)

fuzz: bootstrap
	@JOBS=$(JOBS) fuzz/run --seconds $(or $(FUZZ_SECONDS),300)

bench: release
	@python3 bench/run.py --plimsoll-bin build/release/bin

fmt: bootstrap
	@clang-format -i $(CXX_SOURCES)

# fuzz/ is a clang project of its own (fuzz/run), not in build/release's
# compile database: clang-format checks it, clang-tidy does not.
lint: release
	@clang-format --dry-run --Werror $(CXX_SOURCES)
	@clang-tidy -p build/release --quiet $(filter-out fuzz/%,$(filter %.cc,$(CXX_SOURCES)))

clean:
	@rm -rf build
