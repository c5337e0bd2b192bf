"""Ratios against baselines, the results document (JSON) and its Markdown table."""

import json
import os
import platform

from . import stats
from .execute import MEASURED

SCHEMA = "plimsoll-bench/1"
_TABLE_REASON_LIMIT = 140


def attach_ratios(results):
    """Set ratios (or a ratio_note) on each result naming a baseline measured in the same run."""
    by_name = {result.name: result for result in results}
    for result in results:
        if result.baseline is None or result.status != MEASURED:
            continue
        base = by_name.get(result.baseline)
        if base is None:
            result.ratio_note = f"baseline {result.baseline} was not run"
        elif base.status != MEASURED:
            result.ratio_note = f"baseline {result.baseline} was {base.status}"
        else:
            result.ratios = stats.ratios(result.stats, base.stats)
    return results


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
    }


def build_document(results, reference, options, started_at, finished_at, host=None):
    """The JSON-serialisable results document."""
    counts = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    return {
        "schema": SCHEMA,
        "started_at": started_at,
        "finished_at": finished_at,
        "host": host if host is not None else host_facts(),
        "options": options,
        "reference": reference,
        "percentile_method": "linear interpolation between closest ranks (numpy/R type 7)",
        "counts": counts,
        "scenarios": [result.to_json() for result in results],
    }


def _number(value):
    if value is None:
        return "—"
    if value < 1:
        return f"{value:.3f}"
    if value < 100:
        return f"{value:.2f}"
    return f"{value:.1f}"


def _ratio(value):
    return "—" if value is None else f"{value:.2f}×"


def _cell(text):
    text = " ".join(str(text).split()).replace("|", "\\|")
    if len(text) > _TABLE_REASON_LIMIT:
        text = text[:_TABLE_REASON_LIMIT - 1] + "…"
    return text


def markdown_table(document):
    """The results table (GitHub-flavoured Markdown) with its header and per-scenario notes."""
    host = document["host"]
    options = document["options"]
    lines = [
        f"# plimsoll benchmarks, {document['started_at'][:10]}",
        "",
        f"Host `{host.get('hostname')}`: kernel {host.get('kernel')}, {host.get('cpus')} CPUs, "
        f"cgroups {host.get('cgroups')}, Python {host.get('python')}, uid {host.get('uid')}. "
        f"Started {document['started_at']}, finished {document['finished_at']}.",
        "",
        f"{options.get('runs')} timed runs per scenario after {options.get('warmup')} warm-up runs"
        + (f", scenarios matching `{options['only']}`" if options.get("only") else "")
        + ". Times are wall-clock milliseconds per invocation; ratios divide a scenario's statistic"
        " by its baseline's, measured in this same run (reference baseline:"
        f" `{document['reference']}`).",
        "",
        "| scenario | status | n | p50 ms | p95 ms | p99 ms | mean ms | min ms | max ms "
        "| baseline | ×p50 | ×p95 | ×p99 |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|",
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
            *(_number(summary.get(key)) for key in ("p50", "p95", "p99", "mean", "min", "max")),
            _cell(baseline),
            *(_ratio(ratios.get(key)) for key in ("p50", "p95", "p99")),
        ]) + " |")
    notes = [row for row in document["scenarios"] if row.get("description")]
    if notes:
        lines += ["", "What each scenario measures:", ""]
        for row in notes:
            version = f" ({row['version']})" if row.get("version") else ""
            lines.append(f"- `{row['name']}`{version}: {' '.join(row['description'].split())}")
    return "\n".join(lines) + "\n"


def write_results(document, out_dir, stem):
    """Write <out_dir>/<stem>.json and <stem>.md; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    json_path = os.path.join(out_dir, f"{stem}.json")
    md_path = os.path.join(out_dir, f"{stem}.md")
    with open(json_path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    os.replace(json_path + ".tmp", json_path)
    with open(md_path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(markdown_table(document))
    os.replace(md_path + ".tmp", md_path)
    return json_path, md_path
