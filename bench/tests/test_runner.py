import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from harness import fixtures as fixtures_module  # noqa: E402
from harness.execute import FAILED, MEASURED, SKIPPED, run_scenario  # noqa: E402
from harness.fixtures import Fixtures  # noqa: E402
from harness.runner import main  # noqa: E402
from harness.scenario import Registry, command, needs_executable, needs_path, sampler  # noqa: E402

PY = sys.executable
FAKE_SAMPLER = os.path.join(BENCH, "tests", "fake_sampler.py")
MISSING = "plimsoll-bench-no-such-runtime"


def fake(name, mode, **fields):
    return sampler(name, [PY, FAKE_SAMPLER, "--mode", mode, "--scenario", "{scenario}",
                          "--runs", "{runs}"], **fields)


class ScenarioTestCase(unittest.TestCase):
    def setUp(self):
        self.fixtures = Fixtures()
        self.addCleanup(self.fixtures.close)

    def run_one(self, scenario, runs=4, warmup=1, registry=None):
        registry = registry or Registry()
        registry.add(scenario)
        return run_scenario(scenario, registry, self.fixtures, runs, warmup)


class SamplerKindTest(ScenarioTestCase):
    def test_samples_are_taken_from_the_matching_line(self):
        result = self.run_one(fake("engine-eval", "ok"), runs=5)
        self.assertEqual(result.status, MEASURED, result.reason)
        self.assertEqual(result.samples, [1.0, 2.0, 3.0, 4.0, 5.0])
        self.assertEqual(result.stats["n"], 5)
        self.assertAlmostEqual(result.stats["p50"], 3.0)

    def test_microseconds_are_converted_to_milliseconds(self):
        result = self.run_one(fake("engine-eval", "us"), runs=3)
        self.assertEqual(result.samples, [1.0, 2.0, 3.0])

    def test_runs_reach_the_sampler_through_the_environment(self):
        result = self.run_one(fake("engine-eval", "env"), runs=7)
        self.assertEqual(len(result.samples), 7)

    def test_sample_name_selects_another_line(self):
        result = self.run_one(sampler("other", [PY, FAKE_SAMPLER, "--scenario", "x", "--runs", "2"],
                                      sample_name="someone-else"))
        self.assertEqual(result.status, MEASURED)
        self.assertEqual(result.samples, [999.0])

    def test_skipped_line(self):
        result = self.run_one(fake("engine-eval", "skip"))
        self.assertEqual((result.status, result.reason), (SKIPPED, "no engine built"))

    def test_error_line_fails(self):
        result = self.run_one(fake("engine-eval", "error"))
        self.assertEqual((result.status, result.reason), (FAILED, "engine crashed on run 2"))

    def test_non_zero_exit_fails_even_with_samples(self):
        result = self.run_one(fake("engine-eval", "crash"))
        self.assertEqual(result.status, FAILED)
        self.assertIn("exited with status 3", result.reason)
        self.assertIn("boom", result.reason)

    def test_no_line_fails(self):
        result = self.run_one(fake("engine-eval", "none"))
        self.assertEqual(result.status, FAILED)
        self.assertIn("no JSON line", result.reason)

    def test_negative_sample_fails(self):
        self.assertEqual(self.run_one(fake("engine-eval", "garbage")).status, FAILED)

    def test_missing_sampler_binary_fails(self):
        result = self.run_one(sampler("engine-eval", ["/nonexistent/plimsoll-bench-sampler"]))
        self.assertEqual(result.status, FAILED)


