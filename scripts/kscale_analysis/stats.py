"""Summary statistics, significance and number formatting.

A table's rows are judged together (assess_table): each side's median,
its robust spread, a bootstrap 95% confidence interval of the change, and
a verdict from a two-sided Mann-Whitney U test whose p-values are adjusted
across the table (Benjamini-Hochberg).  Rows with fewer than
MIN_REPS_FOR_TEST repetitions on a side get no verdict at all.
"""

import random
import statistics
import warnings
from dataclasses import dataclass

ALPHA = 0.05  # the false discovery rate of a table
MIN_REPS_FOR_TEST = 4  # below this Mann-Whitney U cannot reach p < 0.05
MIN_EFFECT_PCT = 1.0  # smaller changes are never significant
MAD_TO_SIGMA = 1.4826  # scales the MAD to the stddev of a normal sample
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 1


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


def spread_percent(values):
    """Robust spread: the median absolute deviation, scaled to a normal
    sample's stddev, as a percentage of the median; None when undefined."""
    if len(values) < 2:
        return None
    mid = statistics.median(values)
    if mid == 0:
        return None
    mad = statistics.median(abs(v - mid) for v in values)
    return MAD_TO_SIGMA * mad / abs(mid) * 100


def percent_change(before, after):
    if before is None or after is None or before == 0:
        return None
    return (after - before) / abs(before) * 100


def change(before, after, points=False):
    """The change of the medians: % of before, or percentage points."""
    b, a = median(before), median(after)
    if b is None or a is None:
        return None
    return a - b if points else percent_change(b, a)


def pvalue(before, after):
    """Two-sided Mann-Whitney U p, or None below MIN_REPS_FOR_TEST a side."""
    if min(len(before), len(after)) < MIN_REPS_FOR_TEST:
        return None
    if len(set(before) | set(after)) == 1:
        return 1.0  # identical samples: no evidence of a change
    from scipy.stats import mannwhitneyu  # slow import, only when needed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = mannwhitneyu(before, after, alternative="two-sided").pvalue
    return 1.0 if p != p else p  # NaN: no evidence


def bootstrap_ci(before, after, points=False, resamples=BOOTSTRAP_RESAMPLES,
                 seed=BOOTSTRAP_SEED):
    """95% percentile interval of the change of the medians, each side's
    repetitions resampled with replacement; a fixed seed, so a table is
    reproducible.  None below MIN_REPS_FOR_TEST a side."""
    if min(len(before), len(after)) < MIN_REPS_FOR_TEST:
        return None
    rng = random.Random(seed)
    changes = []
    for _ in range(resamples):
        c = change(rng.choices(before, k=len(before)),
                   rng.choices(after, k=len(after)), points)
        if c is not None:
            changes.append(c)
    if not changes:
        return None
    changes.sort()
    lo = changes[int(0.025 * (len(changes) - 1))]
    hi = changes[int(round(0.975 * (len(changes) - 1)))]
    return lo, hi


# A point whose seeds split in two (a collapse the seed decides): sorted,
# its values split at the widest gap between neighbours; the point is
# bistable when that gap is at least BISTABLE_GAP_PCT % of the median and
# at least BISTABLE_GAP_RATIO times the range within either cluster.  A
# median of such values is one of two states, or between them, and its
# spread (the MAD) can be small; the interval of a change is then the
# seeds', not the code's.
BISTABLE_GAP_PCT = 10.0
BISTABLE_GAP_RATIO = 2.0
BISTABLE_MIN_SEEDS = 3


def bistable(values):
    """The (low, high) clusters of values that split in two, or None."""
    if len(values) < BISTABLE_MIN_SEEDS:
        return None
    ordered = sorted(values)
    mid = statistics.median(ordered)
    gap, i = max((b - a, i) for i, (a, b) in
                 enumerate(zip(ordered, ordered[1:]), start=1))
    low, high = ordered[:i], ordered[i:]
    within = max(low[-1] - low[0], high[-1] - high[0])
    if mid == 0 or gap < BISTABLE_GAP_PCT / 100 * abs(mid) or \
            gap < BISTABLE_GAP_RATIO * within:
        return None
    return low, high


