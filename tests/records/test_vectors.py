"""Recomputes every shared record vector with the independent Python digest.

Run: python3 -m unittest discover -s tests/records
"""

import base64
import copy
import json
import math
import pathlib
import unittest

import digest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = ROOT / "testdata" / "records" / "vectors.json"

# Leaves the digests deliberately do not cover (docs/run-records.md), and the
# record's own output.
NOT_COVERED = {
    ("request", "trace_id"),
    ("request", "environment"),
    ("result", "record", "record_sha256"),
}
SPECIAL_FLOATS = {"NaN", "Infinity", "-Infinity"}


def load():
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)


def recompute(vector: dict) -> dict:
    """Every digest a vector's inputs give."""
    out = {}
    if "request" in vector:
        out["request_sha256"] = digest.request_digest(vector["request"])
    if "result" in vector:
        result = vector["result"]
        out["result_sha256"] = digest.result_digest(result)
        out["record_sha256"] = digest.record_digest(result["record"])
    if "limits" in vector:
        out["policy_sha256"] = digest.policy_digest(vector["limits"])
    if "session_id" in vector:
        out["session_sha256"] = digest.session_id_digest(vector["session_id"])
    if "encoding" in vector:
        out["encoding_sha256"], _ = digest.encoding_digest(vector["encoding"])
    return out


def leaves(node, path=()):
    """(path, value) for every scalar leaf under node."""
    if isinstance(node, dict):
        for key, child in node.items():
            yield from leaves(child, path + (key,))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from leaves(child, path + (index,))
    else:
        yield path, node


def mutate(path, leaf, last=False):
    """The smallest change of a leaf: one byte (the first, or with last=True
    the last, of text and bytes), one unit, one flag."""
    if isinstance(leaf, bool):
        return not leaf
    if isinstance(leaf, int):
        return leaf + 1
    if isinstance(leaf, float):
        return 1.0 if (math.isnan(leaf) or math.isinf(leaf)) else leaf + 1.0
    if leaf is None:
        raise AssertionError(f"unexpected null at {path}")
    if path[-1] in ("added_latency_ms", "value") and leaf in SPECIAL_FLOATS:
        return 1.5
    if path[-1] == "base64":
        raw = bytearray(base64.b64decode(leaf))
        raw[-1 if last else 0] ^= 1
        return base64.b64encode(bytes(raw)).decode("ascii")
    if not leaf:
        return "x"
    if last:
        return leaf[:-1] + chr(ord(leaf[-1]) ^ 1)
    return chr(ord(leaf[0]) ^ 1) + leaf[1:]


def objects(node, path=()):
    """(path, dict) for every JSON object under node, node included."""
    if isinstance(node, dict):
        yield path, node
        for key, child in node.items():
            yield from objects(child, path + (key,))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from objects(child, path + (index,))


def set_path(node, path, new):
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new


def delete_path(node, path):
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]


