"""kscale predict's command line."""

import os
import sys
import tempfile

from .. import cli, plot
from ..results import KscaleError, load, one_line, simulated as sim_machine
from . import figures
from .machine import MAX_CPUS, context_machine, extended, machine_path, read_machine
from .network import predict, slowdown, table_counts
from .profile import extract
from .report import labels, render, report_parts
from .seeds import read_seed_scale, seed_line
from .series import gather, is_profiled, key_label, primary_metric, timing_rows
from .validate import Variant, fit_usl, validate


PROG = "kscale predict"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))))
USAGE = (f"{PROG} [RESULTS.json...] [--machine=FILE|NAME] [--out-dir=DIR] "
         "[--seed-scale=FILE] [--seeds=LIST] [--sim-validation=FILE]")
DESCRIPTION = f"""\
Predict each variant's scaling from its 1-thread profile (rows of a
--profile run: res_*_visits counters) by exact mean value analysis of a
closed queueing network; validate the prediction on every measured
thread count first; then, per seed of the --seed-scale file, the
predicted after/before ratio on the seed's machine beside the seed's
figure.  RESULTS default to $KSCALE_RESULTS/default/*.json (the tour's
files, {os.path.join('results', 'default')} unless KSCALE_RESULTS is
set).  The table is printed and written to RESULTS_DIR/predict.txt and
.md (RESULTS_DIR: the first results file's directory); a PNG and an SVG
plot per model go to --out-dir (default $KSCALE_PLOTS/NAME, NAME being
RESULTS_DIR's name).  Without --machine the table's machine is this one's
line latencies (from the results) extended to {MAX_CPUS} CPUs on one
node; a --machine is configs/machines/NAME.conf or a file path
('key = value' lines: name, cpus, nodes, threads_per_core, line_ns_smt,
line_ns_node, line_ns_remote, ghz).  Simulated results files (bench
--sim) among RESULTS are not predicted from: their curves go on the plot
of the machine they simulated, and a seed's figure is the simulator's
where a simulated run on the seed's machine has the seed's point and
`kscale sim-validate` reproduced that seed's ratio on this machine
(--sim-validation); the table says which model gave each figure."""


def results_dir():
    return os.path.realpath(os.environ.get("KSCALE_RESULTS") or os.path.join(ROOT, "results"))


def plots_dir():
    return os.path.realpath(os.environ.get("KSCALE_PLOTS") or os.path.join(ROOT, "plots"))


def build_parser():
    parser = cli.ArgumentParser(prog=PROG, usage=USAGE, description=DESCRIPTION,
                                allow_abbrev=False)
    parser.add_argument("results", nargs="*", metavar="RESULTS.json",
                        help="results files, profiled and plain (default: "
                             "$KSCALE_RESULTS/default/*.json)")
    parser.add_argument("--machine", metavar="FILE|NAME",
                        help="the table's machine: a machine file, or NAME for "
                             "configs/machines/NAME.conf (default: this machine's "
                             f"line latencies, {MAX_CPUS} CPUs on one node)")
    parser.add_argument("--out-dir", metavar="DIR",
                        help="where the plots go (default: $KSCALE_PLOTS/NAME)")
    parser.add_argument("--seed-scale", metavar="FILE",
                        default=os.path.join(ROOT, "configs", "seed-scale.tsv"),
                        help="each seed's machine, thread count and figure "
                             "(default: configs/seed-scale.tsv); seed machines are "
                             "machines/NAME.conf beside it")
    parser.add_argument("--seeds", metavar="LIST",
                        help="only these seeds' lines of the seed table "
                             "(comma-separated; default: every seed; none: no "
                             "seed table, where a summary gives the seeds' "
                             "figures)")
    parser.add_argument("--sim-validation", metavar="FILE",
                        help="kscale sim-validate's verdicts on this machine "
                             "(default: $KSCALE_RESULTS/sim-validate/validation.json)")
    return parser



def default_results():
    directory = os.path.join(results_dir(), "predict")
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        names = []
    if not names:
        raise KscaleError(f"no results in {directory}: run 'scripts/kscale run "
                          "predict' (configs/predict.conf), or name RESULTS files")
    return [os.path.join(directory, n) for n in names]


def build_variants(series, here, target):
    """A Variant per series with 1-thread profiled rows, validated on the
    line latencies its own profiled file measured; the others' names."""
    variants, skipped, notes = [], [], []
    counts = table_counts(target)
    for s in sorted(series.values(), key=lambda s: (s.key[0], s.order, s.key)):
        if 1 not in s.profiled:
            skipped.append(key_label(s.key))
            continue
        metric = primary_metric(s)
        params = extract(s.key, s.profiled[1], s.profiled.get(2), metric, timing_rows(s))
        profiled = extract(s.key, s.profiled[1], s.profiled.get(2), metric)
        notes += params.notes
        own = context_machine([s.profile_context], key_label(s.key))
        table = [predict(params, target, n, slowdown(here, target)) for n in counts]
        variants.append(Variant(params, s, validate(params, profiled, s, own), table,
                                fit_usl(s, here)))
    if skipped:
        notes.append("not predicted (no 1-thread profiled rows): "
                     + ", ".join(dict.fromkeys(skipped)))
    return variants, notes


