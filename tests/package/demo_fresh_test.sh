#!/usr/bin/env bash
# Times the quick start as a newcomer meets it (issue 18 item 4): a fresh
# Debian 12 system, `git clone`, `make demo`, until the result is printed.
#
#   tests/package/demo_fresh_test.sh [REPOSITORY]   (default: this checkout)
#
# The fresh system is a bookworm chroot made by mmdebstrap (variant apt: the
# essential packages and apt, nothing else) plus what a newcomer needs to
# fetch the project at all: git, make and ca-certificates. Its mounts are
# /proc, /dev and /sys (apt, the compilers and CMake need them). What is timed
# starts with `git clone` of REPOSITORY's HEAD (its committed tree; a local
# clone, so the network time of a clone from a forge is not in the figure)
# and ends when `make demo` exits; it includes scripts/bootstrap --demo's
# `apt-get update` and install from Debian's archive, fetching QuickJS, and
# the build. Prints the demo's output and one line:
#
#   demo_fresh: git clone + make demo: 213 s (3 min 33 s) on 2 cores
#
# and fails when the demo does not print its result. Needs root, mmdebstrap
# and Debian's archive; without them it prints "skipped: <reason>" and exits
# 77. Not part of `make test` (it measures the machine, minutes of it).
set -euo pipefail

repository=$(readlink -f "${1:-$(dirname "$0")/../..}")
if [[ $(id -u) -ne 0 ]]; then echo "skipped: making a chroot needs root"; exit 77; fi
if ! command -v mmdebstrap >/dev/null; then echo "skipped: mmdebstrap is not installed"; exit 77; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/plimsoll-demo-fresh.XXXXXX")
chroot_dir=$work/chroot
cleanup() {
  for mount in sys dev proc; do umount -l "$chroot_dir/$mount" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

echo "demo_fresh: a fresh bookworm system (mmdebstrap --variant=apt, + git make ca-certificates)"
mmdebstrap --quiet --variant=apt --include=git,make,ca-certificates bookworm "$chroot_dir" \
  http://deb.debian.org/debian >/dev/null
mount -t proc proc "$chroot_dir/proc"
mount --bind /dev "$chroot_dir/dev"
mount --bind /sys "$chroot_dir/sys"
git clone --quiet --bare "$repository" "$chroot_dir/srv/plimsoll.git"

started=$(date +%s.%N)
chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb \
  sh -c 'cd /root && git clone --quiet /srv/plimsoll.git plimsoll && cd plimsoll && make demo' \
  2>&1 | tee "$work/demo.log"
status=${PIPESTATUS[0]}
ended=$(date +%s.%N)
seconds=$(python3 -c "print(round($ended - $started))")
if [[ $status -ne 0 ]]; then echo "demo_fresh: FAILED: make demo exited $status" >&2; exit 1; fi
grep -q '^isolation: *process$' "$work/demo.log" \
  || { echo "demo_fresh: FAILED: the demo printed no isolation tier" >&2; exit 1; }
printf 'demo_fresh: git clone + make demo: %s s (%d min %02d s) on %s cores\n' \
  "$seconds" $((seconds / 60)) $((seconds % 60)) "$(nproc)"
