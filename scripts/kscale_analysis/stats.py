"""Summary statistics, significance and number formatting."""

import statistics
import warnings

ALPHA = 0.05
MIN_REPS_FOR_TEST = 4  # below this Mann-Whitney U cannot reach p < 0.05


def median(values):
    return statistics.median(values) if values else None


def cv_percent(values):
    """Sample stddev as a percentage of the mean; None when undefined."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean == 0:
        return None
    return statistics.stdev(values) / abs(mean) * 100


def percent_change(before, after):
    if before is None or after is None or before == 0:
        return None
    return (after - before) / abs(before) * 100


def significant(before, after):
    """Two-sided Mann-Whitney U p < ALPHA with >= 4 repetitions per side;
    with fewer, significant only when the min..max ranges do not overlap."""
    if not before or not after:
        return False
    if min(len(before), len(after)) >= MIN_REPS_FOR_TEST:
        from scipy.stats import mannwhitneyu  # slow import, only when needed
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = mannwhitneyu(before, after, alternative="two-sided").pvalue
        return p < ALPHA  # False for NaN
    return max(before) < min(after) or max(after) < min(before)


_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def fmt_value(value):
    """Engineering-friendly: 12.3M, 456.7k, 1.23M; plain below 1000 (0.98)."""
    for scale, suffix in _SI:
        if abs(value) >= scale:
            scaled = value / scale
            return f"{scaled:.2f}{suffix}" if abs(scaled) < 10 else f"{scaled:.1f}{suffix}"
    return f"{value:.4g}"


def fmt_cell(values):
    """'median ±cv%' for one side, or 'n/a' without data."""
    if not values:
        return "n/a"
    text = fmt_value(median(values))
    cv = cv_percent(values)
    return text if cv is None else f"{text} ±{cv:.1f}%"


def span(counts):
    """'5' or '3..9' for a set of repetition counts."""
    if not counts:
        return "0"
    lo, hi = min(counts), max(counts)
    return str(lo) if lo == hi else f"{lo}..{hi}"


def fmt_change(before, after):
    change = percent_change(median(before), median(after))
    if change is None:
        return "n/a"
    mark = "" if significant(before, after) else " ~"
    return f"{change:+.1f}%{mark}"


def fmt_points(before, after):
    """The change of a percentage as percentage points, as lkp-tests shows profiles."""
    if not before or not after:
        return "n/a"
    mark = "" if significant(before, after) else " ~"
    return f"{median(after) - median(before):+.2f} pp{mark}"
