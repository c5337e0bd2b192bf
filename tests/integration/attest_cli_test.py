#!/usr/bin/env python3
"""plimsoll-attest end to end (docs/attest.md) against a real plimsolld.

Starts the daemon (embedded provider, --dev, port 0), makes a key, signs two
runs and a three-cell session into one bundle, and checks that `verify`
finds it intact (also against the caller's own list of request digests and
a count); then that it refuses a copy with one byte changed, one with a line
dropped, one with a torn last line, and the intact bundle under another key,
each with a reason; that a bundle signed again by the openssl command line
verifies; that two `run` processes appending at once lose nothing; that `replay` sends the runs and the session again and
finds the same results (timing aside); and that `keygen` never overwrites.

Replay verifies before it sends (issue 39): a bundle with one byte of a stored request changed, or
two runs' requests swapped, is refused with nothing sent (the daemon's count of HTTP answers, read
on its metrics listener, stays the same); so is the intact bundle under another key; a signed run
that names a grant profile is refused without --allow-granted (neither the daemon nor the
operator's upstream hears of it) and replayed with it.

    attest_cli_test.py PLIMSOLL_ATTEST PLIMSOLLD
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plimsolld  # noqa: E402
from inventory_upstream import InventoryUpstream, grants_file  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "records"))
import digest  # noqa: E402  (the independent Python implementation of the record digests)


def attest(binary, *arguments):
    return subprocess.run([binary, *arguments], capture_output=True, text=True, timeout=120)


def raw_lines(path):
    with open(path, "rb") as handle:
        return handle.read().splitlines()


def pae(payload_type, payload):
    """DSSE v1's pre-authentication encoding, written from the spec (not from our C++)."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def resign_with_openssl(lines, work):
    """Every line's statement signed again with openssl: the previous-line links change with the
    lines, so each statement's "bundle" link is rewritten to the new previous line first."""
    key = os.path.join(work, "openssl.pem")
    pub = os.path.join(work, "openssl.pub")
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", key], check=True)
    subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True)
    der = subprocess.run(["openssl", "pkey", "-pubin", "-in", pub, "-outform", "DER"],
                         check=True, capture_output=True).stdout
    keyid = hashlib.sha256(der).hexdigest()
    out = []
    for index, line in enumerate(lines):
        entry = json.loads(line)
        envelope = entry["envelope"]
        statement = json.loads(base64.b64decode(envelope["payload"]))
        statement["predicate"]["bundle"] = {
            "index": index,
            "previous_line_sha256": hashlib.sha256(out[-1]).hexdigest() if out else ""}
        payload = json.dumps(statement, separators=(",", ":"), ensure_ascii=False).encode()
        message = os.path.join(work, "pae.bin")
        with open(message, "wb") as handle:
            handle.write(pae(envelope["payloadType"], payload))
        signature = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin",
                                    "-in", message], check=True, capture_output=True).stdout
        entry["envelope"] = {"payload": base64.b64encode(payload).decode(),
                             "payloadType": envelope["payloadType"],
                             "signatures": [{"keyid": keyid,
                                             "sig": base64.b64encode(signature).decode()}]}
        out.append(json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode())
    return out, pub


def answers(daemon):
    """Every HTTP answer the daemon's API listener has given (plimsoll_http_answers_total): what
    a client sent and the daemon heard, whatever it was."""
    with urllib.request.urlopen(f"http://127.0.0.1:{daemon.metrics_port}/metrics",
                                timeout=30) as page:
        text = page.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("plimsoll_http_answers_total{"))


def swap_requests(raw):
    """The first two lines' stored requests swapped, bytes otherwise as they were."""
    lines = raw.splitlines(keepends=True)

    def request_of(line):
        begin, end = line.index(b'"request":'), line.index(b',"result":')
        return line[begin:end]

    first, second = request_of(lines[0]), request_of(lines[1])
    lines[0] = lines[0].replace(first, second, 1)
    lines[1] = lines[1].replace(second, first, 1)
    return b"".join(lines)