def states(values):
    """A point's medians: its two clusters' if bistable, else its own."""
    clusters = bistable(values)
    return [median(c) for c in clusters] if clusters else [median(values)]


def benjamini_hochberg(pvalues):
    """Adjusted p-values (q) in the same order; None stays None."""
    ranked = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    q = [None] * len(pvalues)
    m = len(ranked)
    running = 1.0
    for rank in range(m, 0, -1):
        p, i = ranked[rank - 1]
        running = min(running, p * m / rank)
        q[i] = running
    return q


@dataclass
class Assessment:
    change: object  # float or None: % or pp
    ci: object  # (lo, hi) or None
    p: object
    q: object
    mark: str  # "" significant, "~" not, "?" no verdict


def large_enough(before, after, points, min_effect):
    """At least min_effect % of before; pp rows with before 0: min_effect pp."""
    b, a = median(before), median(after)
    if b is None or a is None:
        return False
    if b == 0:
        return abs(a - b) >= min_effect if points else a != b
    return abs(a - b) / abs(b) * 100 >= min_effect


def assess_table(pairs, points=False, min_effect=MIN_EFFECT_PCT):
    """Assessments of [(before, after), ...], the rows of one table."""
    ps = [pvalue(b, a) for b, a in pairs]
    qs = benjamini_hochberg(ps)
    out = []
    for (b, a), p, q in zip(pairs, ps, qs):
        if q is None:
            mark = "?"
        elif q < ALPHA and large_enough(b, a, points, min_effect):
            mark = ""
        else:
            mark = "~"
        out.append(Assessment(change(b, a, points), bootstrap_ci(b, a, points),
                              p, q, mark))
    return out


_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def fmt_value(value):
    """Engineering-friendly: 12.3M, 456.7k, 1.23M; plain below 1000 (0.98)."""
    for scale, suffix in _SI:
        if abs(value) >= scale:
            scaled = value / scale
            return f"{scaled:.2f}{suffix}" if abs(scaled) < 10 else f"{scaled:.1f}{suffix}"
    return f"{value:.4g}"


def fmt_cell(values, seeds=False):
    """'median ±spread%' for one side, or 'n/a' without data; where the
    values are seeds' (simulated) that split in two, their range:
    'bistable: 5.70M..7.50M over 5 seeds'."""
    if not values:
        return "n/a"
    if seeds and bistable(values):
        return (f"bistable: {fmt_value(min(values))}..{fmt_value(max(values))} "
                f"over {len(values)} seeds")
    text = fmt_value(median(values))
    spread = spread_percent(values)
    return text if spread is None else f"{text} ±{spread:.1f}%"


def span(counts):
    """'5' or '3..9' for a set of repetition counts."""
    if not counts:
        return "0"
    lo, hi = min(counts), max(counts)
    return str(lo) if lo == hi else f"{lo}..{hi}"


def fmt_change(assessment, points=False):
    """'+12.3%', '-0.4% ~', '+5.0% ?'; in percentage points for pp rows."""
    c = assessment.change
    if c is None:
        return "n/a"
    text = f"{c:+.2f} pp" if points else f"{c:+.1f}%"
    return f"{text} {assessment.mark}" if assessment.mark else text


def fmt_ci(assessment, points=False):
    """'[+1.2%, +3.4%]', or 'n/a' where there is none."""
    if assessment.ci is None:
        return "n/a"
    unit = " pp" if points else "%"
    fmt = "{:+.2f}" if points else "{:+.1f}"
    lo, hi = assessment.ci
    return f"[{fmt.format(lo)}{unit}, {fmt.format(hi)}{unit}]"
