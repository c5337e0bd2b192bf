#!/usr/bin/env python3
"""Smoke test of the daemon benchmark tools (CTest: bench_tools_smoke).

Runs plimsoll-latency and plimsoll-http-bench (both modes) for a few runs against the plimsolld
of the same build and checks what bench/run.py relies on: one sampler line per row, in ms, with
the asked number of positive samples; and that a failure is an "error" line with exit status 1
(a daemon that cannot start; a daemon that sheds load, which must never be counted as runs).

    tools_smoke_test.py --bin BUILD/bin
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

BIN = None


def run(tool, *args, timeout=120):
    out = subprocess.run([os.path.join(BIN, tool), *args], capture_output=True, text=True,
                         timeout=timeout, check=False)
    records = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            records[record["scenario"]] = record
    return out, records


class ToolsTest(unittest.TestCase):
    def assert_samples(self, records, name, count):
        self.assertIn(name, records)
        record = records[name]
        self.assertNotIn("error", record, record)
        self.assertEqual(record["unit"], "ms")
        self.assertEqual(len(record["samples"]), count, record)
        self.assertTrue(all(value > 0 for value in record["samples"]), record)

    def test_in_process_latency(self):
        out, records = run("plimsoll-latency", "--provider", "embedded", "--scenario", "inproc",
                           "--runs", "5", "--warmup", "1")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assert_samples(records, "inproc", 5)
        # What the runs ran on: the evidence's tier (bench/run.py keeps "facts" with the row).
        self.assertEqual(records["inproc"]["facts"]["tier"], "process")

    def test_in_process_latency_reports_a_failing_provider(self):
        out, records = run("plimsoll-latency", "--provider", "no-such-provider", "--scenario",
                           "inproc", "--runs", "1")
        self.assertEqual(out.returncode, 1)
        self.assertIn("error", records["inproc"])

    def test_in_process_latency_env_and_pacing(self):
        # --env reaches the provider's configuration: a bad pool size is its refusal.
        out, records = run("plimsoll-latency", "--provider", "oci:runc", "--env",
                           "SANDBOX_OCI_POOL_SIZE=lots", "--scenario", "oci", "--runs", "1")
        self.assertEqual(out.returncode, 1)
        self.assertIn("SANDBOX_OCI_POOL_SIZE", records["oci"]["error"])
        out, records = run("plimsoll-latency", "--provider", "embedded", "--env", "UNUSED=1",
                           "--interval-ms", "20", "--scenario", "paced", "--runs", "3",
                           "--warmup", "0")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assert_samples(records, "paced", 3)
        out, _ = run("plimsoll-latency", "--env", "NOEQUALS", "--runs", "1")
        self.assertEqual(out.returncode, 2)
        # --await-pool-ms on a provider without a pool: waits its bound, then runs anyway, and
        # the facts say no run started with a full pool.
        out, records = run("plimsoll-latency", "--provider", "embedded", "--await-pool-ms", "30",
                           "--scenario", "await", "--runs", "2", "--warmup", "0")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assert_samples(records, "await", 2)
        self.assertTrue(records["await"]["facts"]["await_pool"].startswith("0 of 2 "),
                        records["await"])

    def test_in_process_latency_session_modes(self):
        # Cell mode on the embedded provider (JavaScript sessions): the tool checks each cell
        # printed the next count, so five samples mean the state was kept five times.
        out, records = run("plimsoll-latency", "--provider", "embedded", "--mode", "cell",
                           "--scenario", "cell", "--runs", "5", "--warmup", "2")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assert_samples(records, "cell", 5)
        out, records = run("plimsoll-latency", "--provider", "embedded", "--mode", "open",
                           "--scenario", "open", "--runs", "3", "--warmup", "0")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assert_samples(records, "open", 3)
        # The embedded provider keeps JavaScript only: a Python cell is its refusal, reported.
        out, records = run("plimsoll-latency", "--provider", "embedded", "--mode", "cell",
                           "--lang", "python", "--scenario", "py", "--runs", "1")
        self.assertEqual(out.returncode, 1)
        self.assertIn("error", records["py"])
        out, _ = run("plimsoll-latency", "--mode", "sometimes", "--runs", "1")
        self.assertEqual(out.returncode, 2)

    def test_microvm_boot_tool_failures(self):
        # No VM is booted here: usage errors, and artifacts that do not exist (an "error" line
        # for both rows, exit 1). The real boots run in bench/run.py's microvm rows.
        tool = os.path.join(BIN, "plimsoll-microvm-boot")
        if not os.path.exists(tool):
            self.skipTest(f"{tool} is not built (no microvm provider in this tree)")
        out, _ = run("plimsoll-microvm-boot", "--artifacts", "x", "--state", "y")
        self.assertEqual(out.returncode, 2)
        out, _ = run("plimsoll-microvm-boot", "--artifacts", "x", "--raw-initramfs", "y",
                     "--state", "z", "--accel", "hvf")
        self.assertEqual(out.returncode, 2)
        with tempfile.TemporaryDirectory() as tmp:
            out, records = run("plimsoll-microvm-boot", "--artifacts",
                               os.path.join(tmp, "missing"), "--raw-initramfs",
                               os.path.join(tmp, "none.cpio.gz"), "--state",
                               os.path.join(tmp, "state"), "--raw-scenario", "raw",
                               "--agent-scenario", "agent", "--runs", "1", "--warmup", "0",
                               timeout=180)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        for name in ("raw", "agent"):
            self.assertIn("error", records[name], records)

    def test_oci_bundle_tool(self):
        with tempfile.TemporaryDirectory() as tmp:
            rootfs = os.path.join(tmp, "rootfs")
            os.mkdir(rootfs)
            for runtime, seccomp in (("runc", True), ("runsc", False)):
                bundle = os.path.join(tmp, runtime)
                out, _ = run("plimsoll-oci-bundle", "--runtime", runtime, "--rootfs", rootfs,
                             "--out", bundle, "--cgroups-path", "/bench/x", "--",
                             "/usr/local/bin/qjs", "-")
                self.assertEqual(out.returncode, 0, out.stderr)
                with open(os.path.join(bundle, "config.json"), encoding="utf-8") as handle:
                    config = json.load(handle)
                self.assertEqual(config["process"]["args"], ["/usr/local/bin/qjs", "-"])
                self.assertEqual(config["root"], {"path": rootfs, "readonly": True})
                self.assertEqual(config["linux"]["cgroupsPath"], "/bench/x")
                self.assertEqual("seccomp" in config["linux"], seccomp)
                namespaces = {entry["type"] for entry in config["linux"]["namespaces"]}
                self.assertEqual("user" in namespaces, seccomp)
            out, _ = run("plimsoll-oci-bundle", "--runtime", "docker", "--rootfs", rootfs,
                         "--out", os.path.join(tmp, "x"), "--", "/bin/true")
            self.assertEqual(out.returncode, 2)

    def test_hide_mount_tool_execs(self):
        out, _ = run("plimsoll-hide-mount", "", "--", "sh", "-c", "exit 3")
        self.assertEqual(out.returncode, 3, out.stderr)
        out, _ = run("plimsoll-hide-mount", "/nonexistent-mount-point", "--", "true")
        self.assertEqual(out.returncode, 0 if os.geteuid() == 0 else 126, out.stderr)

    def test_http_latency_rows(self):
        out, records = run("plimsoll-http-bench", "--daemon", os.path.join(BIN, "plimsolld"),
                           "--mode", "latency", "--scenario", "http", "--runs", "4", "--warmup",
                           "1", "--", "--provider", "embedded", "--dev")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        for name in ("http", "http.healthz", "http.client_cpu"):
            self.assert_samples(records, name, 4)

    def test_http_throughput_rows(self):
        out, records = run("plimsoll-http-bench", "--daemon", os.path.join(BIN, "plimsolld"),
                           "--mode", "throughput", "--scenario", "tp", "--runs", "2", "--warmup",
                           "0", "--window-ms", "300", "--connections", "4", "--", "--provider",
                           "embedded", "--dev", "--max-concurrent-runs", "8")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        for name in ("tp", "tp.daemon_cpu", "tp.client_cpu"):
            self.assert_samples(records, name, 2)
        self.assertGreater(len(records["tp.latency"]["samples"]), 0)

    def test_shed_runs_fail_the_measurement(self):
        # 4 connections in flight against one admitted run at a time: capacity refusals.
        out, records = run("plimsoll-http-bench", "--daemon", os.path.join(BIN, "plimsolld"),
                           "--mode", "throughput", "--scenario", "tp", "--runs", "1", "--warmup",
                           "0", "--window-ms", "300", "--connections", "4", "--", "--provider",
                           "embedded", "--dev", "--run-workers", "1", "--max-concurrent-runs",
                           "1")
        self.assertEqual(out.returncode, 1, out.stdout)
        self.assertIn("answered 429", records["tp"]["error"])

    def test_a_daemon_that_cannot_start_is_an_error_line(self):
        out, records = run("plimsoll-http-bench", "--daemon", os.path.join(BIN, "plimsolld"),
                           "--mode", "latency", "--scenario", "http", "--runs", "1", "--",
                           "--provider", "no-such-provider", "--dev")
        self.assertEqual(out.returncode, 1)
        self.assertIn("exited before serving", records["http"]["error"])

    def test_usage_errors(self):
        out, _ = run("plimsoll-http-bench", "--mode", "sideways", "--daemon", "x", "--scenario",
                     "y")
        self.assertEqual(out.returncode, 2)


def main():
    global BIN
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    args, rest = parser.parse_known_args()
    BIN = os.path.abspath(args.bin)
    unittest.main(argv=[sys.argv[0], *rest])


if __name__ == "__main__":
    main()
