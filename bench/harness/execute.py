"""Runs one scenario and returns its ScenarioResult: measured (with samples), skipped or failed."""

import dataclasses
import json
import math
import os
import subprocess
import time
from typing import List, Optional

from . import stats
from .fixtures import FixtureError
from .scenario import COMMAND, PRODUCED, TIERS
from . import timing

MEASURED = "measured"
SKIPPED = "skipped"
FAILED = "failed"

# Accepted sampler units -> (the unit results are kept in, factor). Times become ms; memory sizes
# become kB, where 1 kB = 1024 bytes (the convention of /proc/<pid>/status).
UNITS = {
    "s": ("ms", 1000.0), "ms": ("ms", 1.0), "us": ("ms", 1e-3), "µs": ("ms", 1e-3),
    "ns": ("ms", 1e-6),
    "B": ("kB", 1 / 1024), "kB": ("kB", 1.0), "KiB": ("kB", 1.0), "MB": ("kB", 1024.0),
    "MiB": ("kB", 1024.0),
}
_TIMING_SCRIPT = os.path.abspath(timing.__file__)


@dataclasses.dataclass
class ScenarioResult:
    name: str
    kind: str
    status: str
    description: str = ""
    reason: Optional[str] = None
    argv: List[str] = dataclasses.field(default_factory=list)
    wrapper: Optional[List[str]] = None
    stdin: Optional[str] = None   # command kind: the file given as stdin (None: /dev/null)
    version: Optional[str] = None
    baseline: Optional[str] = None
    unit: str = "ms"   # of samples and stats: "ms" (times) or "kB" (memory, 1 kB = 1024 B)
    samples: List[float] = dataclasses.field(default_factory=list)
    stats: Optional[dict] = None
    # "samples" (the runner computed stats from the raw samples) or "sampler summary" (the
    # sampler reported percentiles only; statistics it did not report are None)
    stats_from: Optional[str] = None
    ratios: Optional[dict] = None
    ratio_note: Optional[str] = None
    targets: Optional[List[dict]] = None   # one per target: what, limit, value, status, note
    # what the sampler says the row ran on, e.g. {"accelerator": "tcg", "tier": "kernel"}
    facts: Optional[dict] = None
    # issue 23: the row's tier (declared, or the sampler's facts' tier for a plimsoll row), whether
    # it is a peer of that tier, and for plimsoll's rows the best (lowest p50) peer of the tier
    # measured in this run with the ratios to it, or why there is none (peer_note)
    tier: Optional[str] = None
    peer: bool = False
    whole_process: bool = False   # compared only with whole-process peers (and vice versa)
    best_peer: Optional[str] = None
    peer_ratios: Optional[dict] = None
    peer_note: Optional[str] = None
    seconds: float = 0.0   # wall time this scenario took, probes and warm-ups included

    def to_json(self):
        return dataclasses.asdict(self)


def find_record(text, wanted):
    """The last JSON object line of sampler stdout whose "scenario" is wanted, or None."""
    found = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("scenario") == wanted:
            found = record
    return found


@dataclasses.dataclass
class Outcome:
    """What one sampler line (or one timed loop) yielded: samples in `unit` (ms or kB)."""
    status: str
    samples: List[float] = dataclasses.field(default_factory=list)
    reason: Optional[str] = None
    unit: str = "ms"
    summary: Optional[dict] = None   # a sampler's own statistics, when it reports no samples
    facts: Optional[dict] = None   # the record's "facts" ({name: text}), if any


