#!/usr/bin/env python3
"""ctest attest_example: runs attest_example.py against this build's plimsoll-attest and plimsolld
(embedded provider) and checks what it wrote, then the page in headless Chromium.

On disk: the dropped bundle is the intact one less one whole line, the changed one differs from it
in exactly one byte, and the page is self-contained (a Content-Security-Policy with default-src
'none', no script, link or URL outside itself). In Chromium: the page renders; the chain table has
six rows (five calls, then the close), each call's record, sequence and previous record equal to
the intact bundle's as read here, the close naming the last record; the browser recomputes all five
previous-line links and they match the signed ones; each of the three verdict boxes shows exactly
what `plimsoll-attest verify`, run again here on the files beside the page, prints, with its exit
status (0, 1, 1); and the page says what a signature does not prove.

    attest_example_test.py PLIMSOLL_ATTEST PLIMSOLLD

Exit 0 passed, 1 failed, 77 skipped (no Chromium: attest_example.py's own checks still ran).
"""
import hashlib
import html
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from exams_common import CHROMIUM, dump_dom, have_chromium, refers_outside  # noqa: E402

NAME = "attest_example"
VERDICTS = {"intact": 0, "dropped": 1, "changed": 1}


def element_text(dom, tag, element_id):
    """The text inside <tag id="element_id" ...>…</tag> (no nested tag of the same name)."""
    match = re.search(r'<%s id="%s"[^>]*>(.*?)</%s>' % (tag, re.escape(element_id), tag), dom, re.S)
    return html.unescape(match.group(1)) if match else None


def attribute(dom, element_id, name):
    element = re.search(r'<[a-z0-9]+ [^>]*id="%s"[^>]*>' % re.escape(element_id), dom)
    value = re.search(r' %s="([^"]*)"' % re.escape(name), element.group(0)) if element else None
    return html.unescape(value.group(1)) if value else None


