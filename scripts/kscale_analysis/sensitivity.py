"""kscale sim-sensitivity: how a simulated ratio moves with each estimate.

A headline of a simulated run (`headline ... --sensitivity` in a config)
rests on the figures of its machine file, some measured, some estimated
(their `source.KEY` line starts with "estimate").  This runs the
headline's two points again, first as they are and then with each
estimated figure of the simulator scaled by 1 - F and 1 + F (F = 0.3;
smt_throughput's gain over 1, FLOOR), a copy of the machine file a time,
all with the calibration the as-is run wrote (of the `auto` work and of
everything the simulator measures on the host), as many at a time as
--jobs says, and writes the after/before ratio of each (and the as-is
one's 95% interval: a move inside it is the seeds', not the figure's) to
RESULTS_DIR/LABEL.sensitivity.BEFORE-AFTER.json, which `kscale summary`
prints under the table.  Topology (cpus, nodes, threads_per_core,
line_bytes) is not varied: it is the machine's, not an estimate of a
cost.
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

from . import cli, compare, stats
from .predict.machine import machine_path, machine_values
from .results import KscaleError, load

PROG = "kscale sim-sensitivity"
USAGE = (f"{PROG} --results-dir=DIR --label=LABEL --before=SEL --after=SEL "
         "[--metric=NAME] [--factor=F] [--jobs=N] -- BINARY ARGS...")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
MACHINES = os.path.join(ROOT, "configs", "machines")
# each estimate times 1 - FACTOR and 1 + FACTOR, unless --factor says
FACTOR = 0.3
# the costs the simulator reads (lib/sim/machine.c), which an estimate moves
VARIED = ("ghz", "hit_ns", "line_ns_smt", "line_ns_node", "line_ns_remote",
          "mem_ns_local", "mem_ns_remote", "atomic_ns", "wake_ns", "ctxsw_ns",
          "ipc", "smt_throughput")
# Figures whose estimate is of what lies above a floor: smt_throughput, a
# core's throughput with two threads over one's, is 1 to 2
# (lib/sim/machine.c), and what is estimated is its gain over 1, which
# moves by F (1.25 -> 1.175, 1.325), not the whole (0.875, refused).
FLOOR = {"smt_throughput": 1.0}
# what the restricted runs set themselves
REPLACED = ("--variants=", "--benchmark_out=", "--benchmark_out_format=",
            "--sim=")


def path_of(results_dir, label, before, after):
    """Where the sensitivity of one headline is written (and read)."""
    def name(selector):
        return selector.replace("/", "_").replace("*", "x").replace(":", "-")
    return os.path.join(results_dir,
                        f"{label}.sensitivity.{name(before)}-{name(after)}.json")


def estimated(values):
    """The varied figures whose source is an estimate, with their values."""
    return {key: float(values[key]) for key in VARIED
            if key in values and values[key] != "none" and
            values.get(f"source.{key}", "").lower().startswith("estimate")}


def moved(key, value, factor):
    """KEY's VALUE with its estimated part (above FLOOR) times FACTOR."""
    floor = FLOOR.get(key, 0.0)
    return floor + (value - floor) * factor


def varied_text(text, key, value):
    """The machine file's text with KEY's value replaced."""
    out, n = re.subn(rf"(?m)^(\s*{re.escape(key)}\s*=\s*)[^#\s]+", rf"\g<1>{value:.6g}",
                     text)
    if n != 1:
        raise KscaleError(f"{key}: expected one '{key} = ' line in the machine file")
    return out


def restricted(args, before, after):
    """ARGS without the options the restricted runs set, and the
    --variants, knob and (for threads:N) --cpus options that run just
    BEFORE's and AFTER's points."""
    sides = [compare.parse_selector(before), compare.parse_selector(after)]
    knobs = {}
    for _, pinned in sides:
        for knob, value in pinned.items():
            knobs.setdefault(knob, [])
            if value not in knobs[knob]:
                knobs[knob].append(value)
    flags = {"--cpus=" if knob == "threads" else f"--{knob.replace('_', '-')}="
             for knob in knobs}
    out = [a for a in args
           if not a.startswith(REPLACED) and not a.startswith(tuple(flags))]
    variants = []
    for variant, _ in sides:
        if variant not in variants:
            variants.append(variant)
    out.append(f"--variants={','.join(variants)}")
    for knob, values in knobs.items():
        flag = "--cpus" if knob == "threads" else f"--{knob.replace('_', '-')}"
        out.append(f"{flag}={','.join(values)}")
    return out


def sim_option(args):
    sims = [a.split("=", 1)[1] for a in args if a.startswith("--sim=")]
    if len(sims) != 1 or sims[0] == "here":
        raise KscaleError("the run is not simulated on a machine file "
                          "(one --sim=MACHINE, not here)")
    return sims[0]


