"""The JavaScript rows' machinery: stdin files for commands, sampler summary records, the guest
image fixtures and the plimsoll-linux-latency adapter."""

import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import unittest
from unittest import mock

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "adapters"))

import linux_latency  # noqa: E402
from harness import fixtures as fixtures_module, report, stats  # noqa: E402
from harness.execute import FAILED, MEASURED, SKIPPED, interpret_record, run_scenario  # noqa: E402
from harness.fixtures import FixtureError, Fixtures  # noqa: E402
from harness.runner import load_registry, main  # noqa: E402
from harness.scenario import Registry, command, needs_path, produced, sampler  # noqa: E402

PY = sys.executable
# Exits 0 only if its stdin is exactly "console.log(6*7)\n".
CHECK_STDIN = "import sys; sys.exit(0 if sys.stdin.read() == 'console.log(6*7)\\n' else 7)"


def run_one(fixtures, scenario, runs=3, warmup=1, registry=None):
    registry = registry or Registry()
    registry.add(scenario)
    return run_scenario(scenario, registry, fixtures, runs, warmup)


def write_executable(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class StdinTest(unittest.TestCase):
    def setUp(self):
        self.fixtures = Fixtures()
        self.addCleanup(self.fixtures.close)

    def test_every_invocation_reads_the_file_from_the_start(self):
        scenario = command("reader", [PY, "-c", CHECK_STDIN], stdin="{qjs_script}",
                           trial_skips=True)
        result = run_one(self.fixtures, scenario, runs=3, warmup=2)
        self.assertEqual(result.status, MEASURED, result.reason)
        self.assertEqual(len(result.samples), 3)
        self.assertEqual(result.stdin, self.fixtures.format("{qjs_script}"))

    def test_without_stdin_the_command_reads_dev_null(self):
        result = run_one(self.fixtures, command("reader", [PY, "-c", CHECK_STDIN]))
        self.assertEqual(result.status, FAILED)
        self.assertIn("exit status 7", result.reason)

    def test_stdin_reaches_a_wrapped_loop(self):
        scenario = command("reader", [PY, "-c", CHECK_STDIN], stdin="{qjs_script}",
                           wrapper=["env", "PLB_WRAPPED=1"])
        result = run_one(self.fixtures, scenario)
        self.assertEqual(result.status, MEASURED, result.reason)

    def test_missing_stdin_file_fails(self):
        scenario = command("reader", [PY, "-c", "pass"], stdin="{workdir}/missing.js")
        result = run_one(self.fixtures, scenario)
        self.assertEqual(result.status, FAILED)
        self.assertIn("cannot open stdin file", result.reason)

    def test_only_commands_take_stdin(self):
        with self.assertRaises(ValueError):
            sampler("s", ["x"], stdin="/dev/null")


class SummaryRecordTest(unittest.TestCase):
    def test_summary_becomes_stats_without_samples(self):
        outcome = interpret_record({"scenario": "x", "unit": "us",
                                    "summary": {"n": 101, "p50": 2000, "p95": 3000,
                                                "p99": 4000, "min": 1000}})
        self.assertEqual(outcome.status, MEASURED)
        self.assertEqual(outcome.samples, [])
        self.assertEqual(outcome.unit, "ms")
        self.assertEqual(outcome.summary["n"], 101)
        self.assertAlmostEqual(outcome.summary["p50"], 2.0)
        self.assertAlmostEqual(outcome.summary["min"], 1.0)
        self.assertIsNone(outcome.summary["mean"])
        self.assertIsNone(outcome.summary["max"])

    def test_bad_summaries_fail(self):
        for summary in ({"p50": 1.0}, {"n": 0, "p50": 1.0}, {"n": 3}, {"n": 3, "p50": -1.0},
                        {"n": 3, "p50": 1.0, "p95": "x"}, [1, 2]):
            outcome = interpret_record({"scenario": "x", "summary": summary})
            self.assertEqual(outcome.status, FAILED, summary)

    def test_ratios_skip_statistics_a_side_lacks(self):
        row = {"n": 5, "mean": None, "stdev": None, "min": 1.0, "p50": 4.0, "p95": 6.0,
               "p99": 8.0, "max": None}
        base = stats.summarize([1.0, 2.0, 3.0])
        ratios = stats.ratios(row, base)
        self.assertAlmostEqual(ratios["p50"], 2.0)
        self.assertIsNone(ratios["mean"])

    def test_summary_row_end_to_end(self):
        line = json.dumps({"scenario": "tool", "unit": "ms",
                           "summary": {"n": 101, "p50": 6.0, "p95": 9.0, "p99": 9.5,
                                       "min": 1.0}})
        registry = Registry(reference="base")
        registry.add(sampler("base", [PY, "-c", "import json; print(json.dumps("
                                      "{{'scenario': 'base', 'samples': [2.0, 3.0, 4.0]}}))"]))
        escaped = line.replace("{", "{{").replace("}", "}}")   # argv templates are formatted
        registry.add(sampler("tool", [PY, "-c", f"print({escaped!r})"], target_p50_ms=10.0,
                             target_ratio=1.5, produces=["tool.again"]))
        registry.add(produced("tool.again", sample_name="tool", baseline=None))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["--runs", "3", "--warmup", "0", "--no-write"], registry=registry)
        table = out.getvalue()
        self.assertEqual(status, 0, err.getvalue())
        self.assertIn("| `tool` | measured | 101 | ms | 6.00 | 9.00 | 9.50 | — | 1.00 | — | base "
                      "| 2.00× |", table)
        self.assertIn("p50 ≤ 10 ms: met; ×p50 ≤ 1.50: MISSED (2.00×)", table)
        self.assertIn("| `tool.again` | measured | 101 |", table)


