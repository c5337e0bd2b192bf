"""The microvm provider's rows (issue 7): registry shape, the fixtures (artifacts, accelerator,
the raw boot's initramfs) and the sampler "facts" the rows carry (e.g. the accelerator)."""

import contextlib
import gzip
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

from harness import initramfs  # noqa: E402
from harness.execute import FAILED, MEASURED, interpret_record  # noqa: E402
from harness.fixtures import FixtureError, Fixtures  # noqa: E402
from harness.runner import load_registry, main  # noqa: E402
from harness.scenario import Registry, produced, sampler  # noqa: E402

ROWS = ["qemu-microvm-boot", "microvm.boot_to_ready", "microvm.js_console_log.cold",
        "microvm.js_console_log.pool"]


def read_newc(data):
    """{name: (mode, (devmajor, devminor), content)} of a newc cpio archive."""
    entries, offset = {}, 0
    while True:
        header = data[offset:offset + 110].decode()
        assert header[:6] == "070701", header[:6]
        fields = [int(header[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        mode, size, rmajor, rminor, namesize = (fields[1], fields[6], fields[9], fields[10],
                                                fields[11])
        name = data[offset + 110:offset + 110 + namesize - 1].decode()
        offset += 110 + namesize
        offset += -offset % 4
        content = data[offset:offset + size]
        offset += size
        offset += -offset % 4
        if name == "TRAILER!!!":
            return entries
        entries[name] = (mode, (rmajor, rminor), content)


class MicrovmRegistryTest(unittest.TestCase):
    def setUp(self):
        self.registry = load_registry(os.path.join(BENCH, "scenarios.py"))
        self.registry.validate()

    def test_selection_is_the_raw_boot_then_the_provider_rows(self):
        self.assertEqual([s.name for s in self.registry.select("^microvm")], ROWS)

    def test_baselines_and_targets(self):
        get, base = self.registry.get, self.registry.baseline_of
        self.assertIsNone(base(get("qemu-microvm-boot")))
        self.assertEqual(get("qemu-microvm-boot").produces, ("microvm.boot_to_ready",))
        for name in ROWS[1:]:
            self.assertEqual(base(get(name)), "qemu-microvm-boot")
        self.assertEqual(get("microvm.js_console_log.pool").target_p50_ms, 150.0)
        for name in ROWS[:3]:   # references, not pass/fail
            row = get(name)
            self.assertIsNone(row.target_p50_ms or row.target_ratio or row.target_added_p50_ms)

    def test_every_row_uses_the_same_accelerator_and_private_state(self):
        boot = list(self.registry.get("qemu-microvm-boot").argv)
        self.assertEqual(boot[boot.index("--accel") + 1], "{microvm_accel}")
        self.assertEqual(boot[boot.index("--artifacts") + 1], "{microvm_dir}")
        self.assertEqual(boot[boot.index("--state") + 1], "{state}")
        for name in ROWS[2:]:
            argv = list(self.registry.get(name).argv)
            self.assertEqual(argv[argv.index("--provider") + 1], "microvm")
            for setting in ("SANDBOX_MICROVM_ACCEL={microvm_accel}",
                            "SANDBOX_MICROVM_STATE_DIR={state}/microvm",
                            "PLIMSOLL_MICROVM_DIR={microvm_dir}"):
                self.assertIn(setting, argv)

    def test_only_the_pool_row_waits_for_a_full_pool(self):
        cold = list(self.registry.get("microvm.js_console_log.cold").argv)
        pool = list(self.registry.get("microvm.js_console_log.pool").argv)
        self.assertIn("SANDBOX_MICROVM_POOL_SIZE=0", cold)
        self.assertNotIn("--await-pool-ms", cold)
        self.assertIn("SANDBOX_MICROVM_POOL_SIZE=1", pool)
        self.assertIn("--await-pool-ms", pool)

    def test_run_counts_stay_modest(self):
        # Each boot is seconds under TCG: the rows together stay around two minutes.
        for name, most in (("qemu-microvm-boot", 6), ("microvm.js_console_log.cold", 4),
                           ("microvm.js_console_log.pool", 15)):
            self.assertLessEqual(self.registry.get(name).max_runs, most)


class MicrovmFixturesTest(unittest.TestCase):
    def test_accelerator(self):
        for value, expected in ((None, "tcg"), ("", "tcg"), ("tcg", "tcg"), ("kvm", "kvm")):
            env = {} if value is None else {"SANDBOX_MICROVM_ACCEL": value}
            with mock.patch.dict(os.environ, env), Fixtures() as fixtures:
                if value is None:
                    os.environ.pop("SANDBOX_MICROVM_ACCEL", None)
                self.assertEqual(fixtures.format("{microvm_accel}"), expected)
        with mock.patch.dict(os.environ, {"SANDBOX_MICROVM_ACCEL": "auto"}), \
                Fixtures() as fixtures:
            with self.assertRaisesRegex(FixtureError, "needs tcg or kvm"):
                fixtures.format("{microvm_accel}")

    def test_artifacts_directory(self):
        with tempfile.TemporaryDirectory() as tmp:
            bin_dir = os.path.join(tmp, "bin")
            os.makedirs(os.path.join(tmp, "microvm"))
            with mock.patch.dict(os.environ), Fixtures(values={"plimsoll_bin": bin_dir}) as fx:
                os.environ.pop("PLIMSOLL_MICROVM_DIR", None)
                with self.assertRaisesRegex(FixtureError, "no complete microvm guest artifacts"):
                    fx.format("{microvm_dir}")
            with open(os.path.join(tmp, "microvm", "inputs"), "w", encoding="utf-8") as handle:
                handle.write("key\n")
            with mock.patch.dict(os.environ), Fixtures(values={"plimsoll_bin": bin_dir}) as fx:
                os.environ.pop("PLIMSOLL_MICROVM_DIR", None)
                self.assertEqual(fx.format("{microvm_dir}"), os.path.join(tmp, "microvm"))
            with mock.patch.dict(os.environ, {"PLIMSOLL_MICROVM_DIR": os.path.join(tmp, "x")}), \
                    Fixtures(values={"plimsoll_bin": bin_dir}) as fx:
                with self.assertRaisesRegex(FixtureError, "PLIMSOLL_MICROVM_DIR names"):
                    fx.format("{microvm_dir}")

    def test_raw_initramfs_needs_a_static_busybox(self):
        with mock.patch("harness.fixtures.shared_objects", return_value=["/lib/libc.so.6"]), \
                mock.patch("os.path.exists", return_value=True), Fixtures() as fixtures:
            with self.assertRaisesRegex(FixtureError, "not static"):
                fixtures.format("{microvm_raw_initramfs}")


class InitramfsTest(unittest.TestCase):
    def test_contents_and_reproducibility(self):
        with tempfile.TemporaryDirectory() as tmp:
            busybox = os.path.join(tmp, "busybox")
            with open(busybox, "wb") as handle:
                handle.write(b"\x7fELF not really busybox")
            first = initramfs.write_marker_initramfs(os.path.join(tmp, "a", "i.gz"), busybox)
            second = initramfs.write_marker_initramfs(os.path.join(tmp, "b", "i.gz"), busybox)
            with open(first, "rb") as a, open(second, "rb") as b:
                data = a.read()
                self.assertEqual(data, b.read())
        entries = read_newc(gzip.decompress(data))
        self.assertEqual(sorted(entries), ["bin", "bin/busybox", "dev", "dev/console", "init"])
        mode, device, _ = entries["dev/console"]
        self.assertTrue(stat.S_ISCHR(mode))
        self.assertEqual(device, (5, 1))
        mode, _, script = entries["init"]
        self.assertTrue(stat.S_ISREG(mode) and mode & 0o111)
        self.assertEqual(script.decode(), "#!/bin/busybox sh\n/bin/busybox echo "
                         f"{initramfs.MARKER}\nexec /bin/busybox reboot -f\n")
        self.assertEqual(entries["bin/busybox"][2], b"\x7fELF not really busybox")


class FactsTest(unittest.TestCase):
    def test_facts_are_kept_and_checked(self):
        outcome = interpret_record({"unit": "ms", "samples": [1.0],
                                    "facts": {"accelerator": "tcg"}})
        self.assertEqual(outcome.status, MEASURED)
        self.assertEqual(outcome.facts, {"accelerator": "tcg"})
        self.assertIsNone(interpret_record({"unit": "ms", "samples": [1.0]}).facts)
        for bad in (["tcg"], {"accelerator": 1}):
            outcome = interpret_record({"unit": "ms", "samples": [1.0], "facts": bad})
            self.assertEqual(outcome.status, FAILED)
            self.assertIn("facts", outcome.reason)

    def test_facts_reach_the_json_and_the_notes(self):
        fake = os.path.join(BENCH, "tests", "fake_sampler.py")
        registry = Registry()
        registry.add(sampler("boot", [sys.executable, fake, "--scenario", "{scenario}", "--runs",
                                      "{runs}", "--fact", "accelerator=tcg", "--also",
                                      "boot.ready:1.5"],
                             baseline=None, produces=["boot.ready"], description="a boot"))
        registry.add(produced("boot.ready", baseline="boot", description="to ready"))
        with tempfile.TemporaryDirectory() as out_dir:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main(["--runs", "2", "--warmup", "0", "--out", out_dir], registry)
            json_name = [n for n in os.listdir(out_dir) if n.endswith(".json")][0]
            with open(os.path.join(out_dir, json_name), encoding="utf-8") as handle:
                rows = {row["name"]: row for row in json.load(handle)["scenarios"]}
        self.assertEqual(status, 0, err.getvalue())
        self.assertEqual(rows["boot"]["facts"], {"accelerator": "tcg"})
        self.assertEqual(rows["boot.ready"]["facts"], {"accelerator": "tcg"})
        self.assertIn("- `boot`: a boot Ran on: accelerator: tcg.", out.getvalue())


if __name__ == "__main__":
    unittest.main()
