"""The command line: select scenarios, run them in registry order, write and print the results."""

import argparse
import datetime
import importlib.util
import os
import re
import sys

from . import peers, report
from .execute import FAILED, MEASURED, run_scenario
from .fixtures import BENCH_DIR, REPO_DIR, Fixtures

DEFAULT_RUNS = 100
DEFAULT_WARMUP = 5
QUICK_RUNS = 5
QUICK_WARMUP = 1


def load_registry(path):
    """Import the module file at path and return its REGISTRY."""
    spec = importlib.util.spec_from_file_location("plimsoll_bench_scenarios", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load a scenario registry from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    registry = getattr(module, "REGISTRY", None)
    if registry is None:
        raise SystemExit(f"{path} defines no REGISTRY")
    return registry


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="bench/run.py",
        description="Run plimsoll's benchmark scenarios and report p50/p95/p99 and ratios to "
                    "baselines measured in the same run.")
    parser.add_argument("--runs", type=int,
                        help=f"timed runs per scenario (default {DEFAULT_RUNS}, "
                             f"--quick {QUICK_RUNS})")
    parser.add_argument("--warmup", type=int, help=f"untimed warm-up runs per scenario (default "
                                                   f"{DEFAULT_WARMUP}, --quick {QUICK_WARMUP})")
    parser.add_argument("--only", metavar="REGEX",
                        help="run scenarios whose name matches REGEX (re.search), plus their "
                             "baselines")
    parser.add_argument("--out", metavar="DIR", default=os.path.join(BENCH_DIR, "results"),
                        help="directory for <date>.json and <date>.md (default bench/results)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run for CI: few runs and warm-ups unless given explicitly")
    parser.add_argument("--stamp", action="store_true",
                        help="name the files <date>T<time>Z.* instead of <date>.* (keeps every "
                             "run)")
    parser.add_argument("--no-write", action="store_true", help="print the table, write no files")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--registry", metavar="FILE",
                        default=os.path.join(BENCH_DIR, "scenarios.py"),
                        help="the scenario registry module (default bench/scenarios.py)")
    parser.add_argument("--plimsoll-bin", metavar="DIR",
                        help="where plimsoll's binaries are, for its own rows ({plimsoll_bin}; "
                             "default build/release/bin)")
    parser.add_argument("--keep-workdir", action="store_true",
                        help="keep the temporary rootfs/bundle directory (for debugging)")
    args = parser.parse_args(argv)
    if args.runs is None:
        args.runs = QUICK_RUNS if args.quick else DEFAULT_RUNS
    if args.warmup is None:
        args.warmup = QUICK_WARMUP if args.quick else DEFAULT_WARMUP
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    if args.only is not None:
        try:
            re.compile(args.only)
        except re.error as error:
            parser.error(f"--only: {error}")
    return args


def _utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def _progress(text):
    print(text, file=sys.stderr, flush=True)


def main(argv=None, registry=None):
    """Run the benchmarks; exit status 0 if nothing failed (skips and missed targets are fine),
    1 otherwise."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if registry is None:
        registry = load_registry(args.registry)
    registry.validate()
    selected = registry.select(args.only)

    if args.list:
        for scenario in selected:
            base = registry.baseline_of(scenario)
            targets = scenario.targets_text()
            tier = (f"[{scenario.tier} peer] " if scenario.peer else
                    f"[tier {scenario.tier}] " if scenario.tier else "")
            print(f"{scenario.name:30} {scenario.kind:8} baseline={base or '-':24} " + tier
                  + (f"[target {targets}] " if targets else "") + scenario.description)
        return 0
    if not selected:
        _progress(f"no scenario matches {args.only!r}")
        return 1

    started = _utc_now()
    results = []
    plimsoll_bin = os.path.abspath(args.plimsoll_bin
                                   or os.path.join(REPO_DIR, "build", "release", "bin"))
    products = {}   # outcomes of produced scenarios, filled by their sampler
    with Fixtures(keep=args.keep_workdir, values={"plimsoll_bin": plimsoll_bin}) as fixtures:
        if args.keep_workdir:
            _progress(f"work directory: {fixtures.workdir}")
        for index, scenario in enumerate(selected, 1):
            _progress(f"[{index}/{len(selected)}] {scenario.name} ...")
            result = run_scenario(scenario, registry, fixtures, args.runs, args.warmup, products)
            if result.status == MEASURED:
                detail = f"p50 {result.stats['p50']:.3f} {result.unit}, n={result.stats['n']}"
            else:
                detail = result.reason
            _progress(f"    {result.status}: {detail} ({result.seconds:.1f} s)")
            results.append(result)
    finished = _utc_now()

    report.attach_ratios(results)
    peers.attach_peers(results)
    report.attach_targets(results, registry)
    options = {"runs": args.runs, "warmup": args.warmup, "only": args.only, "quick": args.quick,
               "plimsoll_bin": plimsoll_bin}
    document = report.build_document(results, registry.reference, options,
                                     started.isoformat(timespec="seconds"),
                                     finished.isoformat(timespec="seconds"))
    table = report.markdown_table(document)
    print(table, end="")
    if not args.no_write:
        stem = (started.strftime("%Y-%m-%dT%H%M%SZ") if args.stamp
                else started.strftime("%Y-%m-%d"))
        json_path, md_path = report.write_results(document, args.out, stem)
        _progress(f"wrote {json_path} and {md_path}")
    targets = document["targets"]
    if targets["met"] or targets["MISSED"] or targets["n/a"]:
        _progress(report.target_summary_line(targets))
    # Missed targets are reported, not enforced: only failed scenarios change the exit status.
    return 1 if any(result.status == FAILED for result in results) else 0
