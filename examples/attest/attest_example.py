#!/usr/bin/env python3
"""The attest example (docs/attest.md, "The example"; `make attest-example`): a signed session
bundle and what `plimsoll-attest verify` says about it intact, with a call dropped, and with one
byte changed.

Starts plimsolld (embedded provider, --dev, loopback port 0), makes an Ed25519 key, runs a
five-cell JavaScript session through `plimsoll-attest session` (each cell builds on what the ones
before it left, so the kept state is visible), then writes three bundles: the intact one, one with
a call's line removed, one with a single byte of a call's stdout changed. It runs `plimsoll-attest
verify` on each, keeps its whole output, and writes OUT/index.html: one self-contained page (no
network; a Content-Security-Policy as the oracle's) with the session's chain, the three verdicts
side by side in verify's own words, and what a signature does and does not prove. Beside the page:
the three bundles, the public key and each verdict's output, so anyone can run verify again.

    attest_example.py --plimsoll-attest BIN --plimsolld BIN [--out build/attest-example]

Exit 0 only when the intact bundle verifies and both altered ones are refused for the expected
reasons; 1 otherwise (the page is still written, showing what verify said).
"""
import argparse
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from exams_common import REPO, Daemon, embed, write_text  # noqa: E402

TOOL = "attest_example"

# Five cells, each using what the ones before left in the session's interpreter.
CELLS = [
    "let total = 0; const seen = [];",
    "function add(n) { total += n; seen.push(n); return total; }",
    'add(20); add(22); console.log("total", total);',
    'seen.push(total * 2); console.log(JSON.stringify(seen));',
    "seen.reduce((sum, n) => sum + n, 0)",
]
DROPPED_INDEX = 3                               # the line removed: the fourth call
CHANGED_INDEX = 2                               # the line whose stdout loses a byte: the third call
CHANGED_FROM, CHANGED_TO = '"stdout":"total 42', '"stdout":"total 43'

# What verify must say (docs/attest.md, "What verify checks"): the exit status and, for the
# altered bundles, a phrase of the reason on the line that was altered.
EXPECTED = {
    "intact": (0, None, "bundle intact: 6 lines, 0 runs, 5 session calls, 1 sessions closed"),
    "dropped": (1, DROPPED_INDEX, f"its index says {DROPPED_INDEX + 1}: a line was dropped"),
    "changed": (1, CHANGED_INDEX, "result_sha256 differs from the digest of the result received"),
}
PROVES_HEADING = "## What a signature proves, and what it does not"


def attest(binary, *arguments):
    return subprocess.run([binary, *arguments], capture_output=True, text=True, timeout=60)


def must(done, what):
    if done.returncode != 0:
        raise SystemExit(f"{TOOL}: {what} exited {done.returncode}: {done.stdout}{done.stderr}")
    return done


def sign_session(binary, url, key, bundle):
    must(attest(binary, "keygen", "--out", key), "plimsoll-attest keygen")
    cells = [argument for cell in CELLS for argument in ("-e", cell)]
    done = must(attest(binary, "session", "--daemon", url, "--key", key, "--bundle", bundle, *cells),
                "plimsoll-attest session")
    return done.stdout.strip()


def altered_bundles(raw):
    """The two altered copies of the intact bundle's bytes, and what was done to each."""
    lines = raw.splitlines(keepends=True)
    dropped = b"".join(lines[:DROPPED_INDEX] + lines[DROPPED_INDEX + 1:])
    line = lines[CHANGED_INDEX].decode("utf-8")
    if line.count(CHANGED_FROM) != 1:
        raise SystemExit(f"{TOOL}: line {CHANGED_INDEX} does not hold {CHANGED_FROM!r} once: {line[:400]}")
    at = line.index(CHANGED_FROM) + len(CHANGED_FROM) - 1
    changed_line = line[:at] + CHANGED_TO[-1] + line[at + 1:]
    changed = b"".join(lines[:CHANGED_INDEX] + [changed_line.encode("utf-8")] + lines[CHANGED_INDEX + 1:])
    differing = [i for i in range(len(raw)) if raw[i] != changed[i]]
    if len(changed) != len(raw) or len(differing) != 1:
        raise SystemExit(f"{TOOL}: the changed bundle differs in {len(differing)} bytes, not one")
    offset = differing[0]
    return {
        "dropped": (dropped, {"line": DROPPED_INDEX, "bytes_removed": len(lines[DROPPED_INDEX]),
                              "what": f"line {DROPPED_INDEX} (the session's call "
                                      f"{DROPPED_INDEX + 1}) removed, every other byte kept"}),
        "changed": (changed, {"line": CHANGED_INDEX, "offset": offset, "line_offset": at,
                              "before": chr(raw[offset]), "after": chr(changed[offset]),
                              "what": f"one byte of line {CHANGED_INDEX} (call {CHANGED_INDEX + 1}'s "
                                      f"stdout, byte {offset} of the file): "
                                      f"'{chr(raw[offset])}' became '{chr(changed[offset])}'"}),
    }


def statement_of(entry):
    """The in-toto statement the entry's DSSE envelope signs (its payload, decoded)."""
    return json.loads(base64.b64decode(entry["envelope"]["payload"]))


