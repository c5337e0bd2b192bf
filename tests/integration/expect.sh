# Shared by the shell acceptance tests: `expect` runs one command and checks
# its exit status and output; `summarize` prints the count and is the
# script's verdict. Source it, then call expect once per promise:
#   source "$(dirname "$0")/expect.sh"
#   expect "NAME" STATUS 'EXTENDED-REGEX' -- command args...
#   summarize
failures=0
checks=0

# expect NAME STATUS PATTERN -- command...
# The status checked is the command's own: run the command itself, never a
# pipeline (`bash -c "cmd | tr ..."` reports tr's status); to match across
# lines use expect_joined.
expect() {
  _expect "" "$@"
}

# expect_joined NAME STATUS PATTERN -- command...
# Like expect, with the output's lines joined by spaces before PATTERN is
# matched (for promises that span lines).
expect_joined() {
  _expect joined "$@"
}

_expect() {
  local joined=$1 name=$2 want_status=$3 pattern=$4
  shift 5
  local output status matched
  output=$("$@" 2>&1)
  status=$?
  checks=$((checks + 1))
  matched=$output
  if [ -n "$joined" ]; then matched=${output//$'\n'/ }; fi
  if [ "$status" -ne "$want_status" ] || ! grep -qE -- "$pattern" <<<"$matched"; then
    echo "FAIL $name: status $status (want $want_status), output:"
    echo "$output" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

# The last command of a test script: a line of counts; fails when any failed.
summarize() {
  echo "$((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ]
}
