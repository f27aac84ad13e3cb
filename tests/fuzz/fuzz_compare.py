#!/usr/bin/python3
"""fuzz compare: the commands that read a results file and judge it:
kscale compare (one file, variants and knob or thread selectors; two
files), noise, summary (a headline on the file) and adaptive (check,
merge), each called as its script calls it.

Property: each exits 0 (adaptive check: 0 or 1) or 2; on failure its
stderr is one 'kscale CMD: ...' line and stdout is empty, on success
stderr holds only 'kscale CMD: ...' warnings; summary --out and adaptive
merge leave the complete files or none, and no temp file.  See pyfuzz.py
for the options."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfuzz  # noqa: E402
from pyfuzz import require, run_main  # noqa: E402
from results_strategies import results_inputs  # noqa: E402

from kscale_analysis import adaptive, compare, noise, results, summary  # noqa: E402
from kscale_analysis.results import KscaleError  # noqa: E402

NAME = "compare"
work = pyfuzz.Workdir()
SEED = os.path.join(pyfuzz.CORPUS, "results", "mnt.json")
CLAIMS = os.path.join(pyfuzz.ROOT, "configs", "seed-claims.tsv")


def selectors(res):
    """(before, after) pairs to compare within one file: two variants;
    one variant at two values of a knob; one variant at all and all*2
    threads."""
    variants = res.variants()
    pairs = [(variants[0], variants[-1])]
    runs = list(res.runs.values())
    for run in runs:
        for key, value in run.knobs:
            other = next((v for r in runs for k, v in r.knobs
                          if k == key and v != value and r.variant == run.variant), None)
            if other is not None:
                pairs.append((f"{run.variant}/{key}:{value}", f"{run.variant}/{key}:{other}"))
                break
        else:
            continue
        break
    pairs.append((f"{variants[0]}/threads:all", f"{variants[0]}/threads:all*2"))
    return pairs


def check_summary(path, before, after):
    """kscale summary --out on a headline of the file: both tables or none."""
    out = os.path.join(work.path, "summary")
    for ext in (".txt", ".md"):
        if os.path.exists(out + ext):
            os.unlink(out + ext)
    before_files = work.files()
    status, stdout = run_main(summary.PROG, summary.main,
                              [f"--claims={CLAIMS}", f"--out={out}", work.path,
                               f"fz {before} {after} --seed=000"])
    made = work.files() - before_files
    if status:
        require(not made, f"summary failed but wrote {made}")
    else:
        require(made == {"summary.txt", "summary.md"}, f"summary wrote {made}")
        require(stdout == f"{out}.txt\n{out}.md\n", f"summary printed {stdout!r}")
    pyfuzz.no_temp_files(work)


def check_adaptive(path):
    run_main(adaptive.PROG, adaptive.main, ["check", "--target-ci=5", path], (0, 1, 2),
             verdicts=(1,))
    merged = os.path.join(work.path, "merged.json")
    status, _ = run_main(adaptive.PROG, adaptive.main, ["merge", merged, SEED, path])
    if status == 0:
        results.load(merged)  # what it wrote reads back
    else:
        require(not os.path.exists(merged), "merge failed but wrote its file")
    pyfuzz.no_temp_files(work)


def check(data):
    work.reset()
    path = work.write("fz.json", data)
    try:
        res = results.load(path)
    except KscaleError:
        res = None
    pairs = selectors(res) if res else [("atomic", "percpu")]
    for before, after in pairs:
        for fmt in ("text", "markdown"):
            run_main(compare.PROG, compare.main,
                     [path, f"--before={before}", f"--after={after}", f"--format={fmt}"])
    if res and res.metrics():
        metrics = ",".join(res.metrics()[:2])
        run_main(compare.PROG, compare.main, [path, f"--before={pairs[0][0]}",
                                              f"--after={pairs[0][1]}", f"--metric={metrics}"])
    run_main(compare.PROG, compare.main, [path, SEED])
    run_main(compare.PROG, compare.main, [SEED, path, "--format=markdown"])
    run_main(noise.PROG, noise.main, [path])
    if res and res.metrics():
        run_main(noise.PROG, noise.main, [path, f"--metric={res.metrics()[-1]}"])
    check_summary(path, *pairs[0])
    if res:  # one point: pinned to a thread count
        threads = next(iter(res.runs.values())).threads
        check_summary(path, *(f"{v}/threads:{threads}" for v in pairs[0]))
    check_adaptive(path)


if __name__ == "__main__":
    sys.exit(pyfuzz.main(NAME, check, results_inputs("results"), ext=".json"))