class VectorFileTest(unittest.TestCase):
    def setUp(self):
        self.file = load()
        self.vectors = self.file["vectors"]

    def test_format_and_coverage(self):
        self.assertEqual(self.file["format"], "plimsoll.record-vectors.v1")
        self.assertGreaterEqual(len(self.vectors), 15)
        names = [v["name"] for v in self.vectors]
        self.assertEqual(len(names), len(set(names)), "vector names repeat")
        kinds = {k for v in self.vectors if "request" in v for k in digest.PAYLOAD_ORDER if k in v["request"]}
        # Every payload kind but `module`: the Python, TypeScript and Go clients read this file and do
        # not speak module payloads yet (docs/run-records.md); a module vector comes with them.
        self.assertEqual(kinds, set(digest.PAYLOAD_ORDER) - {"module"})
        with_session = [v for v in self.vectors if "session" in v.get("result", {}).get("record", {})]
        without = [v for v in self.vectors if "result" in v and "session" not in v["result"]["record"]]
        self.assertGreaterEqual(len(with_session), 3)
        self.assertTrue(without)
        self.assertTrue(any(isinstance(v.get("result", {}).get("stdout"), dict) for v in self.vectors),
                        "no vector has non-UTF-8 output")
        floats = [a["added_latency_ms"] for v in self.vectors for a in v.get("result", {}).get("advice", [])]
        self.assertTrue(SPECIAL_FLOATS <= set(x for x in floats if isinstance(x, str)))
        self.assertTrue(any(isinstance(x, float) and x == 0 and math.copysign(1, x) < 0 for x in floats))

    def test_a_module_payload_is_covered_field_by_field(self):
        base = {"protocol": 1, "module": {"model": "cartpole", "rows": [[0, 0, 0.05, 0], []],
                                          "end_time": 5, "step": 0.01}}
        seen = {digest.request_digest(base)}
        for change in (lambda m: m.update(model="shower"),
                       lambda m: m["rows"][0].__setitem__(0, -0.0),
                       lambda m: m["rows"][0].append(1),
                       lambda m: m["rows"].append([]),
                       lambda m: m["rows"].pop(),
                       lambda m: m.update(end_time=6),
                       lambda m: m.update(step=0.02)):
            changed = copy.deepcopy(base)
            change(changed["module"])
            self.assertNotIn(digest.request_digest(changed), seen)
            seen.add(digest.request_digest(changed))
        # Moving a value between rows changes it too (rows are counted).
        a = copy.deepcopy(base)
        a["module"]["rows"] = [[1, 2], [3]]
        b = copy.deepcopy(base)
        b["module"]["rows"] = [[1], [2, 3]]
        self.assertNotEqual(digest.request_digest(a), digest.request_digest(b))

    def test_every_digest_recomputes(self):
        for vector in self.vectors:
            with self.subTest(vector=vector["name"]):
                got = recompute(vector)
                self.assertTrue(got)
                for key, value in got.items():
                    self.assertEqual(value, vector[key], key)

    def test_records_bind_their_exchange(self):
        for vector in self.vectors:
            if "result" not in vector:
                continue
            with self.subTest(vector=vector["name"]):
                result, record = vector["result"], vector["result"]["record"]
                self.assertEqual(record["version"], 1)
                self.assertEqual(record["record_sha256"], vector["record_sha256"])
                self.assertEqual(record["result_sha256"], vector["result_sha256"])
                if "request" in vector:
                    self.assertEqual(record["request_sha256"], vector["request_sha256"])
                for name in ("provider", "isolation", "environment"):
                    self.assertEqual(record[name], result[name], name)
                self.assertLessEqual(record["started_unix_ms"], record["ended_unix_ms"])

    def test_encoding_transcripts(self):
        for vector in self.vectors:
            if "encoding" in vector:
                with self.subTest(vector=vector["name"]):
                    sha, transcript = digest.encoding_digest(vector["encoding"])
                    self.assertEqual(transcript.hex(), vector["encoding_hex"])
                    self.assertEqual(sha, vector["encoding_sha256"])

    def test_session_chains(self):
        by_name = {v["name"]: v for v in self.vectors}
        self.assertTrue(self.file["chains"])
        for chain in self.file["chains"]:
            session = digest.session_id_digest(chain["session_id"])
            previous = ""
            for sequence, name in enumerate(chain["vectors"], start=1):
                with self.subTest(chain=chain["name"], call=name):
                    record = by_name[name]["result"]["record"]
                    self.assertEqual(record["session"], session)
                    self.assertEqual(record["sequence"], sequence)
                    self.assertEqual(record["previous_sha256"], previous)
                    self.assertEqual(digest.record_digest(record), record["record_sha256"])
                    previous = record["record_sha256"]