def main():
    binary, daemon_binary = sys.argv[1], sys.argv[2]
    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    with tempfile.TemporaryDirectory() as work, InventoryUpstream() as upstream, \
            plimsolld.Daemon(daemon_binary, ["--provider", "embedded", "--dev",
                                             "--grants", grants_file(work, upstream.origin)],
                             env={"PATH": os.environ.get("PATH", ""),
                                  "PLIMSOLL_TEST_INVENTORY_TOKEN": "sk-attest-test"},
                             metrics=True) as daemon:
        url = f"http://127.0.0.1:{daemon.port}"
        key, other, bundle = (os.path.join(work, name) for name in ("key.pem", "other.pem", "b.jsonl"))
        for path in (key, other):
            made = attest(binary, "keygen", "--out", path)
            check(made.returncode == 0, f"keygen: {made.stderr}")
        again = attest(binary, "keygen", "--out", key)
        check(again.returncode != 0, "keygen overwrote a key")
        pub = os.path.join(work, "key.pub")
        with open(pub, "w") as out:
            out.write(attest(binary, "pubkey", key).stdout)
        other_pub = os.path.join(work, "other.pub")
        with open(other_pub, "w") as out:
            out.write(attest(binary, "pubkey", other).stdout)

        request = os.path.join(work, "request.json")
        with open(request, "w") as out:
            json.dump({"protocol": 1, "javascript": {"code": "console.log(6*7)"}}, out)
        for arguments in (["run", request], ["run", "-e", "console.log('two')"],
                          ["session", "-e", "var n = 1", "-e", "n += 1", "-e", "n"]):
            signed = attest(binary, arguments[0], "--daemon", url, "--key", key, "--bundle", bundle,
                            *arguments[1:])
            check(signed.returncode == 0, f"{arguments}: {signed.stderr}")
        check(oct(os.stat(bundle).st_mode & 0o777) == "0o600", "the bundle is not 0600")

        intact = attest(binary, "verify", "--bundle", bundle, "--pubkey", pub)
        check(intact.returncode == 0 and "bundle intact: 6 lines, 2 runs, 3 session calls, 1 sessions closed"
              in intact.stdout, f"verify: {intact.stdout}{intact.stderr}")
        # The caller's own request digests, computed independently (tests/records/digest.py).
        with open(bundle) as lines:
            entries = [json.loads(line) for line in lines]
        expected = os.path.join(work, "expected.txt")
        with open(expected, "w") as out:
            for entry in entries:
                if "request" in entry:
                    out.write(digest.request_digest(entry["request"]) + "\n")
        listed = attest(binary, "verify", "--bundle", bundle, "--pubkey", pub, "--expect", expected)
        check(listed.returncode == 0, f"verify --expect: {listed.stdout}")
        counted = attest(binary, "verify", "--bundle", bundle, "--pubkey", pub, "--expect-count", "4")
        check(counted.returncode == 1 and "not the 4 expected" in counted.stdout,
              f"--expect-count 4: {counted.stdout}")
        # Each statement's subject is its record: recompute one in Python.
        first = entries[0]
        check(digest.request_digest(first["request"]) == first["result"]["record"]["request_sha256"],
              "the stored request does not give the record's request digest in Python")

        with open(bundle, "rb") as handle:
            raw = handle.read()
        cases = {
            "one byte changed": raw.replace(b"console.log(6*7)", b"console.log(6*8)", 1),
            "a line dropped": b"".join(raw.splitlines(keepends=True)[:1] + raw.splitlines(keepends=True)[2:]),
            "a torn last line": raw[:-20],
        }
        for name, content in cases.items():
            path = os.path.join(work, name.replace(" ", "_") + ".jsonl")
            with open(path, "wb") as out:
                out.write(content)
            verdict = attest(binary, "verify", "--bundle", path, "--pubkey", pub)
            check(verdict.returncode == 1 and "bundle NOT intact" in verdict.stdout,
                  f"{name}: {verdict.stdout}")
            print(f"[ report   ] {name}: {verdict.stdout.splitlines()[0] if verdict.stdout else ''}")
        # The same bundle signed again by an independent implementation (the openssl command line
        # over DSSE's PAE, a key openssl made): plimsoll-attest verifies it with openssl's key.
        resigned, openssl_pub = resign_with_openssl(raw_lines(bundle), work)
        resigned_path = os.path.join(work, "resigned.jsonl")
        with open(resigned_path, "wb") as out:
            out.write(b"".join(line + b"\n" for line in resigned))
        foreign = attest(binary, "verify", "--bundle", resigned_path, "--pubkey", openssl_pub)
        check(foreign.returncode == 0 and "bundle intact: 6 lines" in foreign.stdout,
              f"a bundle signed by openssl: {foreign.stdout}{foreign.stderr}")
        # Two `run` processes appending to one bundle at once: nothing lost, every link holds.
        shared = os.path.join(work, "shared.jsonl")
        writers = [subprocess.Popen(
            ["sh", "-c", " && ".join(
                f"{binary} run --daemon {url} --key {key} --bundle {shared} -e 'console.log({w}{i})'"
                for i in range(8))], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for w in (1, 2)]
        for writer in writers:
            _, errors = writer.communicate(timeout=120)
            check(writer.returncode == 0, f"a concurrent writer failed: {errors}")
        both = attest(binary, "verify", "--bundle", shared, "--pubkey", pub, "--expect-count", "16")
        check(both.returncode == 0 and "bundle intact: 16 lines, 16 runs" in both.stdout,
              f"two writers: {both.stdout}")
        print(f"[ report   ] two writers: {both.stdout.strip()}")
        # Replay verifies first: an edited bundle, or the intact one under another key, sends nothing.
        edited = {"one byte changed": cases["one byte changed"],
                  "a request swapped": swap_requests(raw), "another key": raw}
        for name, content in edited.items():
            path = os.path.join(work, "replay_" + name.replace(" ", "_") + ".jsonl")
            with open(path, "wb") as out:
                out.write(content)
            before = answers(daemon)
            refused = attest(binary, "replay", "--daemon", url, "--bundle", path, "--pubkey",
                             other_pub if name == "another key" else pub)
            check(refused.returncode == 1 and "nothing replayed" in refused.stdout
                  and refused.stdout.startswith("line "),
                  f"replay of {name}: {refused.returncode} {refused.stdout}{refused.stderr}")
            check(answers(daemon) == before,
                  f"replay of {name} sent something: {before} answers before, {answers(daemon)} after")
            print(f"[ report   ] replay, {name}: {refused.stdout.splitlines()[-1] if refused.stdout else refused.stderr}")
        # A signed run that names a grant profile: refused without --allow-granted, before anything
        # reaches the daemon or the operator's API; replayed with it.
        granted_request = os.path.join(work, "granted.json")
        with open(granted_request, "w") as out:
            json.dump({"protocol": 1, "grant_profile": "inventory",
                       "javascript": {"code": "console.log(host.get('/items').status)"}}, out)
        granted = os.path.join(work, "granted.jsonl")
        signed = attest(binary, "run", "--daemon", url, "--key", key, "--bundle", granted,
                        granted_request)
        check(signed.returncode == 0 and upstream.calls == 1,
              f"the granted run: {signed.stdout}{signed.stderr} ({upstream.calls} upstream calls)")
        before, calls = answers(daemon), upstream.calls
        refused = attest(binary, "replay", "--daemon", url, "--bundle", granted, "--pubkey", pub)
        check(refused.returncode == 1 and 'line 0: names the grant profile "inventory"' in refused.stdout
              and "--allow-granted" in refused.stdout,
              f"replay of a granted run: {refused.returncode} {refused.stdout}{refused.stderr}")
        check(answers(daemon) == before and upstream.calls == calls,
              f"a refused granted replay sent something: answers {before} -> {answers(daemon)}, "
              f"upstream calls {calls} -> {upstream.calls}")
        allowed = attest(binary, "replay", "--daemon", url, "--bundle", granted, "--pubkey", pub,
                         "--allow-granted")
        check(allowed.returncode == 0 and "replayed 1 lines: 0 differing or failed" in allowed.stdout
              and upstream.calls == calls + 1,
              f"replay --allow-granted: {allowed.stdout}{allowed.stderr} ({upstream.calls} calls)")
        print(f"[ report   ] replay, granted: {refused.stdout.splitlines()[0] if refused.stdout else ''}")
        # The intact bundle replays as before.
        replayed = attest(binary, "replay", "--daemon", url, "--bundle", bundle, "--pubkey", pub)
        check(replayed.returncode == 0 and "replayed 6 lines: 0 differing or failed" in replayed.stdout,
              f"replay: {replayed.stdout}{replayed.stderr}")
        check("session closed again" in replayed.stdout, f"replay closes the session: {replayed.stdout}")
        print(f"[ report   ] replay: {replayed.stdout.splitlines()[0] if replayed.stdout else ''}")
        wrong = attest(binary, "verify", "--bundle", bundle, "--pubkey", other_pub)
        check(wrong.returncode == 1 and "has no signature by key" in wrong.stdout,
              f"another key: {wrong.stdout}")
        print(f"[ report   ] {intact.stdout.strip()}; bundle sha256 {hashlib.sha256(raw).hexdigest()[:16]}")

    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
