#!/usr/bin/env bash
# `plimsoll run --daemon` and `plimsoll describe --daemon`, the real binaries:
# a plimsolld (embedded, --dev, port 0 and a Unix socket) is started, its
# serving line read for the port, and the CLI is checked against it.
# Usage: cli_daemon_test.sh PATH/TO/plimsoll PATH/TO/plimsolld
set -uo pipefail
plimsoll=${1:?usage: $0 PATH/TO/plimsoll PATH/TO/plimsolld}
plimsolld=${2:?usage: $0 PATH/TO/plimsoll PATH/TO/plimsolld}
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

workdir=$(mktemp -d "${TMPDIR:-/tmp}/plimsoll-cli-daemon-XXXXXX")
socket="$workdir/plimsolld.sock"
daemon_pid=
cleanup() {
  if [ -n "$daemon_pid" ]; then
    kill -TERM "$daemon_pid" 2>/dev/null
    wait "$daemon_pid" 2>/dev/null
  fi
  rm -rf "$workdir"
}
trap cleanup EXIT

unset SANDBOX_PROVIDER PLIMSOLL_TOKEN
# The serving line is read from a pipe (no polling): the port is known once
# the daemon serves.
coproc DAEMON { exec "$plimsolld" --provider embedded --dev --listen 127.0.0.1:0 \
  --metrics-listen off --unix-socket "$socket" 2>"$workdir/daemon.err"; }
daemon_pid=$DAEMON_PID
serving=
if ! read -t 120 -r serving <&"${DAEMON[0]}"; then
  echo "FAIL plimsolld did not print its serving line; its stderr:"
  sed 's/^/    /' "$workdir/daemon.err"
  exit 1
fi
api=$(sed -nE 's/^plimsolld: serving api=([^ ]+).*/\1/p' <<<"$serving")
if [ -z "$api" ]; then
  echo "FAIL unexpected serving line: $serving"
  exit 1
fi
url="http://$api"
echo "daemon: $serving"

expect "run over http" 0 '^isolation:  process' \
  -- "$plimsoll" run --daemon "$url" -e 'console.log(6*7)'
expect "stdout travels" 0 '^42$' \
  -- "$plimsoll" run --daemon "$url" -e 'console.log(6*7)'
expect "a failing snippet ran: status 1" 1 '^exit code:  [1-9]' \
  -- "$plimsoll" run --daemon "$url" -e 'throw new Error("x")'
expect "floor above the tier: nothing ran, isolation" 3 '^nothing ran: isolation: ' \
  -- "$plimsoll" run --daemon "$url" --floor vm -e 'console.log(1)'
expect "json answer carries the record" 0 '"record":\{"version":1' \
  -- "$plimsoll" run --json --daemon "$url" -e 'console.log(1)'
expect "json refusal carries the mark" 3 '"not_dispatched":"isolation"' \
  -- "$plimsoll" run --json --daemon "$url" --floor kernel -e 'console.log(1)'
expect "run over the unix socket" 0 '^42$' \
  -- "$plimsoll" run --daemon "unix:$socket" -e 'console.log(6*7)'
expect "describe over the daemon" 0 '^isolation: +process \(from evidence\)' \
  -- "$plimsoll" describe --daemon "$url"
expect "cleartext to a non-loopback address is refused" 3 \
  '^nothing ran: request: Refusing cleartext http:// to 192\.0\.2\.1.*--allow-cleartext' \
  -- "$plimsoll" run --daemon http://192.0.2.1:8470 -e 'console.log(1)'
expect "--token-file needs --daemon" 2 'plimsoll: ' \
  -- "$plimsoll" run --token-file /dev/null -e 1

# `plimsoll session`: one command per call, the chain kept in the state dir.
export PLIMSOLL_STATE_DIR="$workdir/state"
session_id=$("$plimsoll" session open --daemon "$url" 2>"$workdir/open.err")
checks=$((checks + 1))
if [[ "$session_id" =~ ^[0-9a-f]{32}$ ]] && grep -q "tier process" "$workdir/open.err"; then
  echo "ok   session open prints the ID alone and the tier on stderr"
else
  echo "FAIL session open: '$session_id' / $(cat "$workdir/open.err")"
  failures=$((failures + 1))
fi
expect "session run keeps state: first cell" 0 '' \
  -- "$plimsoll" session run --daemon "$url" "$session_id" -e 'var x = 41'
expect "session run keeps state: x + 1 is 42" 0 '^42$' \
  -- "$plimsoll" session run --daemon "$url" "$session_id" -e 'x + 1'
expect "session list shows it with its calls" 0 ' 2 call\(s\)$' \
  -- "$plimsoll" session list
chain_file=$(ls "$PLIMSOLL_STATE_DIR/sessions/")
checks=$((checks + 1))
if [ "$(stat -c %a "$PLIMSOLL_STATE_DIR/sessions/$chain_file")" = 600 ] &&
   ! grep -q "$session_id" "$PLIMSOLL_STATE_DIR/sessions/$chain_file"; then
  echo "ok   the chain file is 0600 and does not hold the ID"
else
  echo "FAIL the chain file: $(ls -l "$PLIMSOLL_STATE_DIR/sessions/")"
  failures=$((failures + 1))
fi
expect "session close names the calls" 0 '^session closed after 2 call\(s\); last record [0-9a-f]{64}$' \
  -- "$plimsoll" session close --daemon "$url" "$session_id"
expect "a closed session is unknown to the CLI" 3 'no record of that session' \
  -- "$plimsoll" session run --daemon "$url" "$session_id" -e '1'
expect "session run needs an ID" 2 'plimsoll: ' \
  -- "$plimsoll" session run --daemon "$url"
# A chain that does not match the daemon's records (calls it does not know
# of) is data loss: the answer is not believed.
other_id=$("$plimsoll" session open --daemon "$url" 2>/dev/null)
other_file=$(ls "$PLIMSOLL_STATE_DIR/sessions/")
sed -i 's/^last_sequence .*/last_sequence 7/' "$PLIMSOLL_STATE_DIR/sessions/$other_file"
expect "a broken chain is data_loss" 4 'data_loss' \
  -- "$plimsoll" session run --daemon "$url" "$other_id" -e '1'

kill -TERM "$daemon_pid"
wait "$daemon_pid"
status=$?
daemon_pid=
checks=$((checks + 1))
if [ "$status" -ne 0 ]; then
  echo "FAIL plimsolld exited $status after SIGTERM"
  failures=$((failures + 1))
else
  echo "ok   plimsolld drained and exited 0"
fi
expect "a stopped daemon: nothing ran, capacity" 3 '^nothing ran: capacity: Cannot reach the daemon' \
  -- "$plimsoll" run --daemon "$url" -e 'console.log(1)'

summarize
