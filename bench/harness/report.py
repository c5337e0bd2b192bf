"""Ratios against baselines, the results document (JSON) and its Markdown table."""

import json
import os
import platform

from . import peers as peer_rows
from . import stats
from .execute import FAILED, MEASURED
from .scenario import TIERS

SCHEMA = "plimsoll-bench/1"
_TABLE_REASON_LIMIT = 140


def attach_ratios(results):
    """Set ratios (or a ratio_note) on each result naming a baseline measured in the same run.

    A ratio needs the same unit on both sides: a measured row whose baseline has another unit
    (ms against kB) is a registry error, and the row fails with that reason.
    """
    by_name = {result.name: result for result in results}
    for result in results:
        if result.baseline is None or result.status != MEASURED:
            continue
        base = by_name.get(result.baseline)
        if base is None:
            result.ratio_note = f"baseline {result.baseline} was not run"
        elif base.status != MEASURED:
            result.ratio_note = f"baseline {result.baseline} was {base.status}"
        elif base.unit != result.unit:
            result.status = FAILED
            result.reason = (f"unit {result.unit} differs from baseline {base.name}'s unit "
                             f"{base.unit}: no ratio between them")
            result.samples, result.stats = [], None
        else:
            result.ratios = stats.ratios(result.stats, base.stats)
    return results


def peer_summary_line(peers):
    """One line: each tier's best peer and p50, and its other peers, e.g. "Peers in this run
    (p50): container: best `unshare-qjs` 3.30 ms (`bwrap-qjs` 5.10 ms, `runc-qjs` skipped)."."""
    parts = []
    def order(key):
        tier = key.split(" ")[0]
        return (TIERS.index(tier) if tier in TIERS else len(TIERS), key)

    for tier in sorted(peers, key=order):
        entry = peers[tier]
        others = [f"`{p['name']}` " + (f"{_number(p['p50'])} {p['unit']}" if p["p50"] is not None
                                       else p["status"])
                  for p in entry["peers"] if p["name"] != entry["best"]]
        best = [p for p in entry["peers"] if p["name"] == entry["best"]]
        text = (f"best `{entry['best']}` {_number(entry['best_p50'])} {best[0]['unit']}"
                if best else "none measured")
        parts.append(f"{tier}: {text}" + (f" ({', '.join(others)})" if others else ""))
    return "Peers in this run (p50): " + "; ".join(parts) + "."


MET = "met"
MISSED = "MISSED"
NOT_EVALUATED = "n/a"


def attach_targets(results, registry):
    """Set targets on each result whose scenario has any (call after attach_ratios)."""
    by_name = {result.name: result for result in results}
    for result in results:
        scenario = registry.get(result.name)
        if scenario is None:
            continue
        targets = []
        if scenario.target_p50_ms is not None:
            target = {"what": "p50", "limit": scenario.target_p50_ms, "unit": "ms",
                      "value": None, "status": NOT_EVALUATED, "note": None}
            if result.status != MEASURED:
                target["note"] = f"scenario {result.status}"
            elif result.unit != "ms":
                target["note"] = f"a p50 target in ms, but the row is in {result.unit}"
            else:
                target["value"] = result.stats["p50"]
                target["status"] = MET if target["value"] <= target["limit"] else MISSED
            targets.append(target)
        if scenario.target_ratio is not None:
            target = {"what": "ratio_p50", "limit": scenario.target_ratio,
                      "baseline": result.baseline, "value": None, "status": NOT_EVALUATED,
                      "note": None}
            if result.status != MEASURED:
                target["note"] = f"scenario {result.status}"
            elif not result.ratios or result.ratios.get("p50") is None:
                target["note"] = result.ratio_note or "no ratio"
            else:
                target["value"] = result.ratios["p50"]
                target["status"] = MET if target["value"] <= target["limit"] else MISSED
            targets.append(target)
        if scenario.target_added_p50_ms is not None:
            target = {"what": "added_p50", "limit": scenario.target_added_p50_ms, "unit": "ms",
                      "baseline": result.baseline, "value": None, "status": NOT_EVALUATED,
                      "note": None}
            base = by_name.get(result.baseline)
            if result.status != MEASURED:
                target["note"] = f"scenario {result.status}"
            elif result.unit != "ms":
                target["note"] = f"an added-p50 target in ms, but the row is in {result.unit}"
            elif not result.ratios:
                target["note"] = result.ratio_note or "no baseline measured"
            elif base is None or not base.stats or base.stats.get("p50") is None \
                    or result.stats.get("p50") is None:
                target["note"] = "no p50 on both sides"
            else:
                target["value"] = result.stats["p50"] - base.stats["p50"]
                target["status"] = MET if target["value"] <= target["limit"] else MISSED
            targets.append(target)
        if scenario.target_peer_ratio is not None:
            target = {"what": "peer_ratio_p50", "limit": scenario.target_peer_ratio,
                      "peer": result.best_peer, "value": None, "status": NOT_EVALUATED,
                      "note": None}
            if result.status != MEASURED:
                target["note"] = f"scenario {result.status}"
            elif not result.peer_ratios or result.peer_ratios.get("p50") is None:
                target["note"] = result.peer_note or "no peer ratio"
            else:
                target["value"] = result.peer_ratios["p50"]
                target["status"] = MET if target["value"] <= target["limit"] else MISSED
            targets.append(target)
        result.targets = targets or None
    return results