def chain_rows(raw):
    """One row per bundle line: what the page's chain table shows, with the line's own bytes
    without its newline (what the next line's signed link hashes; the page recomputes it)."""
    rows = []
    for line in raw.splitlines(keepends=True):
        entry = json.loads(line)
        statement = statement_of(entry)
        predicate = statement["predicate"]
        row = {"index": entry["index"], "kind": entry["kind"], "session_id": entry["session_id"],
               "subject": statement["subject"][0],
               "bundle_link": predicate["bundle"],
               "keyids": [s["keyid"] for s in entry["envelope"]["signatures"]],
               "line": line.rstrip(b"\n").decode("utf-8")}
        if entry["kind"] == "session_call":
            result, record = entry["result"], entry["result"]["record"]
            row.update({"record_sha256": record["record_sha256"], "sequence": record["sequence"],
                        "previous_sha256": record["previous_sha256"],
                        "request_sha256": record["request_sha256"],
                        "result_sha256": record["result_sha256"],
                        "code": entry["request"]["cell"]["code"],
                        "stdout": result.get("stdout", ""), "stderr": result.get("stderr", ""),
                        "value": result.get("value"), "exit_code": result["exit_code"],
                        "tier": f"{result['isolation']} ({result['provider']})"})
        else:
            row.update({"close": entry["close"]})
        rows.append(row)
    return rows


def judge(name, done):
    """Problems with one verdict against EXPECTED (none when verify said what it should)."""
    status, line, phrase = EXPECTED[name]
    lines = done.stdout.splitlines()
    problems = []
    if done.returncode != status:
        problems.append(f"{name}: verify exited {done.returncode}, not {status}")
    if line is None:
        if phrase not in lines:
            problems.append(f"{name}: verify did not say {phrase!r}")
    else:
        if not any(l.startswith(f"line {line}: ") and phrase in l for l in lines):
            problems.append(f"{name}: verify did not refuse line {line} with {phrase!r}")
        if not (lines and lines[-1].startswith("bundle NOT intact")):
            problems.append(f"{name}: verify's last line is not \"bundle NOT intact: …\"")
    return problems


def signature_section():
    """docs/attest.md's paragraph on what a signature proves (the page quotes it whole)."""
    with open(os.path.join(REPO, "docs", "attest.md"), encoding="utf-8") as f:
        text = f.read()
    if PROVES_HEADING not in text:
        raise SystemExit(f"{TOOL}: docs/attest.md has no {PROVES_HEADING!r}")
    section = text.split(PROVES_HEADING, 1)[1].split("\n## ", 1)[0]
    return " ".join(section.split())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plimsoll-attest", required=True, help="the plimsoll-attest binary")
    parser.add_argument("--plimsolld", required=True, help="the plimsolld binary (started here)")
    parser.add_argument("--out", default=os.path.join(REPO, "build", "attest-example"))
    options = parser.parse_args()
    binary = os.path.abspath(options.plimsoll_attest)
    out = os.path.abspath(options.out)
    bundles = os.path.join(out, "bundles")
    os.makedirs(bundles, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="attest-example-") as secret:
        # The private key stays in a directory of its own and is gone at the end; the page's
        # directory gets the public key only.
        key, intact_path = os.path.join(secret, "key.pem"), os.path.join(secret, "intact.jsonl")
        with Daemon(options.plimsolld, "embedded", None, TOOL) as url:
            signed = sign_session(binary, url, key, intact_path)
        public = must(attest(binary, "pubkey", key), "plimsoll-attest pubkey").stdout
        with open(intact_path, "rb") as f:
            raw = f.read()

    write_text(os.path.join(out, "key.pub"), public)
    variants = {"intact": (raw, {"what": "the bundle as plimsoll-attest session wrote it"})}
    variants.update(altered_bundles(raw))
    verdicts, problems = [], []
    for name, (content, change) in variants.items():
        path = os.path.join(bundles, f"{name}.jsonl")
        with open(path, "wb") as f:
            f.write(content)
        arguments = ["verify", "--bundle", f"bundles/{name}.jsonl", "--pubkey", "key.pub"]
        done = subprocess.run([binary, *arguments], capture_output=True, text=True, timeout=60,
                              cwd=out)
        write_text(os.path.join(out, f"verify-{name}.txt"), done.stdout + done.stderr)
        problems += judge(name, done)
        verdicts.append({"name": name, "change": change, "exit_code": done.returncode,
                         "stdout": done.stdout, "stderr": done.stderr,
                         "command": "plimsoll-attest " + " ".join(arguments),
                         "bundle_sha256": hashlib.sha256(content).hexdigest(),
                         "lines": len(content.splitlines())})

    rows = chain_rows(raw)
    keyid = rows[0]["keyids"][0]
    with open(os.path.join(HERE, "index.html.in"), encoding="utf-8") as f:
        template = f.read()
    data = {"cells": CELLS, "chain": rows, "verdicts": verdicts, "keyid": keyid,
            "public_key": public, "signed": signed, "signature": signature_section(),
            "expected": {name: {"exit_code": e[0], "line": e[1], "phrase": e[2]}
                         for name, e in EXPECTED.items()},
            "problems": problems}
    page = os.path.join(out, "index.html")
    write_text(page, embed(template, "/*ATTEST_DATA*/null", data))
    write_text(os.path.join(out, "attest-example.json"),
               json.dumps({k: v for k, v in data.items() if k != "chain"}, indent=2, sort_keys=True) + "\n")

    print(signed)
    for verdict in verdicts:
        first = verdict["stdout"].splitlines()[0] if verdict["stdout"] else ""
        last = verdict["stdout"].splitlines()[-1] if verdict["stdout"] else ""
        print(f"{verdict['name']:8} verify exited {verdict['exit_code']}: {last}"
              + (f" (first: {first})" if first != last else ""))
    print(f"page: {page}")
    for problem in problems:
        print(f"{TOOL}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