def strip_tags(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def chain_cells(dom):
    """Each chain row's cells by class (their text), in the page's order."""
    rows = []
    for row_id, inner in re.findall(r'<tr id="(chain-\d+)"[^>]*>(.*?)</tr>', dom, re.S):
        cells = {name.split()[0]: strip_tags(value)
                 for name, value in re.findall(r'<td class="([a-z -]+)">(.*?)</td>', inner, re.S)}
        rows.append((row_id, cells))
    return rows


def check_files(out):
    problems = []
    bundles = {}
    for name in VERDICTS:
        with open(os.path.join(out, "bundles", f"{name}.jsonl"), "rb") as f:
            bundles[name] = f.read()
    intact = bundles["intact"].splitlines(keepends=True)
    if len(intact) != 6:
        problems.append(f"the intact bundle has {len(intact)} lines, not 6")
    if not any(b"".join(intact[:i] + intact[i + 1:]) == bundles["dropped"] for i in range(len(intact))):
        problems.append("the dropped bundle is not the intact one less one whole line")
    changed = bundles["changed"]
    differing = [i for i in range(min(len(changed), len(bundles["intact"])))
                 if changed[i] != bundles["intact"][i]]
    if len(changed) != len(bundles["intact"]) or len(differing) != 1:
        problems.append(f"the changed bundle differs from the intact one in {len(differing)} bytes, not one")
    return problems, [json.loads(line) for line in intact]


def check_page_source(page):
    problems = []
    if refers_outside(page):
        problems.append("the page refers to something outside itself")
    policy = re.search(r'<meta http-equiv="Content-Security-Policy"\s+content="([^"]*)"', page)
    if not policy or "default-src 'none'" not in policy.group(1) or "connect-src" in policy.group(1):
        problems.append(f"the page's Content-Security-Policy is not default-src 'none': "
                        f"{policy.group(1) if policy else 'none'}")
    return problems


def check_chain(dom, entries):
    problems = []
    rows = chain_cells(dom)
    if len(rows) != 6:
        return [f"the chain shows {len(rows)} rows, not 6 (5 calls and the close)"]
    kinds = re.findall(r'<tr id="chain-\d+"[^>]*data-kind="([a-z_]+)"', dom)
    if kinds != ["session_call"] * 5 + ["session_close"]:
        problems.append(f"the chain's kinds are {kinds}")
    for (row_id, cells), entry in zip(rows, entries):
        if row_id != f"chain-{entry['index']}" or cells.get("index") != str(entry["index"]):
            problems.append(f"{row_id}: not line {entry['index']}")
        if entry["kind"] == "session_call":
            record = entry["result"]["record"]
            expected = {"record": record["record_sha256"], "sequence": str(record["sequence"]),
                        "previous-record": record["previous_sha256"] or "(first call)",
                        "code": entry["request"]["cell"]["code"]}
        else:
            expected = {"record": hashlib.sha256(entry["session_id"].encode()).hexdigest(),
                        "previous-record": entry["close"]["last_record_sha256"],
                        "sequence": f"after {entry['close']['calls']} calls"}
        for name, value in expected.items():
            if cells.get(name) != value:
                problems.append(f"{row_id}: the page shows {name} {cells.get(name)!r}, the bundle {value!r}")
    links = attribute(dom, "browser-links", "data-match")
    if links != "5/5":
        problems.append(f"the browser's previous-line links: {links}, not 5/5")
    if re.search(r'class="[^"]*link-bad', dom):
        problems.append("the page marks a link of the intact chain as broken")
    outputs = [re.sub(r"<[^>]+>", "", c.get("output", "")) for _, c in rows]
    if "total 42" not in outputs[2] or "[20,22,84]" not in outputs[3] or "→ 126" not in outputs[4]:
        problems.append(f"the cells' outputs do not show the kept state: {outputs}")
    return problems


def check_verdicts(dom, binary, out):
    problems = []
    for name, status in VERDICTS.items():
        done = subprocess.run([binary, "verify", "--bundle", f"bundles/{name}.jsonl", "--pubkey", "key.pub"],
                              capture_output=True, text=True, timeout=60, cwd=out)
        if done.returncode != status:
            problems.append(f"{name}: verify exited {done.returncode} here, not {status}")
        shown = element_text(dom, "pre", f"verdict-{name}-output")
        if shown != done.stdout:
            problems.append(f"{name}: the page shows {shown!r}, verify printed {done.stdout!r}")
        if (element_text(dom, "pre", f"verdict-{name}-stderr") or "") != done.stderr:
            problems.append(f"{name}: the page's stderr differs from verify's {done.stderr!r}")
        if attribute(dom, f"verdict-{name}", "data-exit-code") != str(done.returncode):
            problems.append(f"{name}: the page's exit status is not verify's {done.returncode}")
    if len(re.findall(r'class="ok expectation"', dom)) != 3:
        problems.append("the page does not mark all three verdicts as expected")
    boxes = re.search(r'<div class="verdicts" id="verdicts">(.*)', dom, re.S)
    order = re.findall(r'id="verdict-([a-z]+)"', boxes.group(1)) if boxes else []
    if order[:3] != list(VERDICTS):
        problems.append(f"the verdicts are not intact, dropped, changed side by side: {order}")
    return problems


def main():
    binary, daemon = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    problems = []
    with tempfile.TemporaryDirectory(prefix="attest-example-") as scratch:
        out = os.path.join(scratch, "out")
        done = subprocess.run([sys.executable, os.path.join(HERE, "attest_example.py"),
                               "--plimsoll-attest", binary, "--plimsolld", daemon, "--out", out],
                              capture_output=True, text=True, timeout=120)
        print(done.stdout, end="")
        if done.returncode != 0:
            print(f"{NAME}: attest_example.py exited {done.returncode}\n{done.stderr}")
            return 1
        found, entries = check_files(out)
        problems += found
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            page = f.read()
        problems += check_page_source(page)
        if not have_chromium():
            for problem in problems:
                print(f"{NAME}: {problem}")
            print(f"{NAME}: skipped: {CHROMIUM} is missing (scripts/bootstrap installs it)")
            return 1 if problems else 77
        dom = dump_dom(os.path.join(out, "index.html"), os.path.join(scratch, "profile"))
        if "<html" not in dom or 'data-rendered="yes"' not in dom:
            problems.append("Chromium did not render the page (its script did not finish)")
        else:
            problems += check_chain(dom, entries)
            problems += check_verdicts(dom, binary, out)
            signature = element_text(dom, "blockquote", "signature") or ""
            if "does <strong>not</strong> prove" not in signature or "not a witness" not in signature:
                problems.append("the page does not quote what a signature does not prove")
            if refers_outside(dom):
                problems.append("the rendered page refers to something outside itself")
    for problem in problems:
        print(f"{NAME}: {problem}")
    if not problems:
        print(f"{NAME}: the page renders 6 chain rows matching the bundle, recomputes 5/5 line links, "
              "and shows verify's exact output for the intact, dropped and changed bundles (0, 1, 1)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
