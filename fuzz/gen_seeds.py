#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets whose seeds are not plain text
to write by hand: fuzz/corpus/guest_report/ (sealed agent streams need the
HMAC of the fuzzer's fixed report key, bytes 0x00..0x1f), and
fuzz/corpus/record_digest/ (a request body, a NUL byte, a result body).

Run it from anywhere after changing the protocol: python3 fuzz/gen_seeds.py
"""
import hashlib
import hmac
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = bytes(range(32))


def write(corpus, name, data):
    path = os.path.join(HERE, "corpus", corpus)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, name), "wb") as out:
        out.write(data)


def frame(body):
    return struct.pack(">I", len(body)) + body


def sealed(body, key=KEY):
    return frame(body) + frame(hmac.new(key, body, hashlib.sha256).hexdigest().encode())


def dump(message):
    # The agent writes compact JSON with sorted keys (nlohmann's std::map).
    return json.dumps(message, separators=(",", ":"), sort_keys=True).encode()


def step(command, exit_code=0, stdout="aGkK", stderr="", timed_out=False):
    return {"command": command, "exit_code": exit_code, "timed_out": timed_out,
            "stdout": stdout, "stderr": stderr, "stdout_truncated": False,
            "stderr_truncated": False, "duration_ms": 12}


REPORTS = {
    "snippet_completed": {"version": 1, "outcome": "completed",
                          "steps": [step(["python3", "main.py"])], "artifacts": [], "detail": ""},
    "project_artifacts": {"version": 1, "outcome": "completed",
                          "steps": [step(["python3", "main.py"]), step(["sh", "-c", "ls"], 1)],
                          "artifacts": [{"path": "out/a.txt", "content": "eA==", "truncated": False},
                                        {"path": "b.bin", "content": "", "truncated": True}],
                          "detail": "out/missing was not found.\n"},
    "timed_out": {"version": 1, "outcome": "timed_out",
                  "steps": [step(["python3", "main.py"], 124, timed_out=True)], "artifacts": [],
                  "detail": ""},
    "setup_failed": {"version": 1, "outcome": "setup_failed", "steps": [], "artifacts": [],
                     "detail": "main.py could not be written.\n"},
    "claims_protocol_error": {"version": 1, "outcome": "protocol_error", "steps": [],
                              "artifacts": [], "detail": ""},
    "version_2": {"version": 2, "outcome": "completed", "steps": [], "artifacts": [], "detail": ""},
    "bad_base64": {"version": 1, "outcome": "completed",
                   "steps": [step(["x"], stdout="aGk")], "artifacts": [], "detail": ""},
    "escaping_artifact": {"version": 1, "outcome": "completed", "steps": [],
                          "artifacts": [{"path": "../etc/passwd", "content": "", "truncated": False}],
                          "detail": ""},
    "exit_256": {"version": 1, "outcome": "completed", "steps": [step(["x"], 256)],
                 "artifacts": [], "detail": ""},
}


def guest_report():
    for name, report in REPORTS.items():
        body = dump(report)
        write("guest_report", name + ".json", body)          # sealed by the harness
        write("guest_report", name + ".stream", sealed(body))  # the whole channel
    good = dump(REPORTS["snippet_completed"])
    write("guest_report", "wrong_key.stream", sealed(good, bytes(32)))
    write("guest_report", "cut_in_seal.stream", sealed(good)[:-10])
    write("guest_report", "cut_in_report.stream", frame(good)[:20])
    write("guest_report", "oversize_frame.stream", struct.pack(">I", (32 << 20) + 1) + b"{}")
    write("guest_report", "no_seal.stream", frame(good))
    write("guest_report", "empty_frames.stream", frame(b"") + frame(b""))
    job = {"version": 1, "files": [{"path": "main.py", "content": "cHJpbnQoMSk="}],
           "steps": [["python3", "main.py"]], "artifacts": ["out.txt"], "timeout_ms": 5000,
           "output_cap_bytes": 65536, "max_artifact_bytes": 4194304, "nofile": 256,
           "fsize_bytes": 134217728, "nproc": 0, "environment": ["HOME=/work"],
           "report_key": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}
    write("guest_report", "job.json", dump(job))


def record_digest():
    corpus = os.path.join(HERE, "corpus", "request_json")
    results = {}
    for name in ("answer_result.json", "answer_result_project.json"):
        with open(os.path.join(corpus, name), "rb") as source:
            results[name] = source.read().strip()
    # That seed's float duration_ms is refused (it tests the reader); here the
    # result must decode.
    results["answer_result_project.json"] = results["answer_result_project.json"].replace(
        b'"duration_ms":5.0', b'"duration_ms":5')
    requests = {
        "snippet": b'{"protocol":1,"javascript":{"code":"console.log(1)"},"timeout_ms":500}',
        "floor": b'{"protocol":1,"minimum_isolation":"container","python":{"code":"print(1)"}}',
        "environment": b'{"protocol":1,"environment":"sha256:1","trace_id":"t-1",'
                       b'"grant_profile":"web","python":{"code":"x"}}',
        "two_payloads": b'{"protocol":1,"python":{"code":"x"},"javascript":{"code":"y"}}',
    }
    with open(os.path.join(corpus, "project.json"), "rb") as source:
        requests["project"] = source.read().strip()
    with open(os.path.join(corpus, "cell.json"), "rb") as source:
        requests["cell"] = source.read().strip()
    for request_name, request in requests.items():
        for result_name, result in results.items():
            stem = result_name.replace("answer_", "").replace(".json", "")
            write("record_digest", f"{request_name}+{stem}", request + b"\0" + result)
    write("record_digest", "request_only.json", requests["project"])
    write("record_digest", "result_only.json", results["answer_result_project.json"])


if __name__ == "__main__":
    guest_report()
    record_digest()
