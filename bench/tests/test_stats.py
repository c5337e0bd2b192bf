import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import stats  # noqa: E402


class PercentileTest(unittest.TestCase):
    def test_known_values_match_linear_interpolation(self):
        data = list(range(1, 11))   # numpy.percentile(range(1, 11), [0, 50, 95, 99, 100])
        self.assertEqual(stats.percentile(data, 0), 1)
        self.assertAlmostEqual(stats.percentile(data, 50), 5.5)
        self.assertAlmostEqual(stats.percentile(data, 95), 9.55)
        self.assertAlmostEqual(stats.percentile(data, 99), 9.91)
        self.assertEqual(stats.percentile(data, 100), 10)

    def test_order_of_input_does_not_matter(self):
        self.assertAlmostEqual(stats.percentile([9, 1, 5, 3, 7], 50), 5)
        self.assertAlmostEqual(stats.percentile([9, 1, 5, 3, 7], 25), 3)

    def test_hundred_samples(self):
        data = [float(i) for i in range(100)]   # 0..99: rank h = 99 p / 100
        self.assertAlmostEqual(stats.percentile(data, 95), 94.05)
        self.assertAlmostEqual(stats.percentile(data, 99), 98.01)

    def test_single_sample(self):
        for p in (0, 50, 99, 100):
            self.assertEqual(stats.percentile([4.2], p), 4.2)

    def test_rejects_empty_and_out_of_range(self):
        with self.assertRaises(ValueError):
            stats.percentile([], 50)
        with self.assertRaises(ValueError):
            stats.percentile([1], 101)
        with self.assertRaises(ValueError):
            stats.percentile([1], -1)


class SummarizeTest(unittest.TestCase):
    def test_summary_fields(self):
        summary = stats.summarize([4.0, 1.0, 3.0, 2.0])
        self.assertEqual(summary["n"], 4)
        self.assertAlmostEqual(summary["mean"], 2.5)
        self.assertEqual(summary["min"], 1.0)
        self.assertEqual(summary["max"], 4.0)
        self.assertAlmostEqual(summary["p50"], 2.5)
        self.assertAlmostEqual(summary["p95"], 3.85)
        self.assertAlmostEqual(summary["p99"], 3.97)
        self.assertAlmostEqual(summary["stdev"], math.sqrt(5 / 3))

    def test_single_sample_has_zero_stdev(self):
        self.assertEqual(stats.summarize([7.0])["stdev"], 0.0)

    def test_empty_is_an_error(self):
        with self.assertRaises(ValueError):
            stats.summarize([])


class RatioTest(unittest.TestCase):
    def test_ratios_divide_each_statistic(self):
        sandbox = stats.summarize([10.0, 20.0, 30.0])
        base = stats.summarize([5.0, 5.0, 5.0])
        result = stats.ratios(sandbox, base)
        self.assertAlmostEqual(result["p50"], 4.0)
        self.assertAlmostEqual(result["mean"], 4.0)
        self.assertAlmostEqual(result["p99"], stats.percentile([10, 20, 30], 99) / 5.0)

    def test_zero_baseline_gives_none(self):
        result = stats.ratios(stats.summarize([1.0]), stats.summarize([0.0]))
        self.assertIsNone(result["p50"])


if __name__ == "__main__":
    unittest.main()
