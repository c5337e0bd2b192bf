#!/bin/bash
# Checks deploy/plimsolld.service with `systemd-analyze verify` (CTest:
# plimsolld_systemd_unit). Exit 77 = skipped, with the reason on stdout.
#
#   verify_unit.sh UNIT_FILE PLIMSOLLD_BINARY
#
# verify insists that ExecStart= names an existing executable, so the unit is
# checked as a copy whose ExecStart= points at the binary just built. Any
# complaint about the unit (an unknown or misspelt key, a bad value) fails.
set -euo pipefail
unit=$1
binary=$2

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "skipped: systemd-analyze is not installed"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy="$work/plimsolld.service"
sed "s|^ExecStart=/usr/local/bin/plimsolld |ExecStart=$binary |" "$unit" >"$copy"
if ! grep -q "^ExecStart=$binary " "$copy"; then
  echo "FAIL: no 'ExecStart=/usr/local/bin/plimsolld ' line to check in $unit"
  exit 1
fi

status=0
output=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no "$copy" 2>&1) || status=$?
# Lines about other units (the host's own) are not ours to judge.
ours=$(grep -F "plimsolld.service" <<<"$output" || true)
if [[ $status -ne 0 || -n "$ours" ]]; then
  echo "FAIL: systemd-analyze verify (exit $status):"
  echo "$output"
  exit 1
fi
echo "systemd-analyze verify: $unit is clean"

# The exposure score, for the log only: the daemon must keep the privileges
# that build sandboxes, so it can never score like an unprivileged service.
if systemd-analyze security --help 2>/dev/null | grep -q -- "--offline"; then
  systemd-analyze security --offline=yes --no-pager "$copy" 2>/dev/null | tail -n 1 || true
fi
