"""Tiers and peers (issue 23): the best peer of a row's tier and the ratio to it, the peers'
selection, the peer target, the npm installer of the process-tier peer and its sampler."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "tests"))

from harness import npm_peer, peers, report, stats  # noqa: E402
from harness.execute import FAILED, MEASURED, SKIPPED, ScenarioResult, run_scenario  # noqa: E402
from harness.fixtures import FixtureError, Fixtures  # noqa: E402
from harness.runner import load_registry  # noqa: E402
from harness.scenario import Registry, command, sampler  # noqa: E402
from test_units_targets import FAKE_SAMPLER, PY, fake, run_main  # noqa: E402

PEER_DIR = os.path.join(BENCH, "peers", "quickjs-emscripten")


def row(name, samples=None, tier=None, peer=False, status=MEASURED, unit="ms", reason=None):
    return ScenarioResult(name=name, kind="sampler", status=status, tier=tier, peer=peer,
                          unit=unit, reason=reason, samples=samples or [],
                          stats=stats.summarize(samples) if samples else None)


def wp(result):
    result.whole_process = True
    return result


class ScenarioFieldsTest(unittest.TestCase):
    def test_a_peer_needs_a_tier(self):
        with self.assertRaises(ValueError):
            command("p", ["true"], peer=True)
        with self.assertRaises(ValueError):
            command("p", ["true"], whole_process=True)

    def test_tier_is_a_known_tier_or_a_template(self):
        with self.assertRaises(ValueError):
            command("p", ["true"], tier="hypervisor")
        self.assertEqual(command("p", ["true"], tier="{microvm_tier}").tier, "{microvm_tier}")

    def test_peer_target_needs_a_tier_and_is_not_for_peers(self):
        with self.assertRaises(ValueError):
            command("p", ["true"], target_peer_ratio=0.2)
        with self.assertRaises(ValueError):
            command("p", ["true"], tier="process", peer=True, target_peer_ratio=0.2)
        self.assertIn("×peer p50 ≤ 0.20", command("p", ["true"], tier="process",
                                                 target_peer_ratio=0.2).targets_text())

    def test_selection_pulls_in_the_peers_of_the_selected_tiers(self):
        registry = Registry()
        registry.add(command("peer-a", ["true"], tier="container", peer=True, baseline=None))
        registry.add(command("peer-b", ["true"], tier="process", peer=True, baseline=None))
        registry.add(command("peer-vm", ["true"], tier="{microvm_tier}", peer=True,
                             baseline=None))
        registry.add(command("ours", ["true"], tier="container", baseline=None))
        registry.add(command("peer-cli", ["true"], tier="container", peer=True,
                             whole_process=True, baseline=None))
        registry.add(command("other", ["true"], baseline=None))
        self.assertEqual([s.name for s in registry.select("^ours$")], ["peer-a", "ours"])
        self.assertEqual([s.name for s in registry.select("^other$")], ["other"])
        self.assertEqual([s.name for s in registry.select("^peer-b$")], ["peer-b"])
        self.assertEqual([s.name for s in registry.peers("container")], ["peer-a", "peer-cli"])


class AttachPeersTest(unittest.TestCase):
    def test_ratio_to_the_lowest_p50_peer_of_the_tier(self):
        results = [row("unshare-qjs", [4.0, 5.0, 6.0], "container", True),
                   row("bwrap-qjs", [2.0, 3.0, 4.0], "container", True),
                   row("qjs-peer", [0.2], "process", True),
                   row("linux", [1.5, 1.5, 1.5], "container")]
        peers.attach_peers(results)
        linux = results[-1]
        self.assertEqual(linux.best_peer, "bwrap-qjs")
        self.assertAlmostEqual(linux.peer_ratios["p50"], 0.5)
        self.assertIsNone(linux.peer_note)
        for peer in results[:3]:   # peers are not compared with each other
            self.assertIsNone(peer.best_peer)
            self.assertIsNone(peer.peer_ratios)

    def test_no_peer_of_the_tier_in_the_run(self):
        results = [row("qjs-peer", [0.2], "process", True), row("runsc-pool", [9.0], "kernel")]
        peers.attach_peers(results)
        self.assertIsNone(results[1].best_peer)
        self.assertIsNone(results[1].peer_ratios)
        self.assertEqual(results[1].peer_note, "no kernel-tier peer in this run")

    def test_skipped_and_failed_peers_give_no_ratio_and_are_named(self):
        results = [row("qjs-peer", status=SKIPPED, tier="process", peer=True,
                       reason="fixture unavailable: npm ci failed"),
                   row("other-peer", status=FAILED, tier="process", peer=True, reason="boom"),
                   row("engine", [0.05], "process")]
        peers.attach_peers(results)
        engine = results[-1]
        self.assertIsNone(engine.best_peer)
        self.assertEqual(engine.peer_note, "no process-tier peer measured: qjs-peer skipped; "
                                           "other-peer failed")

    def test_a_skipped_peer_leaves_the_measured_one_best(self):
        results = [row("bwrap-qjs", status=SKIPPED, tier="container", peer=True),
                   row("unshare-qjs", [4.0], "container", True), row("linux", [2.0], "container")]
        peers.attach_peers(results)
        self.assertEqual(results[-1].best_peer, "unshare-qjs")
        self.assertAlmostEqual(results[-1].peer_ratios["p50"], 0.5)

    def test_whole_process_rows_meet_only_whole_process_peers(self):
        results = [row("lib", [0.2], "process", True),
                   wp(row("node-once", [200.0], "process", True)),
                   wp(row("cli", [10.0], "process")), row("engine", [0.1], "process")]
        peers.attach_peers(results)
        self.assertEqual((results[2].best_peer, results[3].best_peer), ("node-once", "lib"))
        self.assertAlmostEqual(results[2].peer_ratios["p50"], 0.05)
        self.assertAlmostEqual(results[3].peer_ratios["p50"], 0.5)
        summary = peers.peer_summary(results)
        self.assertEqual(summary["process (whole process)"]["best"], "node-once")
        self.assertEqual(summary["process"]["best"], "lib")

    def test_no_whole_process_peer(self):
        results = [row("lib", [0.2], "process", True), wp(row("cli", [10.0], "process"))]
        peers.attach_peers(results)
        self.assertIsNone(results[1].best_peer)
        self.assertEqual(results[1].peer_note, "no process-tier whole-process peer in this run")

    def test_a_peer_in_another_unit_is_not_compared(self):
        results = [row("mem-peer", [1000.0], "process", True, unit="kB"),
                   row("engine", [0.05], "process")]
        peers.attach_peers(results)
        self.assertIsNone(results[-1].best_peer)
        self.assertIn("mem-peer measured (kB, not ms)", results[-1].peer_note)

    def test_rows_without_a_tier_or_not_measured_are_left_alone(self):
        results = [row("peer", [1.0], "process", True), row("plain", [1.0]),
                   row("engine", status=SKIPPED, tier="process")]
        peers.attach_peers(results)
        for result in results[1:]:
            self.assertIsNone(result.best_peer)
            self.assertIsNone(result.peer_note)

    def test_summary_per_tier(self):
        results = [row("a", [3.0], "container", True), row("b", [2.0], "container", True),
                   row("c", status=SKIPPED, tier="container", peer=True, reason="no bwrap"),
                   row("q", [0.2], "process", True), row("ours", [1.0], "container")]
        summary = peers.peer_summary(results)
        self.assertEqual(set(summary), {"container", "process"})
        self.assertEqual((summary["container"]["best"], summary["container"]["best_p50"]),
                         ("b", 2.0))
        self.assertEqual([p["name"] for p in summary["container"]["peers"]], ["a", "b", "c"])
        self.assertEqual(summary["container"]["peers"][2]["reason"], "no bwrap")
        self.assertEqual(report.peer_summary_line(summary),
                         "Peers in this run (p50): process: best `q` 0.200 ms; container: best "
                         "`b` 2.00 ms (`a` 3.00 ms, `c` skipped).")


class PeerTargetTest(unittest.TestCase):
    def evaluate(self, results, scenario):
        registry = Registry()
        registry.add(scenario)
        peers.attach_peers(results)
        report.attach_targets(results, registry)
        return results[-1].targets[0]

    def test_met_and_missed(self):
        ours = sampler("engine", ["x"], tier="process", target_peer_ratio=0.2, baseline=None)
        target = self.evaluate([row("peer", [0.25], "process", True),
                                row("engine", [0.05], "process")], ours)
        self.assertEqual((target["status"], target["peer"]), (report.MET, "peer"))
        self.assertAlmostEqual(target["value"], 0.2)
        target = self.evaluate([row("peer", [0.2], "process", True),
                                row("engine", [0.4], "process")], ours)
        self.assertEqual(target["status"], report.MISSED)
        self.assertEqual(report._target_text(target), "×peer p50 ≤ 0.20: MISSED (2.00×)")

    def test_not_evaluated_without_a_peer(self):
        ours = sampler("engine", ["x"], tier="process", target_peer_ratio=0.2, baseline=None)
        target = self.evaluate([row("peer", status=SKIPPED, tier="process", peer=True),
                                row("engine", [0.05], "process")], ours)
        self.assertEqual(target["status"], report.NOT_EVALUATED)
        self.assertEqual(target["note"], "no process-tier peer measured: peer skipped")


class TierOfARunTest(unittest.TestCase):
    def test_facts_tier_overrides_the_declared_tier_of_plimsoll_rows(self):
        registry = Registry()
        scenario = registry.add(sampler(
            "vmrow", [PY, FAKE_SAMPLER, "--scenario", "{scenario}", "--fact", "tier=kernel"],
            tier="vm", baseline=None))
        with Fixtures() as fixtures:
            result = run_scenario(scenario, registry, fixtures, 3, 0)
        self.assertEqual((result.status, result.tier), (MEASURED, "kernel"), result.reason)

    def test_facts_do_not_move_a_peer_or_a_row_without_a_tier(self):
        registry = Registry()
        peer = registry.add(sampler(
            "peer", [PY, FAKE_SAMPLER, "--scenario", "{scenario}", "--fact", "tier=kernel"],
            tier="process", peer=True, baseline=None))
        plain = registry.add(sampler(
            "plain", [PY, FAKE_SAMPLER, "--scenario", "{scenario}", "--fact", "tier=kernel"],
            baseline=None))
        with Fixtures() as fixtures:
            self.assertEqual(run_scenario(peer, registry, fixtures, 3, 0).tier, "process")
            self.assertIsNone(run_scenario(plain, registry, fixtures, 3, 0).tier)

    def test_a_template_tier_is_formatted_and_kept_by_skipped_rows(self):
        registry = Registry()
        scenario = registry.add(command("boot", ["true"], tier="{microvm_tier}", peer=True,
                                        baseline=None, probes=[lambda _f: "no qemu here"]))
        with Fixtures() as fixtures:
            with mock.patch.dict(os.environ, {"SANDBOX_MICROVM_ACCEL": "kvm"}):
                result = run_scenario(scenario, registry, fixtures, 3, 0)
        self.assertEqual((result.status, result.tier, result.peer), (SKIPPED, "vm", True))
        with Fixtures() as fixtures:
            with mock.patch.dict(os.environ, {"SANDBOX_MICROVM_ACCEL": "tcg"}):
                self.assertEqual(run_scenario(scenario, registry, fixtures, 3, 0).tier, "kernel")
        with Fixtures() as fixtures:
            with mock.patch.dict(os.environ, {"SANDBOX_MICROVM_ACCEL": "auto"}):
                self.assertIsNone(run_scenario(scenario, registry, fixtures, 3, 0).tier)


class EndToEndTest(unittest.TestCase):
    def registry(self, peer_mode="ok"):
        registry = Registry()
        registry.add(fake("peer", mode=peer_mode, tier="process", peer=True, baseline=None))
        registry.add(fake("ours", tier="process", target_peer_ratio=0.2, baseline=None))
        registry.add(fake("kernel-row", tier="kernel", baseline=None))
        registry.add(fake("plain", baseline=None))
        return registry

    def test_table_and_json_carry_the_best_peer(self):
        with tempfile.TemporaryDirectory() as out:
            status, table, _ = run_main(["--runs", "3", "--warmup", "0", "--out", out],
                                        self.registry())
            self.assertEqual(status, 0)
            (name,) = [n for n in os.listdir(out) if n.endswith(".json")]
            with open(os.path.join(out, name), encoding="utf-8") as handle:
                document = json.load(handle)
        self.assertIn("| tier | best peer | ×peer | target |", table)
        lines = {line.split("|")[1].strip(): line for line in table.splitlines()
                 if line.startswith("| `")}
        self.assertIn("| process (peer) | — | — |", lines["`peer`"])
        self.assertIn("| process | `peer` | 1.00× | ×peer p50 ≤ 0.20: MISSED (1.00×) |",
                      lines["`ours`"])
        self.assertIn("| kernel | — (no kernel-tier peer in this run) | — |",
                      lines["`kernel-row`"])
        self.assertIn("| — | — | — | — |", lines["`plain`"])
        self.assertIn("Peers in this run (p50): process: best `peer` 2.00 ms.", table)
        rows = {r["name"]: r for r in document["scenarios"]}
        self.assertEqual((rows["ours"]["tier"], rows["ours"]["best_peer"]), ("process", "peer"))
        self.assertAlmostEqual(rows["ours"]["peer_ratios"]["p50"], 1.0)
        self.assertTrue(rows["peer"]["peer"])
        self.assertEqual(rows["kernel-row"]["peer_note"], "no kernel-tier peer in this run")
        self.assertEqual(document["peers"]["process"]["best"], "peer")
        self.assertIn("×peer p50 ≤ 0.20", document["targets"]["missed"][0])

    def test_a_skipped_peer_shows_a_dash_and_why(self):
        status, table, _ = run_main(["--runs", "3", "--warmup", "0", "--no-write"],
                                    self.registry(peer_mode="skip"))
        self.assertEqual(status, 0)   # a skipped peer is not a failure
        ours = [line for line in table.splitlines() if line.startswith("| `ours`")][0]
        self.assertIn("| process | — (no process-tier peer measured: peer skipped) | — |", ours)
        self.assertIn("×peer p50 ≤ 0.20: n/a", ours)


def write_fake_npm(directory, body):
    path = os.path.join(directory, "npm")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


# Acts like `npm ci`: logs its argv, then creates node_modules/quickjs-emscripten/package.json.
FAKE_NPM_CI = ('echo "$@" >> "$(dirname "$0")/calls"\n'
               'mkdir -p node_modules/quickjs-emscripten\n'
               'echo \'{"version": "0.32.0"}\' > node_modules/quickjs-emscripten/package.json\n')
CHECK = "node_modules/quickjs-emscripten/package.json"


class NpmInstallTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plimsoll-bench-npm-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.project = os.path.join(self.tmp, "project")
        os.makedirs(self.project)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(os.path.join(PEER_DIR, name), os.path.join(self.project, name))
        self.dest = os.path.join(self.tmp, "cache", "peer")
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)

    def calls(self):
        try:
            with open(os.path.join(self.bin, "calls"), encoding="utf-8") as handle:
                return handle.read().splitlines()
        except FileNotFoundError:
            return []

    def test_installs_once_per_lockfile(self):
        npm = write_fake_npm(self.bin, FAKE_NPM_CI)
        env = {k: v for k, v in os.environ.items() if k not in ("PLIMSOLL_CACHE",
                                                               "npm_config_cache")}
        with mock.patch.dict(os.environ, env, clear=True):
            self.assertEqual(npm_peer.install(self.project, self.dest, CHECK, npm=npm), self.dest)
            npm_peer.install(self.project, self.dest, CHECK, npm=npm)
        self.assertEqual(self.calls(), ["ci --ignore-scripts --no-audit --no-fund "
                                        "--loglevel=error"])
        self.assertTrue(os.path.exists(os.path.join(self.dest, "package-lock.json")))
        with open(os.path.join(self.project, "package-lock.json"), "a",
                  encoding="utf-8") as handle:
            handle.write("\n")   # a new lockfile: installed again
        npm_peer.install(self.project, self.dest, CHECK, npm=npm)
        self.assertEqual(len(self.calls()), 2)

    def test_npm_cache_under_plimsoll_cache(self):
        npm = write_fake_npm(self.bin, FAKE_NPM_CI)
        env = dict(os.environ, PLIMSOLL_CACHE=os.path.join(self.tmp, "pc"))
        env.pop("npm_config_cache", None)
        with mock.patch.dict(os.environ, env, clear=True):
            npm_peer.install(self.project, self.dest, CHECK, npm=npm)
            self.assertEqual(npm_peer.cache_root(), os.path.join(self.tmp, "pc", "bench-peers"))
        self.assertIn(f"--cache {self.tmp}/pc/npm", self.calls()[0])

    def test_a_failing_npm_ci_is_a_fixture_error(self):
        npm = write_fake_npm(self.bin, "echo 'npm ERR! network ENOTFOUND registry' >&2\n"
                                       "exit 1\n")
        with self.assertRaises(FixtureError) as caught:
            npm_peer.install(self.project, self.dest, CHECK, npm=npm)
        self.assertIn("is the npm registry reachable?", str(caught.exception))
        self.assertIn("ENOTFOUND", str(caught.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dest, npm_peer.STAMP)))

    def test_no_npm_is_a_fixture_error(self):
        with self.assertRaises(FixtureError) as caught:
            npm_peer.install(self.project, self.dest, CHECK, npm="plimsoll-no-such-npm")
        self.assertIn("not installed", str(caught.exception))

    def test_the_peer_row_is_skipped_when_the_install_fails(self):
        registry = Registry()
        scenario = registry.add(sampler(
            "qjs-peer", [PY, "-c", "print('{{}}')", "{quickjs_emscripten}"], baseline=None,
            tier="process", peer=True))
        with Fixtures() as fixtures:
            with mock.patch.object(npm_peer, "install",
                                   side_effect=FixtureError("npm ci failed (offline)")):
                result = run_scenario(scenario, registry, fixtures, 3, 0)
        self.assertEqual(result.status, SKIPPED)
        self.assertEqual(result.reason, "fixture unavailable: npm ci failed (offline)")


class SamplerScriptTest(unittest.TestCase):
    """bench/peers/quickjs-emscripten/sampler.js itself (needs node; the real run needs the peer
    installed in the bench's cache, as a bench run leaves it)."""

    def setUp(self):
        if shutil.which("node") is None:
            self.skipTest("node is not installed")

    def sample(self, modules, runs=3):
        out = subprocess.run(["node", os.path.join(PEER_DIR, "sampler.js"), "--modules", modules,
                              "--scenario", "qjs", "--runs", str(runs), "--warmup", "1"],
                             capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout.strip().splitlines()[-1])

    def test_without_the_library_it_fails(self):
        # The bench installs the library first (and skips the row when it cannot): one that
        # does not load afterwards is a failure, never a skip.
        with tempfile.TemporaryDirectory() as empty:
            out = subprocess.run(["node", os.path.join(PEER_DIR, "sampler.js"), "--modules",
                                  empty, "--scenario", "qjs"], capture_output=True, text=True,
                                 timeout=120, check=False)
        self.assertNotEqual(out.returncode, 0)
        record = json.loads(out.stdout.strip().splitlines()[-1])
        self.assertEqual(record["scenario"], "qjs")
        self.assertIn("cannot load from", record["error"])
        self.assertNotIn("skipped", record)

    def test_once_fails_without_the_library(self):
        with tempfile.TemporaryDirectory() as empty:
            out = subprocess.run(["node", os.path.join(PEER_DIR, "sampler.js"), "--modules",
                                  empty, "--once"], capture_output=True, text=True, timeout=120,
                                 check=False)
        self.assertNotEqual(out.returncode, 0)
        self.assertEqual(out.stdout, "")

    def test_once_prints_42(self):
        modules = os.path.join(npm_peer.cache_root(), "quickjs-emscripten")
        if not os.path.exists(os.path.join(modules, CHECK)):
            self.skipTest(f"the peer is not installed in {modules} (a bench run installs it)")
        out = subprocess.run(["node", os.path.join(PEER_DIR, "sampler.js"), "--modules",
                              modules, "--once"], capture_output=True, text=True, timeout=120,
                             check=False)
        self.assertEqual((out.returncode, out.stdout), (0, "42\n"), out.stderr)

    def test_a_real_run_prints_samples(self):
        modules = os.path.join(npm_peer.cache_root(), "quickjs-emscripten")
        if not os.path.exists(os.path.join(modules, CHECK)):
            self.skipTest(f"the peer is not installed in {modules} (a bench run installs it)")
        record = self.sample(modules, runs=5)
        self.assertEqual((record["unit"], len(record["samples"])), ("ms", 5))
        self.assertEqual(record["facts"]["tier"], "process")
        self.assertIn("quickjs-emscripten 0.32.0", record["facts"]["peer"])


class DefaultRegistryPeersTest(unittest.TestCase):
    def setUp(self):
        self.registry = load_registry(os.path.join(BENCH, "scenarios.py"))
        self.registry.validate()

    def test_peers_by_tier(self):
        peers = {}
        for scenario in self.registry.peers():
            peers.setdefault(scenario.tier, []).append(scenario.name)
        self.assertEqual(peers, {
            "process": ["quickjs-emscripten", "quickjs-emscripten.process"],
            "container": ["unshare-qjs", "bwrap-qjs", "runc-qjs", "runc-qjs-equivalent",
                          "crun-qjs-equivalent"],
            "kernel": ["runsc-qjs-equivalent"],
            "{microvm_tier}": ["qemu-microvm-boot"],
        })

    def test_bwrap_qjs_runs_the_same_qjs_with_unshare_qjs_namespaces(self):
        row = self.registry.get("bwrap-qjs")
        self.assertEqual((row.stdin, self.registry.baseline_of(row)),
                         ("{qjs_script}", "unshare-qjs"))
        self.assertEqual(list(row.argv[-3:]), ["--", "/usr/local/bin/qjs", "-"])
        for flag in ("--unshare-user", "--unshare-net", "--unshare-pid", "--unshare-ipc",
                     "--unshare-uts"):
            self.assertIn(flag, row.argv)
        self.assertNotIn("--unshare-all", row.argv)   # unshare-qjs has no cgroup namespace
        self.assertEqual(list(self.registry.get("bwrap").argv)[-1], "/bin/true")

    def test_issue_23_targets(self):
        get = self.registry.get
        engine = get("engine.instance_console_log")
        self.assertEqual((engine.tier, engine.target_p50_ms, engine.target_peer_ratio),
                         ("process", 0.05, 0.2))
        self.assertEqual(get("plimsoll-cli-embedded").target_p50_ms, 10.0)
        throughput = get("daemon.http_throughput")
        self.assertEqual(throughput.target_p50_ms, 0.1)   # ms per run: >= 10 000 runs/s
        self.assertEqual(throughput.argv[throughput.argv.index("--connections") + 1], "16")
        linux = get("linux.js_console_log")
        self.assertEqual((linux.tier, linux.target_p50_ms, linux.target_ratio,
                          self.registry.baseline_of(linux)), ("container", 2.0, 1.0, "unshare-qjs"))
        self.assertEqual(get("oci.runsc.js_console_log.pool").target_p50_ms, 5.0)
        for name in ("engine.instance_console_log", "plimsoll-cli-embedded",
                     "daemon.http_throughput", "linux.js_console_log",
                     "oci.runsc.js_console_log.pool"):
            self.assertIn("issue 23", get(name).description, name)

    def test_plimsoll_rows_with_a_tier(self):
        tiers = {s.name: s.tier for s in self.registry if s.tier and not s.peer}
        self.assertEqual(tiers["engine.instance_console_log"], "process")
        self.assertEqual(tiers["oci.runc.js_console_log.pool"], "container")
        self.assertEqual(tiers["oci.runsc.js_console_log.pool"], "kernel")
        self.assertEqual(tiers["microvm.js_console_log.pool"], "{microvm_tier}")

    def test_selecting_the_engine_brings_its_peer(self):
        names = [s.name for s in self.registry.select("^engine.instance_console_log$")]
        self.assertEqual(names, ["quickjs-emscripten", "engine.native_console_log",
                                 "engine.instance_console_log"])
        names = [s.name for s in self.registry.select("^plimsoll-cli-embedded$")]
        self.assertEqual(names, ["host-exec", "quickjs-emscripten.process",
                                 "plimsoll-cli-embedded"])

    def test_the_cli_is_compared_with_the_whole_process_peer(self):
        cli, peer = (self.registry.get(n) for n in ("plimsoll-cli-embedded",
                                                     "quickjs-emscripten.process"))
        self.assertTrue(cli.whole_process and peer.whole_process and peer.peer)
        self.assertEqual(list(peer.argv[-1:]), ["--once"])
        self.assertFalse(self.registry.get("quickjs-emscripten").whole_process)
        self.assertFalse(self.registry.get("engine.instance_console_log").whole_process)


class PeerProjectTest(unittest.TestCase):
    def test_pinned_exactly_and_locked(self):
        with open(os.path.join(PEER_DIR, "package.json"), encoding="utf-8") as handle:
            package = json.load(handle)
        self.assertEqual(package["dependencies"], {"quickjs-emscripten": "0.32.0"})
        with open(os.path.join(PEER_DIR, "package-lock.json"), encoding="utf-8") as handle:
            lock = json.load(handle)
        for path, entry in lock["packages"].items():
            if path:
                self.assertIn("integrity", entry, path)
        self.assertEqual(lock["packages"]["node_modules/quickjs-emscripten"]["version"], "0.32.0")
        self.assertFalse(os.path.exists(os.path.join(PEER_DIR, "node_modules")))


if __name__ == "__main__":
    unittest.main()