class MutationTest(unittest.TestCase):
    """Changing one byte of any vector input makes the digests disagree."""

    def test_every_covered_leaf_changes_a_digest(self):
        mutations = 0
        for vector in load()["vectors"]:
            expected = recompute(vector)
            inputs = {k: vector[k] for k in ("request", "result", "limits", "session_id", "encoding") if k in vector}
            for path, leaf in leaves(inputs):
                if path[0] == "encoding" and path[-1] == "type":
                    continue  # a type tag, not an input
                # Text and bytes change at both ends: a digest that read only
                # a prefix (or dropped a trailing byte) must not pass.
                for last in (False, True) if isinstance(leaf, str) else (False,):
                    changed = copy.deepcopy(vector)
                    if path == ("session_id",):
                        changed["session_id"] = mutate(path, leaf, last)
                    else:
                        set_path(changed, path, mutate(path, leaf, last))
                    with self.subTest(vector=vector["name"], leaf="/".join(map(str, path)), last=last):
                        if path in NOT_COVERED:
                            self.assertEqual(recompute(changed), expected, "documented as not covered")
                        else:
                            self.assertNotEqual(recompute(changed), expected)
                            mutations += 1
        self.assertGreater(mutations, 600)

    def test_an_unknown_key_anywhere_is_refused(self):
        # A field the digest does not know would be left out of it silently
        # (a misspelt "minimum_isolaton" would drop a floor from the digest).
        checked = 0
        for vector in load()["vectors"]:
            inputs = {k: vector[k] for k in ("request", "result", "encoding") if k in vector}
            for path, obj in list(objects(inputs)):
                if not path or path[-1] in ("content", "code", "stdout", "stderr"):
                    continue  # {"base64": ...} byte fields: checked by wire_bytes
                changed = copy.deepcopy(vector)
                target = vector_at(changed, path)
                target["unknown_field"] = 1
                with self.subTest(vector=vector["name"], at="/".join(map(str, path))):
                    with self.assertRaises((ValueError, TypeError)):
                        recompute(changed)
                    checked += 1
        self.assertGreater(checked, 50)

    def test_dropping_optional_fields_and_list_entries_changes_a_digest(self):
        optional = {"outcome", "broker", "session", "minimum_isolation", "timeout_ms", "grant_profile",
                    "displays", "displays_truncated", "routes", "routes_dropped"}
        checked = 0
        for vector in load()["vectors"]:
            expected = recompute(vector)
            for path, _ in list(leaves({k: vector[k] for k in ("request", "result") if k in vector})):
                for cut in range(1, len(path) + 1):
                    prefix = path[:cut]
                    key = prefix[-1]
                    if isinstance(key, int) or key in optional:
                        changed = copy.deepcopy(vector)
                        if key == "session":  # the session trio goes together
                            for name in digest.SESSION_FIELDS:
                                delete_path(changed, prefix[:-1] + (name,))
                        else:
                            delete_path(changed, prefix)
                        # A dropped optional whose value equals its default is the same request.
                        if key in ("minimum_isolation", "grant_profile") and vector_at(vector, prefix) == "":
                            continue
                        if key in ("timeout_ms", "routes_dropped") and vector_at(vector, prefix) == 0:
                            continue
                        if key == "routes" and vector_at(vector, prefix) == []:
                            continue
                        with self.subTest(vector=vector["name"], drop="/".join(map(str, prefix))):
                            self.assertNotEqual(recompute(changed), expected)
                            checked += 1
        self.assertGreater(checked, 50)

    def test_absent_and_empty_differ(self):
        base = {"protocol": 1, "javascript": {"code": ""}}
        both = dict(base, python={"code": ""})
        self.assertNotEqual(digest.request_digest(base), digest.request_digest(both))
        self.assertEqual(digest.request_digest(base), digest.request_digest(dict(base, minimum_isolation=None)))

    def test_nan_is_normalised_and_signed_zero_is_not(self):
        self.assertEqual(digest.encode_float(float("nan")), digest.encode_float(-float("nan")))
        self.assertEqual(digest.encode_float(float("nan")).hex(), "7ff8000000000000")
        self.assertEqual(digest.encode_float(-0.0).hex(), "8000000000000000")
        self.assertEqual(digest.encode_float(1.5).hex(), "3ff8000000000000")


class DisplaysTest(unittest.TestCase):
    """Rows 18 and 19 (docs/run-records.md §3.2): rich outputs, last and only
    when there is something to say."""

    PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452")

    def setUp(self):
        plain = [v for v in load()["vectors"] if "result" in v and "displays" not in v["result"]
                 and "displays_truncated" not in v["result"]]
        self.assertTrue(plain)
        self.vector = plain[0]
        self.result = {k: v for k, v in self.vector["result"].items() if k != "record"}
        self.figure = {"mime": "image/png", "data": {"base64": base64.b64encode(self.PNG).decode()},
                       "width": 640, "height": 480}

    def digest(self, **extra):
        return digest.result_digest(dict(self.result, **extra))

    def test_absent_empty_and_false_keep_the_digest(self):
        plain = self.vector["result_sha256"]
        self.assertEqual(self.digest(), plain)
        self.assertEqual(self.digest(displays=[]), plain)
        self.assertEqual(self.digest(displays_truncated=False), plain)
        self.assertEqual(self.digest(displays=[], displays_truncated=False), plain)

    def test_displays_and_truncated_change_it(self):
        plain = self.vector["result_sha256"]
        got = {self.digest(displays=[self.figure]), self.digest(displays_truncated=True),
               self.digest(displays=[self.figure], displays_truncated=True), plain}
        self.assertEqual(len(got), 4)

    def test_transcript_tail(self):
        """Two displays and the flag are hashed after advice, in the documented order."""
        tail = digest.Digest("")
        for name, content in (("displays", b"2"), ("display.mime", b"image/png"),
                              ("display.data", self.PNG), ("display.width", b"640"),
                              ("display.height", b"480"), ("display.mime", b"text/plain"),
                              ("display.data", b"x"), ("display.width", b"0"),
                              ("display.height", b"0"), ("displays_truncated", b"true")):
            tail.field(name, content)
        expected_tail = bytes(tail.transcript)[len(digest.value(b"")):]  # without its domain
        text = {"mime": "text/plain", "data": "x"}
        transcript = _result_transcript(dict(self.result, displays=[self.figure, text],
                                             displays_truncated=True))
        self.assertEqual(transcript, _result_transcript(self.result) + expected_tail)

    def test_an_absent_size_is_zero(self):
        text = {"mime": "text/plain", "data": "x"}
        absent = self.digest(displays=[text])
        self.assertEqual(absent, self.digest(displays=[dict(text, width=0, height=0)]))
        self.assertNotEqual(absent, self.digest(displays=[dict(text, width=1)]))

    def test_malformed_displays_are_refused(self):
        for change in ({"displays": {"mime": "image/png"}},
                       {"displays": [dict(self.figure, extra=1)]},
                       {"displays": [{"data": ""}]}, {"displays": [{"mime": "x"}]},
                       {"displays": [dict(self.figure, width="640")]},
                       {"displays": [dict(self.figure, data={"base64": "x", "y": 1})]},
                       {"displays_truncated": "true"}, {"displays_truncated": None}):
            with self.subTest(change=change):
                with self.assertRaises((ValueError, TypeError, KeyError)):
                    self.digest(**change)