def _is_sample(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


# A summary record must report n and p50; these others are optional (None when absent).
SUMMARY_KEYS = ("min", "p50", "p95", "p99", "max", "mean")


def _interpret_summary(summary, unit):
    """The Outcome of a {"summary": {...}} record (statistics without raw samples)."""
    if not isinstance(summary, dict):
        return Outcome(FAILED, reason="sampler reported a summary that is not an object")
    count = summary.get("n")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return Outcome(FAILED, reason="sampler summary has no positive integer n")
    if summary.get("p50") is None:
        return Outcome(FAILED, reason="sampler summary has no p50")
    kept, factor = UNITS[unit]
    result = {"n": count, "stdev": None}
    for key in SUMMARY_KEYS:
        value = summary.get(key)
        if value is not None and not _is_sample(value):
            return Outcome(FAILED, reason=f"sampler summary {key} is not a finite non-negative "
                                          "number")
        result[key] = None if value is None else float(value) * factor
    return Outcome(MEASURED, unit=kept, summary=result)


def interpret_record(record):
    """The Outcome of one sampler JSON object; samples converted to ms (times) or kB (memory).

    A record may carry "summary" ({"n", "p50"} plus any of "min", "p95", "p99", "max", "mean")
    instead of "samples", for a tool that prints statistics only; the row then has no samples.
    A measured record may carry "facts", an object of short texts saying what the row ran on
    (e.g. {"accelerator": "tcg"}); they are kept with the row.
    """
    outcome = _interpret_measurement(record)
    facts = record.get("facts")
    if outcome.status == MEASURED and facts is not None:
        if not isinstance(facts, dict) or not all(
                isinstance(key, str) and isinstance(value, str) for key, value in facts.items()):
            return Outcome(FAILED, reason="sampler facts must be an object of strings")
        outcome.facts = dict(facts)
    return outcome


def _interpret_measurement(record):
    if "skipped" in record:
        return Outcome(SKIPPED, reason=str(record["skipped"]))
    if "error" in record:
        return Outcome(FAILED, reason=str(record["error"]))
    unit = record.get("unit", "ms")
    if unit not in UNITS:
        return Outcome(FAILED, reason=f"sampler reported unknown unit {unit!r} (known: "
                                      f"{', '.join(UNITS)})")
    if "samples" not in record and "summary" in record:
        return _interpret_summary(record["summary"], unit)
    samples = record.get("samples")
    if not isinstance(samples, list) or not samples:
        return Outcome(FAILED, reason="sampler reported no samples")
    if not all(_is_sample(v) for v in samples):
        return Outcome(FAILED, reason="sampler reported a sample that is not a finite "
                                      "non-negative number")
    kept, factor = UNITS[unit]
    return Outcome(MEASURED, [float(v) * factor for v in samples], unit=kept)


def parse_sampler_output(text, wanted):
    """The Outcome for scenario wanted in sampler stdout."""
    record = find_record(text, wanted)
    if record is None:
        return Outcome(FAILED, reason=f"sampler printed no JSON line for scenario {wanted!r}")
    return interpret_record(record)


def _tail(text, limit=600):
    return " ".join(text[-limit:].split())


def _tool_version(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0].strip() if lines else None


def _run_wrapped_loop(wrapper, spec, timeout_s):
    """Run the timing loop as `wrapper... python3 timing.py`; returns an Outcome."""
    argv = list(wrapper) + [spec.pop("python"), _TIMING_SCRIPT]
    try:
        out = subprocess.run(argv, input=json.dumps(spec), capture_output=True, text=True,
                             timeout=timeout_s, check=False)
    except FileNotFoundError as error:
        return Outcome(SKIPPED if spec.get("trial") else FAILED,
                       reason=f"wrapper cannot run: {error}")
    except subprocess.TimeoutExpired:
        return Outcome(FAILED, reason=f"wrapped loop timed out after {timeout_s:g} s")
    record = find_record(out.stdout, spec["scenario"])
    detail = f"wrapper exited with status {out.returncode}"
    if out.stderr.strip():
        detail += f"; stderr: {_tail(out.stderr)}"
    if record is None:
        # The wrapper never started the loop: for a baseline that means this machine cannot host it.
        return Outcome(SKIPPED if spec.get("trial") else FAILED, reason=detail)
    outcome = interpret_record(record)
    if out.returncode != 0 and outcome.status == MEASURED:
        return Outcome(FAILED, reason=detail)
    return outcome


def _line_name(scenario):
    return scenario.sample_name or scenario.name


def _run_sampler(scenario, argv, runs, warmup, lines):
    """Run the sampler once; {line name: Outcome} for each of lines (JSON "scenario" values)."""
    env = dict(os.environ, PLIMSOLL_BENCH_RUNS=str(runs), PLIMSOLL_BENCH_WARMUP=str(warmup),
               PLIMSOLL_BENCH_SCENARIO=_line_name(scenario))
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=scenario.timeout_s,
                             env=env, check=False)
    except FileNotFoundError as error:
        return {line: Outcome(FAILED, reason=f"sampler cannot run: {error}") for line in lines}
    except subprocess.TimeoutExpired:
        return {line: Outcome(FAILED, reason=f"sampler timed out after {scenario.timeout_s:g} s")
                for line in lines}
    detail = None
    if out.returncode != 0:
        detail = f"sampler exited with status {out.returncode}"
        if out.stderr.strip():
            detail += f"; stderr: {_tail(out.stderr)}"
    outcomes = {}
    for line in lines:
        outcome = parse_sampler_output(out.stdout, line)
        if detail is not None:
            if outcome.status == MEASURED:
                outcome = Outcome(FAILED, reason=detail)
            else:
                outcome.samples = []
                outcome.reason = f"{outcome.reason}; {detail}" if outcome.reason else detail
        outcomes[line] = outcome
    return outcomes