class CommandKindTest(ScenarioTestCase):
    def test_measures_each_run(self):
        result = self.run_one(command("py", [PY, "-c", "pass"]), runs=3, warmup=2)
        self.assertEqual(result.status, MEASURED, result.reason)
        self.assertEqual(len(result.samples), 3)
        self.assertTrue(all(sample > 0 for sample in result.samples))

    def test_non_zero_exit_fails(self):
        script = "import sys; sys.stderr.write('bad'); sys.exit(3)"
        result = self.run_one(command("py", [PY, "-c", script]))
        self.assertEqual(result.status, FAILED)
        self.assertIn("exit status 3", result.reason)
        self.assertIn("bad", result.reason)

    def test_failure_after_a_good_trial_is_a_failure(self):
        counter = os.path.join(self.fixtures.workdir, "count")
        script = ("import os, sys; p = sys.argv[1]; n = len(open(p).read()) if os.path.exists(p)"
                  " else 0; open(p, 'a').write('x'); sys.exit(1 if n >= 2 else 0)")
        result = self.run_one(command("flaky", [PY, "-c", script, counter], trial_skips=True))
        # The trial and the warm-up pass, the first timed run fails.
        self.assertEqual(result.status, FAILED)
        self.assertEqual(result.reason, "run 1 of 4 failed: exit status 1")

    def test_missing_runtime_is_skipped_by_probe(self):
        scenario = command("ghost", [MISSING, "run"], probes=[needs_executable(MISSING)])
        result = self.run_one(scenario)
        self.assertEqual(result.status, SKIPPED)
        self.assertEqual(result.reason, f"{MISSING} is not installed (not found on PATH)")

    def test_failing_trial_skips(self):
        result = self.run_one(command("ghost", [PY, "-c", "raise SystemExit(4)"], trial_skips=True))
        self.assertEqual(result.status, SKIPPED)
        self.assertIn("trial run failed: exit status 4", result.reason)

    def test_missing_path_probe(self):
        scenario = command("built", ["{repo}/build/nope"], probes=[needs_path("{repo}/build/nope")])
        result = self.run_one(scenario)
        self.assertEqual(result.status, SKIPPED)
        self.assertIn("build/nope does not exist", result.reason)

    def test_ids_are_unique_and_cleanup_runs_after_each_invocation(self):
        log = os.path.join(self.fixtures.workdir, "log")
        append = "import sys; open(sys.argv[1], 'a').write(sys.argv[2] + ' ' + sys.argv[3] + '\\n')"
        scenario = command("ids", [PY, "-c", append, log, "run", "{id}"],
                           cleanup=[PY, "-c", append, log, "delete", "{id}"], trial_skips=True)
        result = self.run_one(scenario, runs=3, warmup=2)
        self.assertEqual(result.status, MEASURED, result.reason)
        with open(log, encoding="utf-8") as handle:
            entries = [line.split() for line in handle.read().splitlines()]
        self.assertEqual(len(entries), 2 * (1 + 2 + 3))
        runs = [ident for verb, ident in entries if verb == "run"]
        self.assertEqual(len(set(runs)), 6)
        self.assertEqual(entries[0::2], [["run", i] for i in runs])
        self.assertEqual(entries[1::2], [["delete", i] for i in runs])

    def test_timeout_fails(self):
        scenario = command("slow", [PY, "-c", "import time; time.sleep(5)"], timeout_s=0.3)
        result = self.run_one(scenario, runs=1, warmup=0)
        self.assertEqual(result.status, FAILED)
        self.assertIn("timed out", result.reason)

    def test_wrapper_runs_the_loop_inside_it(self):
        check = "import os, sys; sys.exit(0 if os.environ.get('PLB_WRAPPED') == '1' else 5)"
        scenario = command("wrapped", [PY, "-c", check], wrapper=["env", "PLB_WRAPPED=1"])
        result = self.run_one(scenario, runs=3, warmup=1)
        self.assertEqual(result.status, MEASURED, result.reason)
        self.assertEqual(len(result.samples), 3)
        self.assertEqual(self.run_one(command("bare", [PY, "-c", check])).status, FAILED)

    def test_wrapper_that_cannot_start_skips_a_baseline(self):
        scenario = command("wrapped", [PY, "-c", "pass"],
                           wrapper=["sh", "-c", "echo nope >&2; exit 9"], trial_skips=True)
        result = self.run_one(scenario)
        self.assertEqual(result.status, SKIPPED)
        self.assertIn("wrapper exited with status 9", result.reason)
        self.assertIn("nope", result.reason)

    def test_max_runs_caps_runs(self):
        result = self.run_one(command("capped", [PY, "-c", "pass"], max_runs=2), runs=10, warmup=0)
        self.assertEqual(len(result.samples), 2)


class FixturesTest(unittest.TestCase):
    def test_oci_config(self):
        config = fixtures_module.oci_config("/r", ["/bin/true"])
        self.assertEqual(config["root"], {"path": "/r", "readonly": True})
        self.assertEqual(config["process"]["args"], ["/bin/true"])
        self.assertFalse(config["process"]["terminal"])
        kinds = {ns["type"] for ns in config["linux"]["namespaces"]}
        self.assertEqual(kinds, {"pid", "network", "ipc", "uts", "mount"})

    def test_minimal_rootfs_and_bundle(self):
        with Fixtures() as fixtures:
            rootfs = fixtures.format("{rootfs}")
            self.assertTrue(os.access(os.path.join(rootfs, "bin", "true"), os.X_OK))
            for path in fixtures_module.shared_objects("/bin/true"):
                self.assertTrue(os.path.isfile(os.path.join(rootfs, path.lstrip("/"))), path)
            config = os.path.join(fixtures.format("{bundle}"), "config.json")
            with open(config, encoding="utf-8") as handle:
                self.assertEqual(json.load(handle)["root"]["path"], rootfs)
            workdir = fixtures.workdir
        self.assertFalse(os.path.exists(workdir))


