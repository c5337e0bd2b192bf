"""Summary statistics for benchmark samples.

Percentiles use linear interpolation between closest ranks (Hyndman & Fan type 7, the default of
numpy.percentile and of R's quantile()): for sorted x[0..n-1] and p in [0, 100], the rank is
h = (n - 1) * p / 100 and the value x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
With few samples the high percentiles are close to the maximum; the summary records n so readers can
judge.
"""

import math
import statistics

PERCENTILES = (50, 95, 99)
# The keys of a summary, in order. A sampler that reports statistics instead of samples may leave
# some of them None.
SUMMARY_FIELDS = ("n", "mean", "stdev", "min", "p50", "p95", "p99", "max")


def percentile(samples, p):
    """The p-th percentile (0..100) of a non-empty sequence of numbers, by linear interpolation."""
    if not samples:
        raise ValueError("percentile of an empty sample list is undefined")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within 0..100, got {p}")
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * p / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    fraction = rank - low
    return ordered[low] + fraction * (ordered[high] - ordered[low])


def summarize(samples):
    """A dict with n, mean, stdev (0 for n < 2), min, p50, p95, p99 and max of non-empty samples."""
    if not samples:
        raise ValueError("cannot summarize an empty sample list")
    summary = {
        "n": len(samples),
        "mean": statistics.fmean(samples),
        "stdev": statistics.stdev(samples) if len(samples) > 1 else 0.0,
        "min": min(samples),
    }
    for p in PERCENTILES:
        summary[f"p{p}"] = percentile(samples, p)
    summary["max"] = max(samples)
    return summary


RATIO_KEYS = ("p50", "p95", "p99", "mean")


def ratios(summary, baseline_summary):
    """Per-statistic ratios summary[k] / baseline_summary[k] for p50, p95, p99 and mean.

    A ratio whose baseline value is zero (or not positive) is None: it has no meaning. So is one
    where either side lacks the statistic (None: a sampler that reported a summary only).
    """
    result = {}
    for key in RATIO_KEYS:
        value, base = summary.get(key), baseline_summary.get(key)
        result[key] = value / base if value is not None and base is not None and base > 0 \
            else None
    return result