def ratio(path, before, after, metric):
    """The after/before ratio of the medians at the one point (None if
    there is none), and its bootstrap 95% interval (or None)."""
    metric, row = compare.one_point(load(path), before, after, metric, path)
    b, a = row.before.values(metric), row.after.values(metric)
    pct, ci = stats.change(b, a), stats.bootstrap_ci(b, a)
    return (None if pct is None else 1 + pct / 100,
            None if ci is None else [1 + x / 100 for x in ci])


# The benches running, for ended() to stop should one fail or Ctrl-C come.
running = set()


def run_bench(cmd, what):
    sys.stderr.write(f"{PROG}: {what}\n")  # one write: runs print at once
    sys.stderr.flush()
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True) as p:
        running.add(p)
        _, stderr = p.communicate()
        running.discard(p)
    if p.returncode:
        last = (stderr.strip().splitlines() or ["(no output)"])[-1]
        raise KscaleError(f"{what}: exit status {p.returncode}: {last}")


def ended(pool):
    """Nothing more started, and the benches running stopped."""
    pool.shutdown(wait=False, cancel_futures=True)
    for p in list(running):
        p.terminate()
    pool.shutdown(wait=True)


def build_parser():
    parser = cli.ArgumentParser(prog=PROG, usage=USAGE, description=__doc__,
                                allow_abbrev=False)
    parser.add_argument("--results-dir", required=True, metavar="DIR",
                        help="where the run's LABEL.json is, and the output goes")
    parser.add_argument("--label", required=True, help="the run's label")
    parser.add_argument("--before", required=True, metavar="SEL",
                        help="the headline's before selector")
    parser.add_argument("--after", required=True, metavar="SEL",
                        help="the headline's after selector")
    parser.add_argument("--metric", help="default: the model's primary one")
    parser.add_argument("--factor", type=float, default=FACTOR, metavar="F",
                        help="each estimate times 1 - F and 1 + F (default "
                        f"{FACTOR:g})")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        metavar="N",
                        help="re-runs at a time after the as-is one: simulated "
                        "with its calibration, each gives the same counters "
                        "whatever runs beside it (default: the CPUs this "
                        "process may run on)")
    parser.add_argument("command", nargs="+", metavar="BINARY ARGS",
                        help="the run's bench command, after --")
    return parser


def sensitivity_command(argv):
    args = build_parser().parse_args(argv)
    if not 0 < args.factor < 1:
        raise KscaleError(f"--factor={args.factor:g}: expected a number between 0 and 1")
    if args.jobs < 1:
        raise KscaleError(f"--jobs={args.jobs}: expected a positive number")
    if not os.path.isfile(os.path.join(args.results_dir, f"{args.label}.json")):
        raise KscaleError(f"--label={args.label}: no run {args.label} in {args.results_dir} "
                          f"(no {args.label}.json)")
    binary, bench_args = args.command[0], args.command[1:]
    path = machine_path(sim_option(bench_args), MACHINES)
    values = machine_values(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    figures = estimated(values)
    base_args = restricted(bench_args, args.before, args.after)
    out = path_of(args.results_dir, args.label, args.before, args.after)
    doc = {"machine": values.get("name", os.path.basename(path)),
           "before": args.before, "after": args.after, "metric": args.metric,
           "factor": args.factor, "figures": []}
    with tempfile.TemporaryDirectory(prefix="kscale-sensitivity.") as tmp:
        if not any(a.startswith("--calibration=") for a in base_args):
            base_args.append(f"--calibration={os.path.join(tmp, 'calibration')}")

        def one(name, machine_text):
            conf = os.path.join(tmp, f"{name}.conf")
            with open(conf, "w", encoding="utf-8") as f:
                f.write(machine_text)
            json_out = os.path.join(tmp, f"{name}.json")
            run_bench([binary, f"--sim={conf}", *base_args,
                       f"--benchmark_out={json_out}", "--benchmark_out_format=json"],
                      f"{args.label}: {name}")
            return ratio(json_out, args.before, args.after, args.metric)

        def rerun(key, side, factor):
            value = moved(key, figures[key], factor)
            return one(f"{key}-{side}", varied_text(text, key, value))[0]

        doc["base"], doc["base_ci"] = one("as-is", text)
        pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
        try:
            runs = {key: (pool.submit(rerun, key, "low", 1 - args.factor),
                          pool.submit(rerun, key, "high", 1 + args.factor))
                    for key in figures}
            for key, (low, high) in runs.items():
                doc["figures"].append({"figure": key, "value": figures[key],
                                       "low": low.result(), "high": high.result()})
        finally:
            ended(pool)
    try:
        cli.write_atomic(out, json.dumps(doc, indent=1) + "\n")
    except OSError as e:
        raise KscaleError(f"cannot write {out}: {e.strerror or e}") from None
    print(out)


def read(results_dir, label, before, after):
    """The sensitivity written for a headline, or None if there is none."""
    return cli.read_json_if_any(path_of(results_dir, label, before, after))


def main(argv):
    return cli.run(PROG, sensitivity_command, argv)