class ImageFixturesTest(unittest.TestCase):
    def setUp(self):
        self.temporary = tempfile.TemporaryDirectory()
        self.addCleanup(self.temporary.cleanup)
        self.build = self.temporary.name
        os.makedirs(os.path.join(self.build, "bin"))
        self.rootfs = os.path.join(self.build, "image", "rootfs")
        patcher = mock.patch.dict(os.environ)
        patcher.start()
        self.addCleanup(patcher.stop)
        os.environ.pop("PLIMSOLL_IMAGE", None)

    def fixtures(self):
        fixtures = Fixtures(values={"plimsoll_bin": os.path.join(self.build, "bin")})
        self.addCleanup(fixtures.close)
        return fixtures

    def test_image_next_to_plimsoll_bin(self):
        os.makedirs(self.rootfs)
        fixtures = self.fixtures()
        self.assertEqual(fixtures.format("{image_rootfs}"), self.rootfs)
        self.assertEqual(fixtures.format("{image}"), os.path.dirname(self.rootfs))

    def test_plimsoll_image_wins(self):
        other = os.path.join(self.build, "other")
        os.makedirs(os.path.join(other, "rootfs"))
        os.environ["PLIMSOLL_IMAGE"] = other
        self.assertEqual(self.fixtures().format("{image_rootfs}"),
                         os.path.join(other, "rootfs"))

    def test_missing_image_skips_with_a_reason(self):
        fixtures = self.fixtures()
        with self.assertRaises(FixtureError) as raised:
            fixtures.format("{image_rootfs}")
        self.assertIn("no guest image at", str(raised.exception))
        self.assertIn("guest_image", str(raised.exception))
        result = run_one(fixtures, command("js", ["{image_rootfs}/usr/local/bin/qjs"],
                                           probes=[needs_path("{image_rootfs}/usr/local/bin/qjs")]))
        self.assertEqual(result.status, SKIPPED)
        self.assertIn("fixture unavailable: no guest image at", result.reason)

    def test_script_and_bundle(self):
        os.makedirs(self.rootfs)
        fixtures = self.fixtures()
        with open(fixtures.format("{qjs_script}"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), fixtures_module.JS_SNIPPET + "\n")
        with open(os.path.join(fixtures.format("{qjs_bundle}"), "config.json"),
                  encoding="utf-8") as handle:
            config = json.load(handle)
        self.assertEqual(config["root"], {"path": self.rootfs, "readonly": True})
        self.assertEqual(config["process"]["args"], ["/usr/local/bin/qjs", "-"])


