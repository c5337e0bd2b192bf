# Shared by the shell acceptance tests: `expect` runs one command and checks
# its exit status and output; `summarize` prints the count and is the
# script's verdict. Source it, then call expect once per promise:
#   source "$(dirname "$0")/expect.sh"
#   expect "NAME" STATUS 'EXTENDED-REGEX' -- command args...
#   summarize
failures=0
checks=0

# expect NAME STATUS PATTERN -- command...
expect() {
  local name=$1 want_status=$2 pattern=$3
  shift 4
  local output status
  output=$("$@" 2>&1)
  status=$?
  checks=$((checks + 1))
  if [ "$status" -ne "$want_status" ] || ! grep -qE -- "$pattern" <<<"$output"; then
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
