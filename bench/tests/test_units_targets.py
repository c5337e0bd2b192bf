"""Non-time units (kB), samplers producing several scenarios, and targets."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from harness import report, stats  # noqa: E402
from harness.execute import (FAILED, MEASURED, SKIPPED, ScenarioResult,  # noqa: E402
                             interpret_record, run_scenario)
from harness.fixtures import Fixtures  # noqa: E402
from harness.runner import main  # noqa: E402
from harness.scenario import Registry, command, needs_path, produced, sampler  # noqa: E402

PY = sys.executable
FAKE_SAMPLER = os.path.join(BENCH, "tests", "fake_sampler.py")


def fake(name, mode="ok", unit="ms", also=(), **fields):
    argv = [PY, FAKE_SAMPLER, "--mode", mode, "--scenario", "{scenario}", "--runs", "{runs}",
            "--unit", unit]
    for item in also:
        argv += ["--also", item]
    return sampler(name, argv, **fields)


def measured(name, samples, baseline=None, unit="ms"):
    return ScenarioResult(name=name, kind="sampler", status=MEASURED, baseline=baseline,
                          unit=unit, samples=samples, stats=stats.summarize(samples))


def run_main(args, registry):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args, registry=registry)
    return status, out.getvalue(), err.getvalue()


class UnitTest(unittest.TestCase):
    def test_kilobytes_are_kept(self):
        outcome = interpret_record({"scenario": "m", "unit": "kB", "samples": [4576, 4580]})
        self.assertEqual((outcome.status, outcome.unit, outcome.samples),
                         (MEASURED, "kB", [4576.0, 4580.0]))

    def test_bytes_and_megabytes_become_kilobytes(self):
        self.assertEqual(interpret_record({"unit": "B", "samples": [2048]}).samples, [2.0])
        outcome = interpret_record({"unit": "MB", "samples": [2]})
        self.assertEqual((outcome.unit, outcome.samples), ("kB", [2048.0]))

    def test_times_become_milliseconds(self):
        outcome = interpret_record({"unit": "s", "samples": [0.5]})
        self.assertEqual((outcome.unit, outcome.samples), ("ms", [500.0]))

    def test_unknown_unit_fails(self):
        outcome = interpret_record({"unit": "furlongs", "samples": [1]})
        self.assertEqual(outcome.status, FAILED)
        self.assertIn("unknown unit 'furlongs'", outcome.reason)

    def test_sampler_row_carries_its_unit(self):
        registry = Registry()
        scenario = registry.add(fake("mem", unit="kB"))
        with Fixtures() as fixtures:
            result = run_scenario(scenario, registry, fixtures, 3, 0)
        self.assertEqual((result.status, result.unit), (MEASURED, "kB"), result.reason)
        self.assertEqual(result.samples, [1.0, 2.0, 3.0])
        self.assertAlmostEqual(result.stats["p50"], 2.0)

    def test_ratio_in_the_same_unit(self):
        results = [measured("a", [100.0], unit="kB"), measured("b", [105.0], "a", unit="kB")]
        report.attach_ratios(results)
        self.assertAlmostEqual(results[1].ratios["p50"], 1.05)

    def test_ratio_across_units_is_an_error(self):
        results = [measured("a", [100.0], unit="kB"), measured("b", [1.0], "a", unit="ms")]
        report.attach_ratios(results)
        self.assertEqual(results[1].status, FAILED)
        self.assertIn("unit ms differs from baseline a's unit kB", results[1].reason)
        self.assertIsNone(results[1].ratios)
        self.assertIsNone(results[1].stats)
        self.assertEqual(results[1].samples, [])

    def test_markdown_shows_the_unit_per_row(self):
        results = [measured("t", [0.5]), measured("m", [4576.0], unit="kB")]
        document = report.build_document(results, None, {"runs": 1, "warmup": 0}, "2026-01-01T00",
                                         "2026-01-01T01", host={})
        table = report.markdown_table(document)
        self.assertIn("| `t` | measured | 1 | ms | 0.500 |", table)
        self.assertIn("| `m` | measured | 1 | kB | 4576 |", table)
        self.assertIn("| unit | p50 |", table)


class ProducesTest(unittest.TestCase):
    def registry(self, mode="ok", probe=None):
        registry = Registry()
        registry.add(command("base", [PY, "-c", "pass"], baseline=None))
        registry.add(fake("mem.after_100", mode, unit="kB", baseline=None,
                          also=["mem.after_10000:1.25", "vm.after_100:3", "vm.after_10000:3"],
                          produces=["mem.after_10000", "vm.after_100", "vm.after_10000"],
                          probes=[probe] if probe else ()))
        registry.add(produced("mem.after_10000", baseline="mem.after_100", target_ratio=1.10))
        registry.add(produced("vm.after_100", baseline=None))
        registry.add(produced("vm.after_10000", baseline="vm.after_100", target_ratio=1.10))
        return registry

    def rows(self, registry, *args):
        with tempfile.TemporaryDirectory() as out_dir:
            status, table, _ = run_main(["--runs", "3", "--warmup", "0", "--out", out_dir, *args],
                                        registry)
            json_name = [n for n in os.listdir(out_dir) if n.endswith(".json")][0]
            with open(os.path.join(out_dir, json_name), encoding="utf-8") as handle:
                document = json.load(handle)
        return status, table, document, {row["name"]: row for row in document["scenarios"]}

    def test_one_invocation_yields_every_produced_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "calls")
            registry = self.registry()
            # Count the sampler's invocations through a wrapper script.
            scenario = registry.get("mem.after_100")
            wrapper = os.path.join(tmp, "count.sh")
            with open(wrapper, "w", encoding="utf-8") as handle:
                handle.write(f'#!/bin/sh\necho x >> {log}\nexec "$@"\n')
            os.chmod(wrapper, 0o755)
            registry._scenarios["mem.after_100"] = sampler(
                scenario.name, [wrapper, *scenario.argv], baseline=None,
                produces=scenario.produces)
            status, table, document, rows = self.rows(registry)
            with open(log, encoding="utf-8") as handle:
                self.assertEqual(handle.read().count("x"), 1)
        self.assertEqual(status, 0)
        self.assertEqual(rows["mem.after_100"]["samples"], [1.0, 2.0, 3.0])
        self.assertEqual(rows["mem.after_10000"]["samples"], [1.25, 2.5, 3.75])
        self.assertEqual(rows["vm.after_10000"]["unit"], "kB")
        self.assertEqual(rows["mem.after_10000"]["kind"], "produced")
        self.assertAlmostEqual(rows["mem.after_10000"]["ratios"]["p50"], 1.25)
        self.assertAlmostEqual(rows["vm.after_10000"]["ratios"]["p50"], 1.0)
        self.assertEqual(rows["mem.after_10000"]["targets"][0]["status"], "MISSED")
        self.assertEqual(rows["vm.after_10000"]["targets"][0]["status"], "met")
        self.assertIn("| `mem.after_10000` | measured | 3 | kB |", table)

    def test_skipped_producer_skips_its_products(self):
        probe = needs_path("/nonexistent/engine_bench")
        status, table, _, rows = self.rows(self.registry(probe=probe))
        self.assertEqual(status, 0)
        self.assertEqual(rows["mem.after_100"]["status"], SKIPPED)
        self.assertEqual(rows["vm.after_10000"]["status"], SKIPPED)
        self.assertEqual(rows["vm.after_10000"]["reason"],
                         "from mem.after_100: /nonexistent/engine_bench does not exist")
        self.assertEqual(rows["vm.after_10000"]["targets"][0]["status"], "n/a")

    def test_crashing_producer_fails_its_products(self):
        status, _, _, rows = self.rows(self.registry(mode="crash"))
        self.assertEqual(status, 1)
        for name in ("mem.after_100", "mem.after_10000", "vm.after_100"):
            self.assertEqual(rows[name]["status"], FAILED, name)
            self.assertIn("exited with status 3", rows[name]["reason"])

    def test_only_a_product_runs_its_producer_and_siblings(self):
        registry = self.registry()
        names = [s.name for s in registry.select("^vm.after_10000$")]
        self.assertEqual(names, ["mem.after_100", "mem.after_10000", "vm.after_100",
                                 "vm.after_10000"])
        self.assertNotIn("base", names)

    def test_validation(self):
        registry = Registry()
        registry.add(produced("orphan"))
        with self.assertRaisesRegex(ValueError, "no sampler produces it"):
            registry.validate()
        registry = Registry()
        registry.add(produced("early"))
        registry.add(fake("late", produces=["early"], baseline=None))
        with self.assertRaisesRegex(ValueError, "after its producer"):
            registry.validate()
        registry = Registry()
        registry.add(fake("p", produces=["q"], baseline=None))
        registry.add(command("q", ["true"], baseline=None))
        with self.assertRaisesRegex(ValueError, "not a registered produced scenario"):
            registry.validate()
        with self.assertRaises(ValueError):
            produced("x", probes=[needs_path("/x")])
        with self.assertRaises(ValueError):
            command("c", ["true"], produces=["x"])


class TargetTest(unittest.TestCase):
    def registry(self, p50_target, ratio_target):
        registry = Registry(reference="base")
        registry.add(fake("base"))   # samples 1..N ms
        registry.add(fake("fast", also=["slow:2"], produces=["slow"], baseline="base",
                          target_p50_ms=p50_target))
        registry.add(produced("slow", baseline="base", target_ratio=ratio_target))
        return registry

    def test_met_and_missed_are_reported_and_the_exit_status_stays_zero(self):
        with tempfile.TemporaryDirectory() as out_dir:
            status, table, progress = run_main(["--runs", "3", "--warmup", "0", "--out",
                                                out_dir], self.registry(2.5, 1.5))
            with open(os.path.join(out_dir, os.listdir(out_dir)[0].split(".")[0] + ".json"),
                      encoding="utf-8") as handle:
                document = json.load(handle)
        self.assertEqual(status, 0)
        rows = {row["name"]: row for row in document["scenarios"]}
        fast, slow = rows["fast"]["targets"], rows["slow"]["targets"]
        self.assertEqual([(t["what"], t["limit"], t["value"], t["status"]) for t in fast],
                         [("p50", 2.5, 2.0, "met")])
        self.assertEqual([(t["what"], t["status"], t["baseline"]) for t in slow],
                         [("ratio_p50", "MISSED", "base")])
        self.assertAlmostEqual(slow[0]["value"], 2.0)
        self.assertIsNone(rows["base"]["targets"])
        self.assertEqual(document["targets"]["met"], 1)
        self.assertEqual(document["targets"]["MISSED"], 1)
        self.assertEqual(document["targets"]["missed"], ["slow: ×p50 ≤ 1.50, got 2.00×"])
        self.assertIn("| p50 ≤ 2.5 ms: met |", table)
        self.assertIn("| ×p50 ≤ 1.50: MISSED (2.00×) |", table)
        summary = ("Targets (reported, not enforced): 1 met, 1 MISSED, 0 not evaluated. "
                   "MISSED: slow: ×p50 ≤ 1.50, got 2.00×.")
        self.assertIn(summary, table)
        self.assertIn(summary, progress)

    def test_p50_target_missed(self):
        status, table, _ = run_main(["--runs", "3", "--warmup", "0", "--no-write"],
                                    self.registry(1.0, 3.0))
        self.assertEqual(status, 0)
        self.assertIn("| p50 ≤ 1 ms: MISSED (2.00 ms) |", table)
        self.assertIn("| ×p50 ≤ 3.00: met |", table)

    def test_unevaluated_targets(self):
        results = [ScenarioResult(name="base", kind="command", status=SKIPPED, reason="absent"),
                   measured("fast", [1.0], "base", unit="kB")]
        registry = self.registry(1.0, 3.0)
        registry._scenarios["fast"] = fake("fast", baseline="base", target_p50_ms=1.0,
                                           target_ratio=2.0)
        report.attach_ratios(results)
        report.attach_targets(results, registry)
        targets = results[1].targets
        self.assertEqual([t["status"] for t in targets], ["n/a", "n/a"])
        self.assertEqual(targets[0]["note"], "a p50 target in ms, but the row is in kB")
        self.assertEqual(targets[1]["note"], "baseline base was skipped")

    def test_target_validation(self):
        with self.assertRaises(ValueError):
            command("x", ["true"], target_ratio=0)
        registry = Registry()
        registry.add(command("x", ["true"], baseline=None, target_ratio=1.5))
        with self.assertRaisesRegex(ValueError, "target_ratio needs a baseline"):
            registry.validate()
        with self.assertRaises(ValueError):
            command("x", ["true"], target_added_p50_ms=-1)
        registry = Registry()
        registry.add(command("x", ["true"], baseline=None, target_added_p50_ms=0.5))
        with self.assertRaisesRegex(ValueError, "target_added_p50_ms needs a baseline"):
            registry.validate()


class AddedLatencyTargetTest(unittest.TestCase):
    """target_added_p50_ms: p50 minus the baseline's p50, both from the same run."""

    def registry(self, limit):
        registry = Registry(reference="inner")
        registry.add(fake("inner", also=["outer:2"], produces=["outer"], baseline=None))
        registry.add(produced("outer", baseline="inner", target_added_p50_ms=limit))
        return registry

    def test_met_and_missed(self):
        # runs 3: inner samples 1, 2, 3 (p50 2.0); outer twice that (p50 4.0): adds 2.0 ms.
        status, table, progress = run_main(["--runs", "3", "--warmup", "0", "--no-write"],
                                           self.registry(2.5))
        self.assertEqual(status, 0)
        self.assertIn("| +p50 ≤ 2.5 ms: met |", table)
        status, table, progress = run_main(["--runs", "3", "--warmup", "0", "--no-write"],
                                           self.registry(0.5))
        self.assertEqual(status, 0)
        self.assertIn("| +p50 ≤ 0.5 ms: MISSED (+2.00 ms) |", table)
        self.assertIn("MISSED: outer: +p50 ≤ 0.5 ms, got +2.00 ms.", progress)

    def test_value_and_json(self):
        results = [measured("inner", [1.0, 2.0, 3.0]), measured("outer", [1.5, 2.25, 3.5], "inner")]
        registry = self.registry(0.5)
        report.attach_ratios(results)
        report.attach_targets(results, registry)
        [target] = results[1].targets
        self.assertEqual((target["what"], target["limit"], target["baseline"], target["status"]),
                         ("added_p50", 0.5, "inner", "met"))
        self.assertAlmostEqual(target["value"], 0.25)
        self.assertIn("+p50 ≤ 0.5 ms", registry.get("outer").targets_text())

    def test_not_evaluated_without_a_measured_baseline_or_in_other_units(self):
        registry = self.registry(0.5)
        skipped = [ScenarioResult(name="inner", kind="sampler", status=SKIPPED, reason="absent"),
                   measured("outer", [1.0], "inner")]
        report.attach_ratios(skipped)
        report.attach_targets(skipped, registry)
        self.assertEqual(skipped[1].targets[0]["status"], "n/a")
        self.assertEqual(skipped[1].targets[0]["note"], "baseline inner was skipped")
        memory = [measured("inner", [1.0], unit="kB"), measured("outer", [2.0], "inner", "kB")]
        report.attach_ratios(memory)
        report.attach_targets(memory, registry)
        self.assertEqual(memory[1].targets[0]["note"],
                         "an added-p50 target in ms, but the row is in kB")


class RunCountTest(unittest.TestCase):
    def test_min_runs_raises_the_count(self):
        registry = Registry()
        scenario = registry.add(fake("many", min_runs=6, baseline=None))
        with Fixtures() as fixtures:
            result = run_scenario(scenario, registry, fixtures, 2, 0)
        self.assertEqual(len(result.samples), 6)


if __name__ == "__main__":
    unittest.main()
