"""kscale noise: the machine's A/A noise floor, from a results file alone.

Every benchmark point's repetitions are split into interleaved halves
(1st, 3rd, 5th... against 2nd, 4th, 6th...) and the halves are compared
exactly as `kscale compare` compares two sides, all points of a metric in
one table.  Nothing differs between the halves, so every significant row
is a false positive: their share is the false-positive rate of a verdict
on this machine, at this run's repetitions and window.
"""

import statistics
import sys

from . import cli, stats
from .results import KscaleError, load

PROG = "kscale noise"
USAGE = f"{PROG} RESULTS.json [--metric=NAME[,NAME...]] [--min-effect=PCT]"


def build_parser():
    parser = cli.ArgumentParser(prog=PROG, usage=USAGE, description=__doc__,
                                allow_abbrev=False)
    parser.add_argument("results", metavar="RESULTS.json")
    parser.add_argument("--metric", action="append", metavar="NAME[,NAME...]",
                        help="metric(s), repeatable (default: the model's primary metric)")
    parser.add_argument("--min-effect", type=float, default=stats.MIN_EFFECT_PCT,
                        metavar="PCT", help=f"as compare's (default {stats.MIN_EFFECT_PCT:g})")
    return parser


def percentile(values, q):
    """The q-quantile by linear interpolation; None without values."""
    if not values:
        return None
    values = sorted(values)
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def aa_report(results, metric, min_effect):
    """Lines for one metric: false positives of the halves, and the spread."""
    pairs, cvs, spreads = [], [], []
    for run in results.runs.values():
        values = run.values(metric)
        if not values:
            continue
        pairs.append((values[0::2], values[1::2]))
        if (cv := stats.cv_percent(values)) is not None:
            cvs.append(cv)
        if (spread := stats.spread_percent(values)) is not None:
            spreads.append(spread)
    if not pairs:
        raise KscaleError(f"{results.label}: no values of {metric!r}")
    marks = [a.mark for a in stats.assess_table(pairs, metric.endswith("_pct"),
                                                min_effect)]
    judged = [m for m in marks if m != "?"]
    positives = marks.count("")
    lines = [f"{metric}: {len(pairs)} points, A/A halves of their repetitions "
             f"({stats.span({len(a) for a, _ in pairs} | {len(b) for _, b in pairs})}"
             " a side)"]
    if judged:
        lines.append(f"  false positives: {positives} of {len(judged)} judged "
                     f"({100 * positives / len(judged):.1f}%); "
                     f"{len(marks) - len(judged)} without a verdict (< "
                     f"{stats.MIN_REPS_FOR_TEST} repetitions a half)")
    else:
        lines.append(f"  no verdict: every half has fewer than "
                     f"{stats.MIN_REPS_FOR_TEST} repetitions")
    for name, values in (("CV (stddev/mean)", cvs), ("robust spread", spreads)):
        if values:
            lines.append(f"  {name} across points: median {statistics.median(values):.2f}%, "
                         f"p90 {percentile(values, 0.9):.2f}%, max {max(values):.2f}%")
    return lines


def noise_command(argv):
    args = build_parser().parse_intermixed_args(argv)
    results = load(args.results)
    primary = results.context.get("kscale_primary_metric", "ops_per_sec")
    metrics = cli.metric_list(args.metric, [primary])
    if args.min_effect < 0:
        raise KscaleError("--min-effect must be >= 0")
    out = []
    for metric in metrics:
        results.require_metric(metric)
        out += aa_report(results, metric, args.min_effect)
    sys.stdout.write("\n".join(out) + "\n")


def main(argv):
    return cli.run(PROG, noise_command, argv)
