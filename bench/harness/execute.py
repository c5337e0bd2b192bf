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
from .scenario import COMMAND
from . import timing

MEASURED = "measured"
SKIPPED = "skipped"
FAILED = "failed"

_TO_MS = {"s": 1000.0, "ms": 1.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6}
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
    version: Optional[str] = None
    baseline: Optional[str] = None
    unit: str = "ms"
    samples: List[float] = dataclasses.field(default_factory=list)
    stats: Optional[dict] = None
    ratios: Optional[dict] = None
    ratio_note: Optional[str] = None
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


def interpret_record(record):
    """(status, samples in ms, reason) of one sampler JSON object."""
    if "skipped" in record:
        return SKIPPED, [], str(record["skipped"])
    if "error" in record:
        return FAILED, [], str(record["error"])
    unit = record.get("unit", "ms")
    if unit not in _TO_MS:
        return FAILED, [], f"sampler reported unknown unit {unit!r}"
    samples = record.get("samples")
    if not isinstance(samples, list) or not samples:
        return FAILED, [], "sampler reported no samples"
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               and v >= 0 for v in samples):
        return FAILED, [], "sampler reported a sample that is not a finite non-negative number"
    factor = _TO_MS[unit]
    return MEASURED, [float(v) * factor for v in samples], None


def parse_sampler_output(text, wanted):
    """(status, samples in ms, reason) for scenario wanted in sampler stdout."""
    record = find_record(text, wanted)
    if record is None:
        return FAILED, [], f"sampler printed no JSON line for scenario {wanted!r}"
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
    """Run the timing loop as `wrapper... python3 timing.py`; returns (status, samples, reason)."""
    argv = list(wrapper) + [spec.pop("python"), _TIMING_SCRIPT]
    try:
        out = subprocess.run(argv, input=json.dumps(spec), capture_output=True, text=True,
                             timeout=timeout_s, check=False)
    except FileNotFoundError as error:
        return (SKIPPED if spec.get("trial") else FAILED), [], f"wrapper cannot run: {error}"
    except subprocess.TimeoutExpired:
        return FAILED, [], f"wrapped loop timed out after {timeout_s:g} s"
    record = find_record(out.stdout, spec["scenario"])
    detail = f"wrapper exited with status {out.returncode}"
    if out.stderr.strip():
        detail += f"; stderr: {_tail(out.stderr)}"
    if record is None:
        # The wrapper never started the loop: for a baseline that means this machine cannot host it.
        return (SKIPPED if spec.get("trial") else FAILED), [], detail
    status, samples, reason = interpret_record(record)
    if out.returncode != 0 and status == MEASURED:
        return FAILED, [], detail
    return status, samples, reason


def _run_sampler(scenario, argv, runs, warmup):
    env = dict(os.environ, PLIMSOLL_BENCH_RUNS=str(runs), PLIMSOLL_BENCH_WARMUP=str(warmup),
               PLIMSOLL_BENCH_SCENARIO=scenario.sample_name or scenario.name)
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=scenario.timeout_s,
                             env=env, check=False)
    except FileNotFoundError as error:
        return FAILED, [], f"sampler cannot run: {error}"
    except subprocess.TimeoutExpired:
        return FAILED, [], f"sampler timed out after {scenario.timeout_s:g} s"
    wanted = scenario.sample_name or scenario.name
    status, samples, reason = parse_sampler_output(out.stdout, wanted)
    if out.returncode != 0:
        detail = f"sampler exited with status {out.returncode}"
        if out.stderr.strip():
            detail += f"; stderr: {_tail(out.stderr)}"
        if status == MEASURED:
            return FAILED, [], detail
        return status, [], f"{reason}; {detail}" if reason else detail
    return status, samples, reason


def run_scenario(scenario, registry, fixtures, runs, warmup):
    """Probe, then measure one scenario. Never raises for problems of the scenario itself."""
    started = time.monotonic()
    if scenario.max_runs is not None:
        runs = min(runs, scenario.max_runs)
    result = ScenarioResult(name=scenario.name, kind=scenario.kind, status=SKIPPED,
                            description=scenario.description,
                            baseline=registry.baseline_of(scenario))

    def finish(status, reason=None, samples=()):
        result.status = status
        result.reason = reason
        result.samples = list(samples)
        if status == MEASURED:
            result.stats = stats.summarize(result.samples)
        result.seconds = round(time.monotonic() - started, 3)
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
    except FixtureError as error:
        return finish(SKIPPED, f"fixture unavailable: {error}")
    result.argv = argv
    result.wrapper = wrapper
    if scenario.version:
        result.version = _tool_version(list(scenario.version))

    if scenario.kind != COMMAND:
        status, samples, reason = _run_sampler(scenario, argv, runs, warmup)
        return finish(status, reason, samples)

    spec = {"scenario": scenario.name, "argv": argv, "cleanup": cleanup, "runs": runs,
            "warmup": warmup, "trial": scenario.trial_skips, "timeout_s": scenario.timeout_s,
            "id_prefix": f"plimsoll-bench-{os.getpid()}-{scenario.name}".replace("/", "-")}
    if wrapper:
        spec["python"] = fixtures.format("{python}")
        loop_timeout = scenario.timeout_s * (runs + warmup + 1) * (2 if cleanup else 1) + 30
        status, samples, reason = _run_wrapped_loop(wrapper, spec, loop_timeout)
    else:
        status, samples, reason = interpret_record(timing.run_loop(spec))
    return finish(status, reason, samples)