def _declared_tier(scenario, fixtures):
    """The scenario's tier, a template formatted against the fixtures; None if it has none or
    the template cannot be formatted (or does not name a tier)."""
    if scenario.tier is None or "{" not in scenario.tier:
        return scenario.tier
    try:
        tier = fixtures.format(scenario.tier)
    except (FixtureError, KeyError):
        return None
    return tier if tier in TIERS else None


def run_scenario(scenario, registry, fixtures, runs, warmup, products=None):
    """Probe, then measure one scenario. Never raises for problems of the scenario itself.

    products: a dict shared across one run. A sampler with `produces` stores the Outcome of each
    produced scenario in it (also when the sampler is skipped or fails); a produced scenario
    takes its Outcome from it.
    """
    started = time.monotonic()
    if scenario.min_runs is not None:
        runs = max(runs, scenario.min_runs)
    if scenario.max_runs is not None:
        runs = min(runs, scenario.max_runs)
    if products is None:
        products = {}
    result = ScenarioResult(name=scenario.name, kind=scenario.kind, status=SKIPPED,
                            description=scenario.description,
                            baseline=registry.baseline_of(scenario),
                            tier=_declared_tier(scenario, fixtures), peer=scenario.peer,
                            whole_process=scenario.whole_process)

    def finish(status, reason=None, samples=(), unit="ms", summary=None, facts=None):
        result.status = status
        result.reason = reason
        result.samples = list(samples) if status == MEASURED else []
        result.unit = unit
        result.facts = facts if status == MEASURED and facts else None
        if result.tier is not None and not result.peer and result.facts \
                and result.facts.get("tier") in TIERS:
            result.tier = result.facts["tier"]   # what the evidence says the run got
        if status == MEASURED and summary is not None:
            result.stats = {key: summary.get(key) for key in stats.SUMMARY_FIELDS}
            result.stats_from = "sampler summary"
        elif status == MEASURED:
            result.stats = stats.summarize(result.samples)
            result.stats_from = "samples"
        result.seconds = round(time.monotonic() - started, 3)
        if status != MEASURED:
            for name in scenario.produces:   # the produced rows share the producer's fate
                products.setdefault(name, (Outcome(status, reason=f"from {scenario.name}: "
                                                                  f"{reason}"), result.argv))
        return result

    def finish_outcome(outcome):
        return finish(outcome.status, outcome.reason, outcome.samples, outcome.unit,
                      outcome.summary, outcome.facts)

    if scenario.kind == PRODUCED:
        producer = registry.producer_of(scenario)
        outcome, result.argv = products.get(scenario.name, (Outcome(
            FAILED, reason=f"its producer {producer} did not run before it"), []))
        finish_outcome(outcome)
        result.seconds = 0.0   # counted in the producer's row
        return result

    try:
        for probe in scenario.probes:
            reason = probe(fixtures)
            if reason:
                return finish(SKIPPED, reason)
        argv = fixtures.format_argv(scenario.argv, scenario.name, runs, warmup)
        cleanup = (fixtures.format_argv(scenario.cleanup, scenario.name, runs, warmup)
                   if scenario.cleanup else None)
        wrapper = (fixtures.format_argv(scenario.wrapper, scenario.name, runs, warmup)
                   if scenario.wrapper else None)
        stdin = (fixtures.format_argv([scenario.stdin], scenario.name, runs, warmup)[0]
                 if scenario.stdin else None)
    except FixtureError as error:
        return finish(SKIPPED, f"fixture unavailable: {error}")
    result.argv = argv
    result.wrapper = wrapper
    result.stdin = stdin
    if scenario.version:
        result.version = _tool_version(list(scenario.version))

    if scenario.kind != COMMAND:
        lines = {scenario.name: _line_name(scenario)}
        for name in scenario.produces:
            lines[name] = _line_name(registry.get(name))
        outcomes = _run_sampler(scenario, argv, runs, warmup, list(dict.fromkeys(lines.values())))
        for name in scenario.produces:
            products[name] = (outcomes[lines[name]], argv)
        return finish_outcome(outcomes[lines[scenario.name]])

    spec = {"scenario": scenario.name, "argv": argv, "cleanup": cleanup, "runs": runs,
            "warmup": warmup, "trial": scenario.trial_skips, "timeout_s": scenario.timeout_s,
            "stdin": stdin,
            "id_prefix": f"plimsoll-bench-{os.getpid()}-{scenario.name}".replace("/", "-")}
    if wrapper:
        spec["python"] = fixtures.format("{python}")
        loop_timeout = scenario.timeout_s * (runs + warmup + 1) * (2 if cleanup else 1) + 30
        outcome = _run_wrapped_loop(wrapper, spec, loop_timeout)
    else:
        outcome = interpret_record(timing.run_loop(spec))
    return finish_outcome(outcome)
