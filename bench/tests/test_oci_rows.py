"""The oci provider's rows (issue 6): registry shape, the equivalent-bundle fixture, the hybrid
cgroup2 fixture."""

import os
import stat
import sys
import tempfile
import unittest
from unittest import mock

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from harness.fixtures import FixtureError, Fixtures  # noqa: E402
from harness.runner import load_registry  # noqa: E402

RUNTIMES = ("runc", "crun", "runsc")


class OciRegistryTest(unittest.TestCase):
    def setUp(self):
        self.registry = load_registry(os.path.join(BENCH, "scenarios.py"))
        self.registry.validate()

    def test_selection_is_each_baseline_then_its_rows(self):
        names = [s.name for s in self.registry.select("^oci")]
        # The container tier's other peers (issue 23) and unshare-qjs's baseline come first.
        expected = ["unshare", "unshare-qjs", "bwrap-qjs", "runc-qjs"]
        for runtime in RUNTIMES:
            expected += [f"{runtime}-qjs-equivalent", f"oci.{runtime}.js_console_log.cold",
                         f"oci.{runtime}.js_console_log.pool"]
        self.assertEqual(names, expected)

    def test_targets_and_baselines(self):
        get = self.registry.get
        for runtime in ("runc", "crun"):
            cold, pool = (get(f"oci.{runtime}.js_console_log.{k}") for k in ("cold", "pool"))
            self.assertEqual(self.registry.baseline_of(cold), f"{runtime}-qjs-equivalent")
            self.assertEqual(cold.target_ratio, 1.10)
            self.assertEqual(pool.target_p50_ms, 10.0)
        self.assertEqual(get("oci.runsc.js_console_log.pool").target_p50_ms, 5.0)   # issue 23
        self.assertIsNone(get("oci.runsc.js_console_log.cold").target_ratio)
        for runtime in RUNTIMES:
            self.assertEqual(get(f"{runtime}-qjs-equivalent").stdin, "{qjs_script}")

    def test_driver_rows_configure_the_pool_and_pace_only_the_pool(self):
        for runtime in RUNTIMES:
            cold = list(self.registry.get(f"oci.{runtime}.js_console_log.cold").argv)
            pool = list(self.registry.get(f"oci.{runtime}.js_console_log.pool").argv)
            self.assertIn("SANDBOX_OCI_POOL_SIZE=0", cold)
            self.assertNotIn("--interval-ms", cold)
            self.assertIn("SANDBOX_OCI_POOL_SIZE=2", pool)
            self.assertIn("--interval-ms", pool)
            for argv in (cold, pool):
                self.assertEqual(argv[argv.index("--provider") + 1], f"oci:{runtime}")
                self.assertIn("SANDBOX_OCI_STATE_DIR={state}/oci", argv)

    def test_raw_crun_hides_the_cgroup2_mount_per_run(self):
        row = self.registry.get("crun-qjs-equivalent")
        self.assertEqual(list(row.argv[:3]),
                         ["{plimsoll_bin}/plimsoll-hide-mount", "{hybrid_cgroup2}", "--"])
        self.assertIsNone(row.wrapper)
        self.assertEqual(list(row.cleanup[:3]), list(row.argv[:3]))


class OciFixturesTest(unittest.TestCase):
    def test_bundle_tool_gets_the_runtime_rootfs_and_qjs(self):
        with tempfile.TemporaryDirectory() as tmp:
            image = os.path.join(tmp, "image")
            os.makedirs(os.path.join(image, "rootfs"))
            log = os.path.join(tmp, "argv")
            tool = os.path.join(tmp, "plimsoll-oci-bundle")
            with open(tool, "w", encoding="utf-8") as handle:
                handle.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {log}\n")
            os.chmod(tool, os.stat(tool).st_mode | stat.S_IXUSR)
            with mock.patch.dict(os.environ, {"PLIMSOLL_IMAGE": image}), \
                    Fixtures(values={"plimsoll_bin": tmp}) as fixtures:
                bundle = fixtures.format("{oci_qjs_bundle_crun}")
                self.assertEqual(bundle, os.path.join(fixtures.workdir, "oci-qjs-bundle-crun"))
            with open(log, encoding="utf-8") as handle:
                argv = handle.read().split("\n")[:-1]
            self.assertEqual(argv, ["--runtime", "crun", "--rootfs", os.path.join(image, "rootfs"),
                                    "--out", bundle, "--cgroups-path",
                                    "/plimsoll-oci-bench/crun-qjs", "--", "/usr/local/bin/qjs",
                                    "-"])

    def test_missing_or_failing_tool_is_a_fixture_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "image", "rootfs"))
            with mock.patch.dict(os.environ, {"PLIMSOLL_IMAGE": os.path.join(tmp, "image")}), \
                    Fixtures(values={"plimsoll_bin": tmp}) as fixtures:
                with self.assertRaisesRegex(FixtureError, "plimsoll-oci-bundle does not exist"):
                    fixtures.format("{oci_qjs_bundle_runc}")
                tool = os.path.join(tmp, "plimsoll-oci-bundle")
                with open(tool, "w", encoding="utf-8") as handle:
                    handle.write("#!/bin/sh\necho 'bad seccomp policy' >&2\nexit 1\n")
                os.chmod(tool, 0o755)
                with self.assertRaisesRegex(FixtureError, "bad seccomp policy"):
                    fixtures.format("{oci_qjs_bundle_runsc}")

    def test_hybrid_cgroup2(self):
        hybrid = ("30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
                  "31 25 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n")
        pure = "31 25 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n"
        for text, expected in ((hybrid, "/sys/fs/cgroup/unified"), (pure, "")):
            with Fixtures() as fixtures, \
                    mock.patch("builtins.open", mock.mock_open(read_data=text)):
                self.assertEqual(fixtures._build_hybrid_cgroup2(), expected)


if __name__ == "__main__":
    unittest.main()
