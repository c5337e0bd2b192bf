import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import report, stats  # noqa: E402
from harness.execute import FAILED, MEASURED, SKIPPED, ScenarioResult  # noqa: E402

HOST = {"hostname": "test", "kernel": "6.1", "machine": "x86_64", "cpus": 2, "python": "3.11",
        "uid": 0, "cgroups": "v1"}


def measured(name, samples, baseline=None):
    return ScenarioResult(name=name, kind="command", status=MEASURED, baseline=baseline,
                          samples=samples, stats=stats.summarize(samples),
                          description=f"{name} does a thing")


class AttachRatiosTest(unittest.TestCase):
    def test_ratio_against_measured_baseline(self):
        results = [measured("base", [2.0, 2.0, 2.0]), measured("box", [6.0, 6.0, 6.0], "base")]
        report.attach_ratios(results)
        self.assertIsNone(results[0].ratios)
        self.assertAlmostEqual(results[1].ratios["p50"], 3.0)
        self.assertAlmostEqual(results[1].ratios["p99"], 3.0)

    def test_skipped_baseline_gives_a_note_not_a_ratio(self):
        base = ScenarioResult(name="base", kind="command", status=SKIPPED, reason="not installed")
        box = measured("box", [1.0], "base")
        report.attach_ratios([base, box])
        self.assertIsNone(box.ratios)
        self.assertEqual(box.ratio_note, "baseline base was skipped")

    def test_baseline_not_run(self):
        box = measured("box", [1.0], "elsewhere")
        report.attach_ratios([box])
        self.assertEqual(box.ratio_note, "baseline elsewhere was not run")


class WriteResultsTest(unittest.TestCase):
    def make_document(self):
        results = [
            measured("base", [1.0, 2.0, 3.0]),
            measured("box", [10.0, 20.0, 30.0], "base"),
            ScenarioResult(name="gone", kind="command", status=SKIPPED, baseline="base",
                           reason="gone is not installed (a|b)"),
            ScenarioResult(name="broken", kind="sampler", status=FAILED, baseline="base",
                           reason="run 2 of 3 failed: exit status 1"),
        ]
        report.attach_ratios(results)
        return report.build_document(results, "base", {"runs": 3, "warmup": 1, "only": None},
                                     "2026-11-29T10:00:00+00:00", "2026-11-29T10:01:00+00:00",
                                     host=HOST)

    def test_samples_stay_on_one_line_and_the_file_round_trips(self):
        document = self.make_document()
        document["scenarios"][1]["samples"] = [float(i) for i in range(5000)]
        with tempfile.TemporaryDirectory() as out:
            json_path, _ = report.write_results(document, out, "2026-11-29")
            with open(json_path, encoding="utf-8") as handle:
                text = handle.read()
        self.assertEqual(json.loads(text), json.loads(json.dumps(document)))
        self.assertLess(len(text.splitlines()), 200)
        self.assertNotIn("@@samples", text)

    def test_json_round_trip(self):
        document = self.make_document()
        with tempfile.TemporaryDirectory() as out:
            json_path, md_path = report.write_results(document, out, "2026-11-29")
            self.assertEqual(os.path.basename(json_path), "2026-11-29.json")
            self.assertEqual(os.path.basename(md_path), "2026-11-29.md")
            with open(json_path, encoding="utf-8") as handle:
                loaded = json.load(handle)
            self.assertEqual(sorted(os.listdir(out)), ["2026-11-29.json", "2026-11-29.md"])
        self.assertEqual(loaded["schema"], report.SCHEMA)
        self.assertEqual(loaded["reference"], "base")
        self.assertEqual(loaded["counts"], {"measured": 2, "skipped": 1, "failed": 1})
        box = loaded["scenarios"][1]
        self.assertEqual(box["samples"], [10.0, 20.0, 30.0])
        self.assertAlmostEqual(box["stats"]["p50"], 20.0)
        self.assertAlmostEqual(box["ratios"]["p50"], 10.0)
        self.assertEqual(loaded["scenarios"][2]["status"], "skipped")
        self.assertIsNone(loaded["scenarios"][2]["stats"])

    def test_markdown_table(self):
        table = report.markdown_table(self.make_document())
        lines = table.splitlines()
        header = next(i for i, line in enumerate(lines) if line.startswith("| scenario |"))
        rows = lines[header + 2:header + 6]
        self.assertEqual(len(rows), 4)
        self.assertTrue(rows[0].startswith("| `base` | measured | 3 | ms | 2.00 |"), rows[0])
        self.assertIn("| base | 10.00× |", rows[1])
        self.assertIn("skipped: gone is not installed (a\\|b)", rows[2])
        self.assertIn("failed: run 2 of 3 failed: exit status 1", rows[3])
        for row in rows:   # same column count everywhere (escaped pipes do not count)
            self.assertEqual(row.replace("\\|", "").count("|"), lines[header].count("|"))
        self.assertIn("- `box`: box does a thing", table)

    def test_number_formatting(self):
        self.assertEqual(report._number(0.66712), "0.667")
        self.assertEqual(report._number(38.816), "38.82")
        self.assertEqual(report._number(171.26), "171.3")
        self.assertEqual(report._number(None), "—")
        self.assertEqual(report._number(0.00042), "0.00042")
        self.assertEqual(report._number(0.0), "0.000")


if __name__ == "__main__":
    unittest.main()
