#!/usr/bin/python3
"""fuzz predict: kscale predict on one results file (profiled counters
res_*, the context's line latencies, CPUs, nodes, clock) alone and
merged with a profiled corpus file, on this machine extended and on a
seed machine, with configs/seed-scale.tsv; the gnuplot data and script
are written, gnuplot is not run.

Property: kscale predict exits 0 or 2 within pyfuzz.EXEC_TIMEOUT; on
failure its stderr is one 'kscale predict: ...' line, stdout is empty
and it wrote nothing; on success it wrote predict.txt and .md beside
the results, printed the table as written, and its plot data holds only
finite numbers.  See pyfuzz.py for the options."""

import contextlib
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfuzz  # noqa: E402
from pyfuzz import require, run_main  # noqa: E402
from results_strategies import results_inputs  # noqa: E402

from kscale_analysis import plot, predict  # noqa: E402
from kscale_analysis.predict import figures  # noqa: E402

NAME = "predict"
work = pyfuzz.Workdir()
SEED = os.path.join(pyfuzz.CORPUS, "predict", "mnt.json")
SEED_SCALE = os.path.join(pyfuzz.ROOT, "configs", "seed-scale.tsv")


def fake_render_plot(gnuplot, workdir, stem, title, ylabel, curves, counts):
    """figures.render_plot without gnuplot."""
    for line in figures.plot_data(curves).splitlines():
        if line:
            require(all(math.isfinite(float(x)) for x in line.split()),
                    f"plot data line {line!r}")
    base = os.path.join(workdir, os.path.basename(stem))
    figures.plot_script(title, ylabel, curves, base + ".dat", base + ".png", base + ".svg",
                        counts)
    staged = []
    for ext in (".png", ".svg"):
        with open(base + ext, "w") as f:
            f.write("image\n")
        staged.append((base + ext, stem + ext))
    return staged


@contextlib.contextmanager
def stand_ins():
    """gnuplot found, not run."""
    with pyfuzz.patched(figures, render_plot=fake_render_plot), \
            pyfuzz.patched(plot, find_gnuplot=lambda: "/bin/true"):
        yield


def run(files, *options):
    out = os.path.join(work.path, "plots")
    before = work.files()
    status, stdout = run_main(predict.PROG, predict.main,
                              files + [f"--seed-scale={SEED_SCALE}", f"--out-dir={out}",
                                       *options])
    made = work.files() - before
    table = os.path.join(os.path.dirname(files[0]), "predict")
    if status:
        require(not made, f"predict failed but wrote {made}")
    else:
        with open(table + ".txt", encoding="utf-8") as f:
            text = f.read()
        require(stdout.startswith(text) and stdout.endswith(f"{table}.txt\n{table}.md\n"),
                "stdout is not the table, the images and the table's files")
        require(os.path.relpath(table + ".md", work.path) in made, "no predict.md")
    pyfuzz.no_temp_files(work)


def check(data):
    with stand_ins():
        runs(data)


def runs(data):
    for extra, options in (([], []), ([SEED], []), ([], ["--machine=sgi-altix3700-512p"])):
        work.reset()
        run([work.write("results/fz/fz.json", data)] + extra, *options)


if __name__ == "__main__":
    sys.exit(pyfuzz.main(NAME, check, results_inputs("predict"), ext=".json"))