def _target_value(target):
    """The measured value as text ("2.00 ms", "+0.31 ms", "1.25×"), or None."""
    if target["value"] is None:
        return None
    if target["what"] == "p50":
        return f"{_number(target['value'])} ms"
    if target["what"] == "added_p50":
        sign = "+" if target["value"] >= 0 else "−"
        return f"{sign}{_number(abs(target['value']))} ms"
    return _ratio(target["value"])


def _target_text(target, with_status=True):
    if target["what"] == "p50":
        text = f"p50 ≤ {target['limit']:g} ms"
    elif target["what"] == "added_p50":
        text = f"+p50 ≤ {target['limit']:g} ms"
    elif target["what"] == "peer_ratio_p50":
        text = f"×peer p50 ≤ {target['limit']:.2f}"
    else:
        text = f"×p50 ≤ {target['limit']:.2f}"
    value = _target_value(target)
    if with_status:
        text += f": {target['status']}"
        if target["status"] == MISSED and value is not None:
            text += f" ({value})"
    return text


def target_summary(scenarios):
    """{"met": n, "MISSED": n, "n/a": n, "missed": [text...], "not_evaluated": [text...]}."""
    summary = {MET: 0, MISSED: 0, NOT_EVALUATED: 0, "missed": [], "not_evaluated": []}
    for row in scenarios:
        for target in row.get("targets") or ():
            summary[target["status"]] += 1
            if target["status"] == MISSED:
                summary["missed"].append(f"{row['name']}: {_target_text(target, False)}, got "
                                         + _target_value(target))
            elif target["status"] == NOT_EVALUATED:
                summary["not_evaluated"].append(f"{row['name']}: {_target_text(target, False)} "
                                                f"({target['note']})")
    return summary


def target_summary_line(summary):
    """One line: counts of met / MISSED / not evaluated targets, and which were missed."""
    line = (f"Targets (reported, not enforced): {summary[MET]} met, {summary[MISSED]} MISSED, "
            f"{summary[NOT_EVALUATED]} not evaluated.")
    if summary["missed"]:
        line += " MISSED: " + "; ".join(summary["missed"]) + "."
    return line


