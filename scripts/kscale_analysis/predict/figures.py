"""kscale predict's plots: per model, gnuplot's PNG and SVG of the
predicted and measured rates."""

import math
import os
import subprocess
from dataclasses import dataclass

from .. import plot, stats, usl
from ..results import KscaleError
from .series import values


@dataclass
class Curve:
    title: str
    predicted: list  # [(cpus, per CPU)] on the table machine
    measured: list   # [(threads, median, min, max)] per CPU, here
    usl: list        # [(cpus, per CPU)] of the USL fit, or []
    simulated: list  # [(threads, median, min, max)] per CPU, simulated there


def per_cpu_points(s, metric, most):
    """[(threads, median, min, max)] per CPU of a series' rows, up to most."""
    points = []
    for n in sorted(set(s.profiled) | set(s.plain)):
        per_cpu = [x if metric.endswith("_per_cpu") else x / n
                   for x in values(s.measured(n), metric)]
        if n <= most and per_cpu:
            points.append((n, stats.median(per_cpu), min(per_cpu), max(per_cpu)))
    return points


def model_curves(variants, label, here, target, simulated):
    """A curve per variant; simulated: the series of runs simulated on the
    table machine, by key."""
    curves = []
    for v in variants:
        metric, s = v.params.metric, v.series
        measured = per_cpu_points(s, metric, here.cpus)
        sim = simulated.get(v.params.key)
        sim = per_cpu_points(sim, metric, target.cpus) if sim else []
        fitted = []
        if isinstance(v.fit, usl.Fit):
            fitted = [(p.threads, v.params.ratio * v.fit(p.threads) / p.threads)
                      for p in v.table]
        predicted = [(p.threads, p.per_cpu) for p in v.table]
        # a log axis: only positive (finite) values
        curves.append(Curve(label[v.params.key],
                            *([p for p in points if all(0 < x < math.inf for x in p)]
                              for points in (predicted, measured, fitted, sim))))
    return curves


def plot_script(title, ylabel, curves, data, png, svg, counts):
    """gnuplot commands: per curve its prediction (a line), the measured
    medians (min..max bars), any USL fit (dashed) and any simulated medians
    (dotted, min..max bars), in one colour."""
    items, index = [], 0
    for i, c in enumerate(curves, start=1):
        for points, style, what in ((c.predicted, "lines lw 2", "model"),
                                    (c.measured, "yerrorbars pt 7 ps 1.2", "measured"),
                                    (c.usl, "lines dt 2 lw 1", "USL"),
                                    (c.simulated, "yerrorlines dt 3 pt 6 ps 1",
                                     "simulated")):
            if points:
                using = "1:2:3:4" if what in ("measured", "simulated") else "1:2"
                items.append(f"{plot.gp_str(data)} index {index} using {using} with {style} "
                             f"lt {i} title {plot.gp_str(f'{c.title} ({what})')}")
                index += 1
    return "\n".join([
        "set terminal pngcairo size 1000,650 noenhanced",
        f"set output {plot.gp_str(png)}",
        f"set title {plot.gp_str(title)}",
        "set xlabel 'CPUs (threads), log2'",
        f"set ylabel {plot.gp_str(ylabel)}",
        "set logscale x 2",
        "set logscale y 10",
        f"set xrange [0.8:{counts[-1] * 1.25}]",
        f"set xtics ({', '.join(map(str, counts))})",
        "set format y '%.1s%c'",
        "set key outside right top",
        "set grid",
        f"plot {', '.join(items)}",
        "set terminal svg size 1000,650 dynamic noenhanced background rgb 'white'",
        f"set output {plot.gp_str(svg)}",
        "replot",
        "unset output",
        "",
    ])


def plot_data(curves):
    blocks = []
    for c in curves:
        for points in (c.predicted, c.measured, c.usl, c.simulated):
            if points:
                blocks.append("\n".join(" ".join(repr(x) for x in p) for p in points))
    return "\n\n\n".join(blocks) + "\n"


def render_plot(gnuplot, workdir, stem, title, ylabel, curves, counts):
    """Run gnuplot in workdir; [(image, destination)] of its PNG and SVG."""
    base = os.path.join(workdir, os.path.basename(stem))
    images = {ext: base + ext for ext in (".png", ".svg")}
    with open(base + ".dat", "w") as f:
        f.write(plot_data(curves))
    with open(base + ".gp", "w") as f:
        f.write(plot_script(title, ylabel, curves, base + ".dat", images[".png"],
                            images[".svg"], counts))
    try:
        proc = subprocess.run([gnuplot, base + ".gp"], capture_output=True,
                                   text=True, timeout=plot.GNUPLOT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise KscaleError(f"cannot run {gnuplot}: {e}", status=1) from None
    if proc.returncode != 0 or not all(map(plot.nonempty, images.values())):
        detail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise KscaleError(f"gnuplot failed for {stem}: {detail}", status=1)
    return [(path, stem + ext) for ext, path in images.items()]
