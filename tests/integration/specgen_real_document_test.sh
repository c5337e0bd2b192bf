#!/usr/bin/env bash
# `plimsoll specgen` on real public OpenAPI documents (docs/specgen.md): the
# ones @readme/oas-examples ships (Bump.sh's Train Travel API, the Swagger
# Petstore, the USPTO Data Set API), fetched now with `npm pack` at a pinned
# version and checked by the tarball's sha256. Nothing third-party is kept in
# the repository. Skipped (77) only when the registry cannot be reached.
# Usage: specgen_real_document_test.sh PATH/TO/plimsoll
set -uo pipefail
plimsoll=${1:?usage: $0 PATH/TO/plimsoll}
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

package=@readme/oas-examples@8.2.2
sha256=df951ee87b5b069c86148bf5bbf3923d6cfd27fb95a45aacb95f06b31f604241

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The command line itself, on a document written here (before any fetch).
cat >"$work/mini.yaml" <<'YAML'
openapi: 3.0.3
info: {title: Mini, version: "1"}
servers: [{url: "https://mini.example"}]
paths:
  /things/{id}:
    get: {summary: One thing}
YAML
expect "a bad --methods is a usage error" 2 '--methods: "FETCH" is not a method' \
  -- "$plimsoll" specgen "$work/mini.yaml" --methods GET,FETCH
expect "a bad --base-url is a usage error" 2 'is not an http\(s\) origin' \
  -- "$plimsoll" specgen "$work/mini.yaml" --base-url ftp://mini.example
expect "--preamble-only and --no-preamble exclude each other" 2 'excludes' \
  -- "$plimsoll" specgen "$work/mini.yaml" --preamble-only --no-preamble
expect "a missing document" 1 'cannot read' -- "$plimsoll" specgen "$work/none.yaml"
expect "stdin, - as the document" 0 '^GET /things/\{id\} \(path: id\): One thing$' \
  -- bash -c '"$0" specgen - --preamble-only <"$1"' "$plimsoll" "$work/mini.yaml"

if ! command -v npm >/dev/null; then
  echo "FAIL: npm is needed to fetch $package (node's package manager)"
  exit 1
fi
# (npm's own cache serves it when it has it; the sha256 below is the check either way.)
if ! (cd "$work" && npm pack "$package" --loglevel=error --fetch-retries=1 --fetch-timeout=60000 \
        >"$work/npm.out" 2>"$work/npm.err"); then
  if grep -qE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network' \
       "$work/npm.err"; then
    echo "skipped: the npm registry cannot be reached to fetch $package ($(grep -m1 -oE 'code E[A-Z_]+' "$work/npm.err"))"
    exit 77
  fi
  echo "FAIL: npm pack $package:"
  sed 's/^/    /' "$work/npm.err"
  exit 1
fi
tarball=$(tail -n 1 "$work/npm.out")
if ! echo "$sha256  $work/$tarball" | sha256sum --check --status; then
  echo "FAIL: $tarball's sha256 is $(sha256sum "$work/$tarball" | cut -d' ' -f1), not the pinned $sha256"
  exit 1
fi
tar -xzf "$work/$tarball" -C "$work"
docs=$work/package

# run NAME -- command...: runs it, keeping stdout in $out, stderr in $err and the status in $status.
run() {
  local name=$1
  shift 2
  "$@" >"$work/$name.out" 2>"$work/$name.err"
  status=$?
  out=$(cat "$work/$name.out")
  err=$(cat "$work/$name.err")
}

# check NAME CONDITION-COMMAND...: one promise; prints the output on failure.
check() {
  local name=$1
  shift
  checks=$((checks + 1))
  if "$@"; then
    echo "ok   $name"
  else
    echo "FAIL $name; stdout:"
    sed 's/^/    /' <<<"$out"
    echo "  stderr:"
    sed 's/^/    /' <<<"$err"
    failures=$((failures + 1))
  fi
}
has_line() { grep -qFx -- "$1" <<<"$out"; }
err_has() { grep -qF -- "$1" <<<"$err"; }
count_lines() { [ "$(grep -cE -- "$1" <<<"$out")" -eq "$2" ]; }