class LinuxLatencyAdapterTest(unittest.TestCase):
    def setUp(self):
        self.temporary = tempfile.TemporaryDirectory()
        self.addCleanup(self.temporary.cleanup)

    def tool(self, body):
        return write_executable(os.path.join(self.temporary.name, "tool"),
                                f"#!{PY}\nimport json, os, sys\n{body}\n")

    def adapt(self, tool, runs=5):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = linux_latency.main(["--tool", tool, "--scenario", "linux.js", "--runs",
                                         str(runs), "--warmup", "2", "--image", "/img"])
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual(len(lines), 1)
        return status, lines[0]

    def test_exact_run_counts(self):
        self.assertEqual([linux_latency.exact_run_count(n) for n in (1, 100, 101, 102, 250)],
                         [101, 101, 101, 201, 301])

    def test_summary_line_becomes_a_summary_record(self):
        tool = self.tool("assert os.environ['PLIMSOLL_IMAGE'] == '/img'\n"
                         "assert sys.argv[2] == 'console.log(6*7)'\n"
                         "print(f'runs {sys.argv[1]}  p50 11.98 ms  p95 28.08 ms  p99 31.73 ms  "
                         "min 4.95 ms')")
        status, record = self.adapt(tool, runs=150)
        self.assertEqual(status, 0)
        self.assertEqual(record, {"scenario": "linux.js", "unit": "ms",
                                  "summary": {"n": 201, "min": 4.95, "p50": 11.98, "p95": 28.08,
                                              "p99": 31.73}})
        self.assertEqual(interpret_record(record).status, MEASURED)

    def test_the_tools_own_sampler_line_is_passed_through(self):
        tool = self.tool("print('noise'); print(json.dumps({'scenario': 'linux.js', "
                         "'samples': [1.0, 2.0]}))")
        status, record = self.adapt(tool)
        self.assertEqual((status, record["samples"]), (0, [1.0, 2.0]))

    def test_tool_failure_is_an_error_record(self):
        status, record = self.adapt(self.tool("sys.stderr.write('no image'); sys.exit(2)"))
        self.assertEqual(status, 0)
        self.assertIn("exited with status 2", record["error"])
        self.assertIn("no image", record["error"])

    def test_unexpected_output_is_an_error_record(self):
        _, record = self.adapt(self.tool("print('hello')"))
        self.assertIn("no summary line", record["error"])
        _, record = self.adapt(self.tool("print('runs 3  p50 1 ms  p95 2 ms  p99 3 ms  min 1 ms')"))
        self.assertIn("asked for 101 runs", record["error"])


class DefaultRegistryTest(unittest.TestCase):
    def test_js_rows_and_their_baselines(self):
        registry = load_registry(os.path.join(BENCH, "scenarios.py"))
        registry.validate()
        names = [s.name for s in registry.select("^linux")]
        # The linux row right after its own baseline and bwrap-qjs; runc-qjs after it
        # (scenarios.py says why); the container tier's other peers (issue 23) come along.
        self.assertEqual(names, ["unshare", "unshare-qjs", "bwrap-qjs", "linux.js_console_log",
                                 "runc-qjs", "linux.js_console_log.vs_runc",
                                 "runc-qjs-equivalent", "crun-qjs-equivalent",
                                 "chroot-python-data-stack", "linux.py_data_stack"])
        # The data stack row (issue 18) against the same code unsandboxed on the same tree.
        data = registry.get("linux.py_data_stack")
        self.assertEqual((registry.baseline_of(data), data.max_runs),
                         ("chroot-python-data-stack", 20))
        self.assertIn("PLIMSOLL_IMAGE={data_image}", data.argv)
        row = registry.get("linux.js_console_log")
        self.assertEqual((row.target_p50_ms, row.target_ratio, registry.baseline_of(row)),
                         (2.0, 1.0, "unshare-qjs"))
        versus = registry.get("linux.js_console_log.vs_runc")
        self.assertEqual((versus.target_ratio, registry.baseline_of(versus)), (0.5, "runc-qjs"))
        self.assertEqual(registry.get("unshare-qjs").stdin, "{qjs_script}")
        self.assertEqual(registry.get("runc-qjs").stdin, "{qjs_script}")

    def test_session_rows_compare_with_their_providers_one_shot_runs(self):
        # Issue 15: each cell row against the same provider's one-shot run, with its target.
        registry = load_registry(os.path.join(BENCH, "scenarios.py"))
        registry.validate()
        expected = {
            "sessions.embedded_cell": ("sessions.embedded_run", 0.3, None),
            "sessions.linux.js_cell": ("sessions.linux.js_run", 1.5, None),
            "sessions.linux.py_cell": ("sessions.linux.py_run", 2.0, None),
            "sessions.linux.open": ("sessions.linux.js_run", None, 1.0),
            "sessions.oci.runc.js_cell": ("oci.runc.js_console_log.pool", 3.0, None),
            "sessions.oci.crun.js_cell": ("oci.crun.js_console_log.pool", None, None),
            "sessions.oci.runsc.js_cell": ("oci.runsc.js_console_log.pool", 10.0, None),
            "sessions.microvm.js_cell": ("microvm.js_console_log.pool", 60.0, None),
        }
        for name, (baseline, p50, ratio) in expected.items():
            row = registry.get(name)
            self.assertEqual((registry.baseline_of(row), row.target_p50_ms, row.target_ratio),
                             (baseline, p50, ratio), name)
        for name in expected:
            if name != "sessions.embedded_cell":
                self.assertIn("--mode", registry.get(name).argv, name)
        # Selecting the session rows brings their baselines along.
        selected = {s.name for s in registry.select(r"^sessions\.")}
        self.assertTrue({b for b, _, _ in expected.values()} <= selected, selected)


if __name__ == "__main__":
    unittest.main()
