"""kscale adaptive: repetitions until the confidence intervals are narrow.

`scripts/kscale run` calls it between batches of a run line that has
--target-ci=PCT: `check` says whether every point's bootstrap 95%
confidence interval of its median (over the batches so far) has a
half-width below PCT % of the median; `merge` joins the batches into one
results file (temp file, then rename).
"""

import json
import os
import random
import sys

from . import cli, stats
from .results import KscaleError, _read_json, load, load_merged

PROG = "kscale adaptive"
USAGE = (f"{PROG} check --target-ci=PCT RESULTS.json...\n"
         f"       {PROG} merge OUT.json RESULTS.json...")


def median_ci_halfwidth(values, resamples=stats.BOOTSTRAP_RESAMPLES,
                        seed=stats.BOOTSTRAP_SEED):
    """Half the width of the bootstrap 95% interval of the median, as % of
    the median; None below MIN_REPS_FOR_TEST values or with a 0 median."""
    mid = stats.median(values)
    if len(values) < stats.MIN_REPS_FOR_TEST or not mid:
        return None
    rng = random.Random(seed)
    meds = sorted(stats.median(rng.choices(values, k=len(values)))
                  for _ in range(resamples))
    lo = meds[int(0.025 * (resamples - 1))]
    hi = meds[int(round(0.975 * (resamples - 1)))]
    return (hi - lo) / 2 / abs(mid) * 100


def widest(paths, metric=None):
    """(half-width %, point name, repetitions) of the least certain point."""
    res = load_merged(paths)
    metric = metric or res.context.get("kscale_primary_metric", "ops_per_sec")
    worst = (0.0, "", 0)
    for run in res.runs.values():
        values = run.values(metric)
        half = median_ci_halfwidth(values)
        if half is None:
            return float("inf"), run.name, len(values)
        worst = max(worst, (half, run.name, len(values)))
    return worst


def merge(out, paths):
    """One results file holding every batch's rows, the first's context;
    KscaleError, and no file, if a batch is no results file."""
    for path in paths:
        load(path)
    docs = [_read_json(p) for p in paths]
    merged = dict(docs[0])
    merged["benchmarks"] = [row for doc in docs for row in doc.get("benchmarks", [])]
    tmp = cli.temp_path(out)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(merged, f, indent=1)
    os.replace(tmp, out)


def adaptive_command(argv):
    parser = cli.ArgumentParser(prog=PROG, usage=USAGE, description=__doc__,
                                allow_abbrev=False)
    parser.add_argument("action", choices=("check", "merge"))
    parser.add_argument("files", nargs="+")
    parser.add_argument("--target-ci", metavar="PCT")
    parser.add_argument("--metric")
    args = parser.parse_intermixed_args(argv)
    if args.action == "merge":
        if len(args.files) < 2:
            raise KscaleError("merge needs OUT.json and at least one results file")
        merge(args.files[0], args.files[1:])
        return
    try:
        target = float((args.target_ci or "").rstrip("%"))
    except ValueError:
        raise KscaleError(f"--target-ci={args.target_ci}: expected a percentage, "
                          "e.g. 2%") from None
    if target <= 0:
        raise KscaleError("--target-ci must be above 0")
    half, name, n = widest(args.files, args.metric)
    print(f"widest 95% CI of a median: ±{half:.2f}% ({name}, {n} repetitions); "
          f"target ±{target:g}%")
    if half >= target:
        raise KscaleError(f"±{half:.2f}% is not below ±{target:g}% yet", status=1)


def main(argv):
    return cli.run(PROG, adaptive_command, argv)