class RegistryTest(unittest.TestCase):
    def test_unknown_baseline_is_rejected(self):
        registry = Registry(reference="base")
        registry.add(command("base", ["true"]))
        registry.add(command("box", ["true"], baseline="nope"))
        with self.assertRaises(ValueError):
            registry.validate()

    def test_select_adds_baselines(self):
        registry = Registry(reference="base")
        for name in ("base", "alt", "box", "other"):
            registry.add(command(name, ["true"], baseline="alt" if name == "box" else "@reference"))
        self.assertEqual([s.name for s in registry.select("^box$")], ["alt", "box"])
        self.assertEqual([s.name for s in registry.select("oth")], ["base", "other"])
        self.assertIsNone(registry.baseline_of(registry.get("base")))

    def test_bad_names_and_duplicates(self):
        with self.assertRaises(ValueError):
            command("has space", ["true"])
        registry = Registry()
        registry.add(command("a", ["true"]))
        with self.assertRaises(ValueError):
            registry.add(command("a", ["true"]))


class MainTest(unittest.TestCase):
    def registry(self, *extra):
        registry = Registry(reference="base")
        registry.add(command("base", [PY, "-c", "pass"]))
        registry.add(fake("engine-eval", "ok"))
        registry.add(command("ghost", [MISSING, "run", "{bundle}"],
                             probes=[needs_executable(MISSING)]))
        for scenario in extra:
            registry.add(scenario)
        return registry

    def run_main(self, args, registry):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(args, registry=registry)
        return status, out.getvalue(), err.getvalue()

    def test_end_to_end(self):
        with tempfile.TemporaryDirectory() as out_dir:
            status, table, progress = self.run_main(
                ["--runs", "3", "--warmup", "1", "--out", out_dir], self.registry())
            self.assertEqual(status, 0, progress)
            names = sorted(os.listdir(out_dir))
            self.assertEqual(len(names), 2)
            self.assertRegex(names[0], r"^\d{4}-\d{2}-\d{2}\.json$")
            with open(os.path.join(out_dir, names[0]), encoding="utf-8") as handle:
                document = json.load(handle)
            with open(os.path.join(out_dir, names[1]), encoding="utf-8") as handle:
                self.assertEqual(handle.read(), table)
        self.assertIn(f"| `ghost` | skipped: {MISSING} is not installed (not found on PATH) |",
                      table)
        self.assertIn("| `base` | measured | 3 |", table)
        rows = {row["name"]: row for row in document["scenarios"]}
        self.assertEqual(rows["ghost"]["status"], "skipped")
        self.assertEqual(rows["engine-eval"]["samples"], [1.0, 2.0, 3.0])
        self.assertEqual(rows["engine-eval"]["baseline"], "base")
        self.assertIsNotNone(rows["engine-eval"]["ratios"]["p50"])
        self.assertEqual(document["options"]["runs"], 3)

    def test_failure_sets_exit_status_and_only_filters(self):
        broken = command("broken", [PY, "-c", "raise SystemExit(2)"])
        with tempfile.TemporaryDirectory() as out_dir:
            args = ["--quick", "--only", "^broken$", "--out", out_dir, "--stamp"]
            status, table, _ = self.run_main(args, self.registry(broken))
            self.assertRegex(sorted(os.listdir(out_dir))[0], r"^\d{4}-\d{2}-\d{2}T\d{6}Z\.json$")
        self.assertEqual(status, 1)
        self.assertIn("| `broken` | failed: warm-up run 1 failed: exit status 2 |", table)
        self.assertIn("`base`", table)
        self.assertNotIn("`ghost`", table)

    def test_plimsoll_bin_reaches_templates(self):
        with tempfile.TemporaryDirectory() as bin_dir:
            probe = needs_path("{plimsoll_bin}/plimsoll")
            registry = self.registry(command("own", ["{plimsoll_bin}/plimsoll"], probes=[probe]))
            status, table, _ = self.run_main(["--quick", "--no-write", "--only", "^own$",
                                              "--plimsoll-bin", bin_dir], registry)
        self.assertEqual(status, 0)
        self.assertIn(f"| `own` | skipped: {bin_dir}/plimsoll does not exist |", table)

    def test_default_registry_loads(self):
        status, listing, _ = self.run_main(["--list"], None)
        self.assertEqual(status, 0)
        for name in ("unshare", "bwrap", "runc", "crun", "runsc"):
            self.assertIn(name, listing)


if __name__ == "__main__":
    unittest.main()