# --- Train Travel API (OpenAPI 3.1, YAML) ---------------------------------------------------
run train -- "$plimsoll" specgen "$docs/3.1/yaml/train-travel.yaml"
check "train: exit 0, no warnings" test "$status" -eq 0 -a -z "$err"
check "train: 4 GET routes granted" count_lines '^      - "GET ' 4
check "train: nothing but GET" count_lines '^      - "' 4
check "train: profile named from the title" has_line '  "train-travel-api":'
check "train: base_url is the server's origin" has_line '    base_url: "https://api.example.com"'
check "train: the collection route" has_line '      - "GET /bookings"'
check "train: a per-item route becomes *" has_line '      - "GET /bookings/*"'
check "train: the batch_of pair" has_line '      "GET /bookings/*": "GET /bookings"'
check "train: allowed_callers to fill in" has_line '    allowed_callers: ["<fill in>"]'
check "train: profile, ---, preamble comments" has_line '---'
check "train: the preamble's trips line" has_line \
  '# GET /trips (query: origin required, destination required, date required, bicycles, dogs): Get available train trips'
check "train: the preamble's per-item line" has_line '# GET /bookings/{bookingId} (path: bookingId): Get a booking'
check "train: the preamble says no credential" grep -qF 'no credential is needed or available' <<<"$out"

run train_json -- "$plimsoll" specgen "$docs/3.1/yaml/train-travel.yaml" --json --no-preamble \
  --methods GET,POST,DELETE --profile trains
check "train --json: exit 0" test "$status" -eq 0
check "train --json: the grants file as JSON, methods widened" python3 -c '
import json, sys
profile = json.load(open(sys.argv[1]))["profiles"]["trains"]
assert profile["allow"] == ["GET /stations", "GET /trips", "GET /bookings", "POST /bookings",
                            "GET /bookings/*", "DELETE /bookings/*", "POST /bookings/*/payment"], profile
assert profile["batch_of"] == {"GET /bookings/*": "GET /bookings"}, profile
assert profile["base_url"] == "https://api.example.com"
' "$work/train_json.out"

run train_only -- "$plimsoll" specgen "$docs/3.1/yaml/train-travel.yaml" --only Stations \
  --only /trips --preamble-only
check "train --only a tag and a path, --preamble-only" test "$status" -eq 0 -a \
  "$(grep -c '^GET ' <<<"$out")" -eq 2
check "train --preamble-only is plain lines" has_line 'GET /stations: Get a list of train stations'

# --- Swagger Petstore (OpenAPI 3.0, JSON) --------------------------------------------------
run petstore -- "$plimsoll" specgen "$docs/3.0/json/petstore.json"
check "petstore: exit 0" test "$status" -eq 0
check "petstore: 8 GET routes under the server's path /v2" count_lines '^      - "GET /v2/' 8
check "petstore: exact entries" has_line '      - "GET /v2/pet/*"'
check "petstore: exact entries (2)" has_line '      - "GET /v2/store/order/*"'
check "petstore: no batch_of (no GET /pet)" test -z "$(grep batch_of <<<"$out")"
check "petstore: base_url" has_line '    base_url: "http://petstore.swagger.io"'
check "petstore: http is warned about" err_has 'is cleartext http'
check "petstore: preamble line" has_line \
  '# GET /v2/user/login (query: username required, password required): Logs user into the system'

# --- USPTO Data Set API (OpenAPI 3.0, JSON, templated server) ------------------------------
run uspto -- "$plimsoll" specgen "$docs/3.0/json/uspto.json"
check "uspto: exit 0" test "$status" -eq 0
check "uspto: base_url left to fill in" has_line '    base_url: "<fill in>"'
check "uspto: the templated server is warned about" err_has '"{scheme}://developer.uspto.gov/ds-api" gives no origin'
check "uspto: two templated segments" has_line '      - "GET /ds-api/*/*/fields"'
check "uspto: the root" has_line '      - "GET /ds-api/"'

# --- A Swagger 2.0 document is refused with a reason ---------------------------------------
run swagger -- "$plimsoll" specgen "$docs/2.0/json/petstore.json"
check "swagger 2.0: exit 1 with the reason" test "$status" -eq 1
check "swagger 2.0: says so" err_has 'is Swagger 2.0, not OpenAPI 3'

summarize
