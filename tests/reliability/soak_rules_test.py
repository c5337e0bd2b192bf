#!/usr/bin/env python3
"""The soak's judgement, on made-up samples and on a real leaking process.

soak_test.py passes when nothing grows; these show that its rules do fail on
growth (a descriptor leaked per run, RSS creeping), do not fail on one late
connection, and that its leftovers rules see a left-behind descendant and an
entry named after the owner tag.
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak_test  # noqa: E402


def series(**ramps):
    """20 samples; each measure is (start, per-sample increment)."""
    out = []
    for i in range(20):
        point = {m: 10 for m in soak_test.MEASURES}
        for measure, (start, step) in ramps.items():
            point[measure] = start + step * i
        out.append(point)
    return out


class GrowthTest(unittest.TestCase):
    def test_flat_passes(self):
        self.assertEqual(soak_test.growth(series(fds=(20, 0), rss_kib=(50_000, 0)), 0.10), [])

    def test_one_descriptor_per_sample_fails(self):
        problems = soak_test.growth(series(fds=(20, 1)), 0.10)
        self.assertEqual(len(problems), 1)
        self.assertIn("fds grew from 22 to 37", problems[0])

    def test_rss_creep_fails(self):
        self.assertTrue(soak_test.growth(series(rss_kib=(50_000, 500)), 0.10))

    def test_one_late_connection_does_not_count(self):
        samples = series(fds=(20, 0))
        samples[-1]["fds"] = 21  # a client connection the daemon has not closed yet
        samples[-2]["fds"] = 30
        self.assertEqual(soak_test.growth(samples, 0.10), [])

    def test_too_few_samples_fail(self):
        self.assertTrue(soak_test.growth(series()[:4], 0.10))


class LeftoversTest(unittest.TestCase):
    def test_a_descendant_and_its_start_time_are_seen(self):
        sleeper = subprocess.Popen(["sleep", "30"])
        try:
            time.sleep(0.1)
            seen = soak_test.descendants(os.getpid(), soak_test.processes())
            self.assertIn((sleeper.pid, soak_test.start_time(sleeper.pid)), seen)
        finally:
            sleeper.kill()
            sleeper.wait()
        self.assertNotIn(sleeper.pid, {pid for pid, _ in soak_test.descendants(
            os.getpid(), soak_test.processes())})

    def test_an_entry_named_after_the_owner_tag_is_found(self):
        tag = f"{os.getpid()}-{soak_test.start_time(os.getpid())}"
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "state", f"vm-{tag}-abc"))
            found = soak_test.named_entries(tag, [root])
            self.assertEqual(found, [os.path.join(root, "state", f"vm-{tag}-abc")])


if __name__ == "__main__":
    unittest.main()