class BrokerRoutesTest(unittest.TestCase):
    """Row 16 (docs/run-records.md §3.2): the broker summary's call trace rows
    and how many were dropped, after profile, calls and denied."""

    ROWS = [{"method": "GET", "route": "/items/*", "status": 200, "allowed": True, "reason": "", "count": 12},
            {"method": "OTHER", "route": "", "status": 0, "allowed": False, "reason": "not_allowed",
             "count": 1}]

    def setUp(self):
        granted = [v for v in load()["vectors"] if "broker" in v.get("result", {})]
        self.assertTrue(granted)
        self.vector = granted[0]
        self.result = {k: v for k, v in self.vector["result"].items() if k != "record"}
        self.broker = {k: self.result["broker"][k] for k in ("profile", "calls", "denied")}

    def digest(self, **broker):
        return digest.result_digest(dict(self.result, broker=dict(self.broker, **broker)))

    def test_absent_is_empty_and_zero(self):
        bare = self.digest()
        self.assertEqual(bare, self.digest(routes=[], routes_dropped=0))
        self.assertEqual(bare, self.digest(routes=[]))
        self.assertEqual(bare, self.digest(routes_dropped=0))
        self.assertEqual(len({bare, self.digest(routes=self.ROWS), self.digest(routes_dropped=1),
                              self.digest(routes=self.ROWS[:1]), self.digest(routes=self.ROWS[::-1])}), 5)

    def test_transcript_order(self):
        """The rows and the dropped count follow broker.denied, before advice."""
        with_rows = _result_transcript(dict(self.result, broker=dict(self.broker, routes=self.ROWS,
                                                                      routes_dropped=2)))
        rows = digest.Digest("")
        rows.field("broker.routes", b"2")
        for method, route, status, allowed, reason, count in (
                (b"GET", b"/items/*", b"200", b"true", b"", b"12"),
                (b"OTHER", b"", b"0", b"false", b"not_allowed", b"1")):
            rows.field("broker.route.method", method)
            rows.field("broker.route.route", route)
            rows.field("broker.route.status", status)
            rows.field("broker.route.allowed", allowed)
            rows.field("broker.route.reason", reason)
            rows.field("broker.route.count", count)
        rows.field("broker.routes_dropped", b"2")
        inserted = bytes(rows.transcript)[len(digest.value(b"")):]  # without its domain
        empty = digest.Digest("")
        empty.field("broker.routes", b"0")
        empty.field("broker.routes_dropped", b"0")
        bare_tail = bytes(empty.transcript)[len(digest.value(b"")):]
        bare = _result_transcript(dict(self.result, broker=self.broker))
        at = bare.index(bare_tail)
        self.assertEqual(with_rows, bare[:at] + inserted + bare[at + len(bare_tail):])

    def test_malformed_rows_are_refused(self):
        row = self.ROWS[0]
        no_count = {k: v for k, v in row.items() if k != "count"}
        for change in ({"routes": [dict(row, extra=1)]}, {"routes": [no_count]},
                       {"routes": [dict(row, status="200")]}, {"routes": [dict(row, allowed="true")]},
                       {"routes": [dict(row, method=None)]}, {"routes_dropped": True},
                       {"routes_dropped": None}):
            with self.subTest(change=change):
                with self.assertRaises((ValueError, TypeError, KeyError)):
                    self.digest(**change)


def _result_transcript(result):
    """The exact bytes the reference hashes for a result."""
    seen = []
    original = digest.Digest.hexdigest

    def keep(self):
        seen.append(bytes(self.transcript))
        return original(self)
    digest.Digest.hexdigest = keep
    try:
        digest.result_digest(result)
    finally:
        digest.Digest.hexdigest = original
    return seen[0]


def vector_at(node, path):
    for key in path:
        node = node[key]
    return node


if __name__ == "__main__":
    unittest.main()
