"""kscale plot: scalability curves (metric vs CPU count, a line per variant)."""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from . import cli, stats
from .results import KscaleError, group_runs, knob_text, load_merged, one_line, unit

PROG = "kscale plot"
DEFAULT_METRICS = ["ops_per_sec", "ops_per_sec_per_cpu"]
INSTALL_HINT = "gnuplot not found; install it with: sudo apt-get install gnuplot-nox"
GNUPLOT_TIMEOUT = 60
USAGE = (f"{PROG} RESULTS.json [RESULTS2.json ...] [--out-dir=DIR] "
         "[--metric=NAME[,NAME...]] [--prefix=NAME]")
DESCRIPTION = """\
Plot each metric against the CPU (thread) count, one PNG and one SVG per
(model, workload, knobs) and metric, a line per variant: the median over
repetitions with min..max error bars. Several results files are merged
(repetitions of identical benchmark names are pooled); files of different
sources, a simulated machine and this machine, keep their own lines, each
variant named with its source ("atomic (ibm-x445-numa-2007)", "atomic
(here)"). The gnuplot binary can
be overridden with the KSCALE_GNUPLOT environment variable."""


@dataclass
class Plot:
    stem: str     # output path without extension
    title: str
    ylabel: str
    series: list  # [(variant, [(threads, median, min, max), ...]), ...] or [Band]


@dataclass
class Band:
    """A published curve against its simulation (kscale sim-validate
    --published): the published points, the simulated median and its
    min..max over seeds."""
    name: str
    published: list  # [(threads, value), ...]
    simulated: list  # [(threads, median, min, max), ...]


def build_parser():
    parser = cli.ArgumentParser(prog=PROG, usage=USAGE, description=DESCRIPTION,
                                allow_abbrev=False)
    parser.add_argument("results", nargs="+", metavar="RESULTS.json", help="results file(s)")
    parser.add_argument("--out-dir", default="plots", metavar="DIR",
                        help="output directory, created if needed (default: plots)")
    parser.add_argument("--metric", action="append", metavar="NAME[,NAME...]",
                        help="metric(s) to plot, repeatable "
                             f"(default: {','.join(DEFAULT_METRICS)})")
    parser.add_argument("--prefix", metavar="NAME",
                        help="file name prefix instead of the model name")
    return parser


def safe(text):
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text)


def file_stem(prefix, model, workload, knobs, metric):
    parts = [prefix or model, workload]
    if knobs:
        parts.append("_".join(f"{k}-{v}" for k, v in knobs))
    return short_name("-".join(safe(p) for p in parts + [metric]))


NAME_MAX = 255  # bytes of a file name
ROOM = len(".png") + len("..12345678.tmp")  # an extension, cli.temp_path()'s name


def short_name(name, room=ROOM):
    """name (safe(): ASCII), or where it would not make a file name with an
    extension (and a temp file name), its start and a hash of all of it."""
    if len(name) + room <= NAME_MAX:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:12]
    return f"{name[:NAME_MAX - room - len(digest) - 1]}-{digest}"


def series(runs, metric):
    """[(variant, [(threads, median, min, max), ...]), ...] skipping empty points.

    Variants keep the model's order (registration order, family_index),
    whatever order random interleaving ran them in."""
    lines = {}
    for run in sorted(runs, key=lambda r: (r.order, r.threads)):
        values = run.values(metric)
        if values:
            point = (run.threads, stats.median(values), min(values), max(values))
            lines.setdefault(run.variant, []).append(point)
    return list(lines.items())


def plan(results, metrics, out_dir, prefix):
    plots, skipped = [], []
    for (model, workload, knobs), runs in group_runs(results.runs.values()).items():
        for metric in metrics:
            where = f"{model}/{workload}"
            lines = series(runs, metric)
            if not lines:
                skipped.append(f"{PROG}: skipping {one_line(where)}: no {metric} data")
                continue
            reps = stats.span({len(r.values(metric)) for r in runs} - {0})
            # knobs on their own line: long knob lists no longer run off the page
            title = (f"{where}: {metric}\n{knob_text(knobs)}\n"
                     f"median of {reps} repetitions, error bars: min..max")
            stem = os.path.join(out_dir, file_stem(prefix, model, workload, knobs, metric))
            plots.append(Plot(stem, title, unit(metric, results) or metric, lines))
    if not plots:
        raise KscaleError(f"nothing to plot: no {' or '.join(metrics)} data")
    stems = [p.stem for p in plots]
    if len(set(stems)) != len(stems):
        raise KscaleError("two plots map to the same file name; use distinct knob values")
    for line in skipped:  # once the plan holds: an error is one line
        print(line, file=sys.stderr)
    return plots


def find_gnuplot():
    gnuplot = shutil.which(os.environ.get("KSCALE_GNUPLOT") or "gnuplot")
    if not gnuplot:
        raise KscaleError(INSTALL_HINT)
    return gnuplot


