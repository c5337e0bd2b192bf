# The commands a newcomer needs. Every target installs what it needs itself
# (scripts/bootstrap is idempotent and quick when nothing is missing).
#
#   make demo    the quick start: build and run examples/minimal (embedded provider)
#   make test    bootstrap, build with ASan+UBSan, run every suite
#   make bench   release build, then the benchmarks with their raw baselines
#   make fmt     clang-format the tree
#   make lint    clang-format check + clang-tidy

SHELL := /bin/bash
.DEFAULT_GOAL := help
JOBS ?= $(shell nproc)

CXX_SOURCES = $(shell git ls-files '*.cc' '*.h' 2>/dev/null | grep -v '^third_party/')

.PHONY: help bootstrap debug release demo test test-unit bench fmt lint clean

help:
	@echo "make demo | test | bench | fmt | lint | clean"

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
# all registered with CTest so one summary line counts them.
test: debug
	@cd build/debug && ctest --output-on-failure -j $(JOBS) --timeout 600

bench: release
	@python3 bench/run.py --plimsoll-bin build/release/bin

fmt: bootstrap
	@clang-format -i $(CXX_SOURCES)

lint: release
	@clang-format --dry-run --Werror $(CXX_SOURCES)
	@clang-tidy -p build/release --quiet $(filter %.cc,$(CXX_SOURCES))

clean:
	@rm -rf build
