#!/usr/bin/env bash
# The README's promises about the `plimsoll` binary, checked on the real binary.
# Usage: cli_acceptance_test.sh PATH/TO/plimsoll
set -uo pipefail
plimsoll=${1:?usage: $0 PATH/TO/plimsoll}
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

unset SANDBOX_PROVIDER
expect "no provider: nothing ran, unsupported" 3 '^nothing ran: unsupported: .*--provider embedded' \
  -- "$plimsoll" run -e 'console.log(1)'
expect "floor vm on a weaker provider: isolation" 3 '^nothing ran: isolation: ' \
  -- "$plimsoll" run --floor vm -e 'console.log(1)'
expect "unknown provider lists the valid names" 3 'Unknown provider "nope"; valid providers are: disabled' \
  -- env SANDBOX_PROVIDER=nope "$plimsoll" run -e 'console.log(1)'
expect "json refusal carries the mark" 3 '"not_dispatched":"unsupported"' \
  -- "$plimsoll" run --json -e 'console.log(1)'
# The library path refuses a grant no broker serves, as the daemon does (issue 19 brings one).
expect "a grant profile nothing serves: nothing ran, permission" 3 '^nothing ran: permission: ' \
  -- "$plimsoll" run --provider embedded --grant crm-read -e 'console.log(1)'
expect "usage error" 2 'plimsoll: ' -- "$plimsoll" run --timeout soon -e 1
expect_joined "a run names its tier and the evidence's reason" 0 'isolation: +process why: +Tier process' \
  -- "$plimsoll" run --provider embedded -e 'console.log(1)'
# The status checked is the CLI's own: a failing run must fail the check
# even when its output matches (it once went through `| tr`, whose status
# hid the CLI's).
expect "a failing run is not read as a success" 1 'isolation: +process' \
  -- "$plimsoll" run --provider embedded -e 'throw new Error("x")'

expect "describe disabled" 0 '^isolation: +none' -- "$plimsoll" describe
expect "version" 0 '^plimsoll [0-9]+\.[0-9]+\.[0-9]+ \(protocol 1\)' -- "$plimsoll" version

summarize