def cgroup_layout():
    """'v2', 'hybrid (v1 + v2 at /sys/fs/cgroup/unified)', 'v1' or 'none'."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        return "v2"
    if os.path.ismount("/sys/fs/cgroup/unified"):
        return "hybrid (v1 + v2 at /sys/fs/cgroup/unified)"
    if os.path.isdir("/sys/fs/cgroup/memory") or os.path.isdir("/sys/fs/cgroup/pids"):
        return "v1"
    return "none"


def host_facts():
    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "uid": os.geteuid(),
        "cgroups": cgroup_layout(),
        # 1/5/15-minute load averages when the results were assembled: on a shared machine,
        # anything well above the CPU count means the wall-clock numbers are inflated.
        "loadavg": [round(value, 2) for value in os.getloadavg()],
    }


def build_document(results, reference, options, started_at, finished_at, host=None):
    """The JSON-serialisable results document."""
    counts = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    scenarios = [result.to_json() for result in results]
    return {
        "schema": SCHEMA,
        "started_at": started_at,
        "finished_at": finished_at,
        "host": host if host is not None else host_facts(),
        "options": options,
        "reference": reference,
        "percentile_method": "linear interpolation between closest ranks (numpy/R type 7)",
        "counts": counts,
        "scenarios": scenarios,
        "peers": peer_rows.peer_summary(results),
        "targets": target_summary(scenarios),
    }


def _number(value):
    if value is None:
        return "—"
    if 0 < value < 0.01:
        return f"{value:.2g}"   # sub-10 µs rows (a plant's tick): two significant digits
    if value < 1:
        return f"{value:.3f}"
    if value < 100:
        return f"{value:.2f}"
    if value < 1000:
        return f"{value:.1f}"
    return f"{value:.0f}"


def _ratio(value):
    return "—" if value is None else f"{value:.2f}×"


def _cell(text):
    text = " ".join(str(text).split()).replace("|", "\\|")
    if len(text) > _TABLE_REASON_LIMIT:
        text = text[:_TABLE_REASON_LIMIT - 1] + "…"
    return text


def _peer_cells(row):
    """The tier, best peer and ×peer cells of a row."""
    tier = row.get("tier")
    if not tier:
        return ["—", "—", "—"]
    if row.get("whole_process"):
        tier += ", whole process"
    if row.get("peer"):
        return [f"{tier} (peer)", "—", "—"]
    if row.get("best_peer"):
        return [tier, f"`{row['best_peer']}`", _ratio((row.get("peer_ratios") or {}).get("p50"))]
    note = row.get("peer_note")
    return [tier, _cell(f"— ({note})") if note else "—", "—"]


def markdown_table(document):
    """The results table (GitHub-flavoured Markdown) with its header and per-scenario notes."""
    host = document["host"]
    options = document["options"]
    lines = [
        f"# plimsoll benchmarks, {document['started_at'][:10]}",
        "",
        f"Host `{host.get('hostname')}`: kernel {host.get('kernel')}, {host.get('cpus')} CPUs, "
        f"cgroups {host.get('cgroups')}, Python {host.get('python')}, uid {host.get('uid')}"
        + (f", load average {' / '.join(str(v) for v in host['loadavg'])} at the end"
           if host.get("loadavg") else "") + ". "
        f"Started {document['started_at']}, finished {document['finished_at']}.",
        "",
        f"{options.get('runs')} timed runs per scenario after {options.get('warmup')} warm-up runs"
        + (f", scenarios matching `{options['only']}`" if options.get("only") else "")
        + " (a scenario may raise or cap its own count; n is what was measured). Values are in"
        " each row's unit: ms = wall-clock milliseconds per invocation (or per in-process run),"
        " kB = memory size (1 kB = 1024 bytes, as /proc reports). Ratios divide a scenario's"
        " statistic by its baseline's (same unit), measured in this same run (reference baseline:"
        f" `{document['reference']}`). Each row of plimsoll's with a tier is also divided by"
        " the best (lowest p50) peer of its tier measured in this run: `best peer` and"
        " `×peer` (p50 / p50); `—` when no peer of the tier was measured. Targets are reported,"
        " not enforced.",
        "",
        "| scenario | status | n | unit | p50 | p95 | p99 | mean | min | max "
        "| baseline | ×p50 | ×p95 | ×p99 | tier | best peer | ×peer | target |",
        "|---|---|--:|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|---|---|--:|---|",
    ]
    for row in document["scenarios"]:
        status = row["status"]
        if row.get("reason"):
            status = f"{status}: {row['reason']}"
        summary = row.get("stats") or {}
        ratios = row.get("ratios") or {}
        baseline = row.get("baseline") or "—"
        if row.get("ratio_note"):
            baseline = f"{baseline} ({row['ratio_note']})"
        lines.append("| " + " | ".join([
            f"`{row['name']}`", _cell(status),
            str(summary["n"]) if summary else "—",
            (row.get("unit") or "ms") if summary else "—",
            *(_number(summary.get(key)) for key in ("p50", "p95", "p99", "mean", "min", "max")),
            _cell(baseline),
            *(_ratio(ratios.get(key)) for key in ("p50", "p95", "p99")),
            *_peer_cells(row),
            _cell("; ".join(_target_text(t) for t in row.get("targets") or ()) or "—"),
        ]) + " |")
    peers = document.get("peers") or {}
    if peers:
        lines += ["", peer_summary_line(peers)]
    targets = document.get("targets") or target_summary(document["scenarios"])
    if targets[MET] or targets[MISSED] or targets[NOT_EVALUATED]:
        lines += ["", target_summary_line(targets)]
    notes = [row for row in document["scenarios"] if row.get("description")]
    if notes:
        lines += ["", "What each scenario measures:", ""]
        for row in notes:
            version = f" ({row['version']})" if row.get("version") else ""
            facts = row.get("facts") or {}
            ran_on = ("; ".join(f"{key}: {value}" for key, value in facts.items())
                      if facts else "")
            lines.append(f"- `{row['name']}`{version}: {' '.join(row['description'].split())}"
                         + (f" Ran on: {' '.join(ran_on.split())}." if ran_on else ""))
    return "\n".join(lines) + "\n"


def _dumps_with_flat_samples(document):
    """JSON indented for reading, except that each row's samples stay on one line (a throughput
    row holds tens of thousands; one per line would make every results file a huge diff)."""
    flat = {}
    rows = []
    for index, row in enumerate(document.get("scenarios") or []):
        if isinstance(row, dict) and isinstance(row.get("samples"), list):
            marker = f"@@samples-{index}@@"
            flat[json.dumps(marker)] = json.dumps(row["samples"], separators=(",", ":"))
            row = dict(row, samples=marker)
        rows.append(row)
    text = json.dumps(dict(document, scenarios=rows), indent=2, ensure_ascii=False)
    for marker, samples in flat.items():
        text = text.replace(marker, samples, 1)
    return text


def write_results(document, out_dir, stem):
    """Write <out_dir>/<stem>.json and <stem>.md; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    json_path = os.path.join(out_dir, f"{stem}.json")
    md_path = os.path.join(out_dir, f"{stem}.md")
    with open(json_path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(_dumps_with_flat_samples(document))
        handle.write("\n")
    os.replace(json_path + ".tmp", json_path)
    with open(md_path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(markdown_table(document))
    os.replace(md_path + ".tmp", md_path)
    return json_path, md_path