def gp_str(text):
    """A gnuplot double-quoted string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def data_text(plot):
    """One gnuplot data block per variant (selected with `index`)."""
    blocks = ["\n".join(f"{t} {med!r} {lo!r} {hi!r}" for t, med, lo, hi in points)
              for _, points in plot.series]
    return "\n\n\n".join(blocks) + "\n"


def band_data_text(plot):
    """Two gnuplot data blocks per Band: its published points, then its
    simulated median, min and max."""
    blocks = []
    for band in plot.series:
        blocks.append("\n".join(f"{t} {v!r}" for t, v in band.published))
        blocks.append("\n".join(f"{t} {med!r} {lo!r} {hi!r}"
                                for t, med, lo, hi in band.simulated))
    return "\n\n\n".join(blocks) + "\n"


def band_script_text(plot, data, png, svg):
    xs = sorted({p[0] for band in plot.series for p in band.published})
    ymax = max([p[3] for band in plot.series for p in band.simulated] +
               [p[1] for band in plot.series for p in band.published])
    curves = []
    for i, band in enumerate(plot.series):
        color = f"lc {i + 1}"
        curves += [f"{gp_str(data)} index {2 * i + 1} using 1:3:4 with "
                   f"filledcurves {color} fs transparent solid 0.2 notitle",
                   f"{gp_str(data)} index {2 * i + 1} using 1:2 with lines "
                   f"{color} lw 2 title {gp_str(band.name + ' simulated')}",
                   f"{gp_str(data)} index {2 * i} using 1:2 with points "
                   f"{color} pt 7 ps 1.2 title "
                   f"{gp_str(band.name + ' published')}"]
    return axes_text(plot, png, xs, ymax) + "\n".join([
        f"plot {', '.join(curves)}", *replot_svg(svg)])


def axes_text(plot, png, xs, ymax):
    pad = max(0.5, (xs[-1] - xs[0]) * 0.05)
    return "\n".join([
        "set terminal pngcairo size 900,600 noenhanced",
        f"set output {gp_str(png)}",
        f"set title {gp_str(plot.title)}",
        "set xlabel 'CPUs (threads)'",
        f"set ylabel {gp_str(plot.ylabel)}",
        f"set xrange [{xs[0] - pad}:{xs[-1] + pad}]",
        f"set xtics ({', '.join(map(str, xs))})" if len(xs) <= 16 else "set xtics",
        "set yrange [0:*]",
        "set offsets 0, 0, graph 0.05, 0",
        "set format y '%.1s%c'" if ymax >= 1e4 else "set format y '%g'",
        "set key outside right top",
        "set grid",
        ""])


def replot_svg(svg):
    return ["set terminal svg size 900,600 dynamic noenhanced background rgb 'white'",
            f"set output {gp_str(svg)}",
            "replot",
            "unset output",
            ""]


def script_text(plot, data, png, svg):
    xs = sorted({p[0] for _, points in plot.series for p in points})
    ymax = max(p[3] for _, points in plot.series for p in points)
    curves = ", ".join(f"{gp_str(data)} index {i} using 1:2:3:4 with yerrorlines "
                       f"lw 2 pt 7 title {gp_str(variant)}"
                       for i, (variant, _) in enumerate(plot.series))
    return axes_text(plot, png, xs, ymax) + "\n".join([
        f"plot {curves}", *replot_svg(svg)])


def nonempty(path):
    return os.path.isfile(path) and os.path.getsize(path) > 0


def render(gnuplot, plot, workdir, index, data=data_text, script=script_text):
    """Run gnuplot for one plot into workdir, its data and script as data()
    and script() write them; returns {extension: image path}."""
    base = os.path.join(workdir, str(index))
    images = {".png": base + ".png", ".svg": base + ".svg"}
    with open(base + ".dat", "w") as f:
        f.write(data(plot))
    with open(base + ".gp", "w") as f:
        f.write(script(plot, base + ".dat", images[".png"], images[".svg"]))
    try:
        proc = subprocess.run([gnuplot, base + ".gp"], capture_output=True, text=True,
                              timeout=GNUPLOT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise KscaleError(f"cannot run {gnuplot}: {e}", status=1) from None
    if proc.returncode != 0 or not all(map(nonempty, images.values())):
        detail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise KscaleError(f"gnuplot failed for {plot.stem}: {detail}", status=1)
    return images


def install(staged):
    """Copy rendered images next to their destinations and rename them in place."""
    for src, dest in staged:
        os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
        tmp = cli.temp_path(dest)
        try:
            shutil.copyfile(src, tmp)
            os.replace(tmp, dest)
        except OSError:
            os.unlink(tmp)
            raise
        print(dest)


def write(gnuplot, plots, out_dir=None, data=data_text, script=script_text):
    """Render every plot in a scratch directory, then put each PNG and SVG
    in place and print its path; a failure to write them is one line
    naming out_dir where it is given."""
    with tempfile.TemporaryDirectory(prefix="kscale-plot.") as workdir:
        staged = []
        for index, p in enumerate(plots):
            images = render(gnuplot, p, workdir, index, data, script)
            staged += [(path, p.stem + ext) for ext, path in images.items()]
        try:
            install(staged)
        except OSError as e:
            if out_dir is None:
                raise
            raise KscaleError(f"cannot write {out_dir}: {e.strerror or e}") from None


def plot_command(argv):
    args = build_parser().parse_intermixed_args(argv)
    metrics = cli.metric_list(args.metric, DEFAULT_METRICS)
    results = load_merged(args.results, by_source=True)
    for metric in metrics:
        results.require_metric(metric)
    gnuplot = find_gnuplot()
    write(gnuplot, plan(results, metrics, args.out_dir, args.prefix), args.out_dir)


def main(argv):
    return cli.run(PROG, plot_command, argv)