def predict_command(argv):
    args = build_parser().parse_intermixed_args(argv)
    paths = args.results or default_results()
    loaded = [load(p) for p in paths]
    by_machine = {}
    for res in loaded:
        if machine := sim_machine(res):
            by_machine.setdefault(machine, []).append(res)
    simulated = {machine: gather(files) for machine, files in by_machine.items()}
    loaded = [res for res in loaded if not sim_machine(res)]
    series = gather(loaded)
    profiled = [s for s in series.values() if 1 in s.profiled]
    if not profiled:
        raise KscaleError(f"{', '.join(paths)}: no 1-thread profiled rows (res_*_visits "
                          "counters): run the bench binaries with --profile")
    contexts = {id(s.profile_context): s.profile_context for s in profiled}
    here = context_machine(list(contexts.values()), ", ".join(paths))
    target = (read_machine(machine_path(args.machine, os.path.join(ROOT, "configs", "machines")))
              if args.machine else extended(here))
    scales = read_seed_scale(args.seed_scale)
    if args.seeds == "none":
        scales = []
    elif args.seeds:
        wanted = args.seeds.split(",")
        unknown = [seed for seed in wanted if seed not in {s.seed for s in scales}]
        if unknown:
            raise KscaleError(f"--seeds: no seed {', '.join(unknown)} in {args.seed_scale}")
        scales = [s for s in scales if s.seed in wanted]
    variants, notes = build_variants(series, here, target)
    validation = cli.read_json_if_any(args.sim_validation or os.path.join(
        results_dir(), "sim-validate", "validation.json"))
    seeds = [seed_line(s, variants, here, simulated.get(s.machine.name), validation)
             for s in scales]
    label = labels(variants)
    models = {}
    for v in variants:
        models.setdefault(v.params.key[0], []).append(v)
    counts = table_counts(target)
    files = [os.path.basename(p) for p in paths]
    measured = []
    for res in loaded:
        if any(is_profiled(r) for run in res.runs.values() for r in run.rows):
            m = context_machine([res.context], res.label)
            measured.append((os.path.basename(res.label), ", ".join(
                f"{k} {v:g}" for k, v in m.line_ns.items() if v is not None)))
    parts = report_parts(models, seeds, label, here, target, counts, notes, files,
                         measured)
    for note in notes:  # after the last check of the input: an error is one line
        print(f"{PROG}: warning: {one_line(note)}", file=sys.stderr)
    text, markdown = render(parts, False), render(parts, True)

    out_base = os.path.join(os.path.dirname(os.path.abspath(paths[0])), "predict")
    out_dir = args.out_dir or os.path.join(
        plots_dir(), os.path.basename(os.path.dirname(os.path.abspath(paths[0]))))
    staged = []
    try:
        gnuplot = plot.find_gnuplot()
    except KscaleError as e:
        gnuplot = None
        print(f"{PROG}: {e}; plots skipped", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="kscale-predict.") as workdir:
        if gnuplot:
            for model, vs in models.items():
                metric = vs[0].params.metric
                ylabel = metric if metric.endswith("_per_cpu") else f"{metric} per CPU"
                sims = simulated.get(target.name, {})
                title = (f"{model}: {ylabel}\nlines: predicted on {target.name}"
                         + (", dotted: simulated there" if sims else "") +
                         f"\npoints: measured on {here.name} (median, min..max), "
                         f"up to its {here.cpus} CPUs")
                stem = plot.short_name(f"predict-{plot.safe(model)}")
                curves = figures.model_curves(vs, label, here, target, sims)
                staged += figures.render_plot(gnuplot, workdir, os.path.join(out_dir, stem),
                                              title, ylabel, curves, counts)
        files = [(out_base + ".txt", text.encode()), (out_base + ".md", markdown.encode())]
        for src, dest in staged:
            with open(src, "rb") as f:
                files.append((dest, f.read()))
        try:
            cli.write_together(files)  # the tables and plots, or none
        except OSError as e:
            raise KscaleError(f"cannot write {e.filename or ''}: {e.strerror or e}") from None
    sys.stdout.write(text)
    for path, _ in files[2:] + files[:2]:
        print(path)


def main(argv):
    return cli.run(PROG, predict_command, argv)
