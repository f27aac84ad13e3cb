#!/usr/bin/python3
"""fuzz plot: kscale plot on one results file and on it merged with a
corpus file (load_merged), the gnuplot data and script written for each
plot; gnuplot itself is not run (a stand-in writes the images), so an
input costs milliseconds.

Property: kscale plot exits 0 or 2; on failure its stderr is one
'kscale plot: ...' line, stdout is empty and the out dir holds no image;
on success it prints the images it wrote, each complete, and its data
files hold only finite numbers.  See pyfuzz.py for the options."""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfuzz  # noqa: E402
from pyfuzz import require, run_main  # noqa: E402
from results_strategies import results_inputs  # noqa: E402

from kscale_analysis import plot  # noqa: E402

NAME = "plot"
work = pyfuzz.Workdir()
SEED = os.path.join(pyfuzz.CORPUS, "results", "mnt.json")


def fake_render(gnuplot, p, workdir, index, data_text=plot.data_text,
                script_text=plot.script_text):
    """plot.render without gnuplot: the data and script it would get, and
    stand-in images."""
    data = data_text(p)
    for line in data.splitlines():
        if line:
            require(all(math.isfinite(float(x)) for x in line.split()),
                    f"data line {line!r}")
    base = os.path.join(workdir, str(index))
    images = {".png": base + ".png", ".svg": base + ".svg"}
    script = script_text(p, base + ".dat", images[".png"], images[".svg"])
    require("\0" not in script, "NUL in the gnuplot script")
    for path in images.values():
        with open(path, "w") as f:
            f.write("image\n")
    return images


def check(data):
    with pyfuzz.patched(plot, render=fake_render, find_gnuplot=lambda: "/bin/true"):
        plots(data)


def plots(data):
    work.reset()
    path = work.write("fz.json", data)
    for files in ([path], [path, SEED]):
        out = os.path.join(work.path, "plots")
        status, stdout = run_main(plot.PROG, plot.main,
                                  files + [f"--out-dir={out}", "--metric=ops_per_sec"])
        made = {f for f in work.files() if f.startswith("plots/")}
        if status:
            require(not made, f"plot failed but wrote {made}")
        else:
            printed = {os.path.relpath(p, work.path) for p in stdout.split()}
            require(printed == made and made, f"printed {printed}, wrote {made}")
        pyfuzz.no_temp_files(work)
        work.reset()
        path = work.write("fz.json", data)


if __name__ == "__main__":
    sys.exit(pyfuzz.main(NAME, check, results_inputs("results"), ext=".json"))
