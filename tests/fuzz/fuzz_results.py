#!/usr/bin/python3
"""fuzz results: the results-file reader every analysis command uses
(scripts/kscale_analysis/results.py: load, load_merged, parse_name).

Property: load() of any file returns well-formed Results (named runs of
str fields, a thread count >= 1, finite float values, str metrics) or
raises KscaleError with a one-line message; parse_name() returns a
well-formed split or raises ValueError.  See pyfuzz.py for the options."""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfuzz  # noqa: E402
from pyfuzz import require  # noqa: E402
from results_strategies import names, results_inputs  # noqa: E402

from hypothesis import strategies as st  # noqa: E402

from kscale_analysis import results  # noqa: E402
from kscale_analysis.results import KscaleError  # noqa: E402

NAME = "results"
work = pyfuzz.Workdir()
SEED = os.path.join(pyfuzz.CORPUS, "results", "mnt.json")


def check_name(name):
    try:
        model, workload, variant, knobs, threads = results.parse_name(name)
    except ValueError:
        return
    require(all(isinstance(x, str) and x for x in (model, workload, variant)),
            f"parse_name({name!r}): empty part")
    require(type(threads) is int and threads >= 1, f"parse_name({name!r}): threads {threads!r}")
    require(all(isinstance(k, str) and isinstance(v, str) for k, v in knobs),
            f"parse_name({name!r}): knobs {knobs!r}")


def well_formed(res, label):
    require(isinstance(res, results.Results), "load: not Results")
    require(res.label == label, f"label {res.label!r}")
    require(isinstance(res.context, dict), "context is not a dict")
    require(res.runs and all(isinstance(n, str) for n in res.runs), "runs")
    for name, run in res.runs.items():
        require(run.name == name and run.rows, f"run {name!r}")
        require(all(isinstance(x, str) and x for x in (run.model, run.workload, run.variant)),
                f"run {name!r}: parts")
        require(type(run.threads) is int and run.threads >= 1, f"run {name!r}: threads")
        require(all(isinstance(row, dict) for row in run.rows), f"run {name!r}: rows")
        results.knob_text(run.knobs)
    metrics = res.metrics()
    require(all(isinstance(m, str) for m in metrics), "metrics")
    for metric in metrics + ["ops_per_sec", "real_time"]:
        for run in res.runs.values():
            values = run.values(metric)
            require(all(type(v) is float and math.isfinite(v) for v in values),
                    f"values of {metric!r}")
        require(isinstance(results.unit(metric, res), str), f"unit of {metric!r}")
    try:
        res.require_metric("no such metric")
    except KscaleError as e:
        require("\n" not in str(e), f"two-line error: {str(e)!r}")
    for name, message in res.errors:
        require(isinstance(name, str) and isinstance(message, str), "errors")
    results.group_runs(res.runs.values())
    res.variants()


def load_one(paths, label):
    try:
        res = results.load(paths[0]) if len(paths) == 1 else results.load_merged(paths)
    except KscaleError as e:
        require("\n" not in str(e), f"two-line error: {str(e)!r}")
        require(e.status == 2, f"status {e.status}")
        return None
    well_formed(res, label)
    return res


def check(data):
    work.reset()
    path = work.write("r.json", data)
    res = load_one([path], path)
    load_one([path, SEED], f"{path}, {SEED}")
    load_one([SEED, path], f"{SEED}, {path}")
    if res:
        for name in res.runs:
            check_name(name)


def inputs():
    return st.one_of(results_inputs("results", "predict"),
                     names().map(lambda n: ('{"benchmarks": [{"name": %s, "ops_per_sec": 1}]}'
                                            % __import__("json").dumps(n)).encode()))


if __name__ == "__main__":
    sys.exit(pyfuzz.main(NAME, check, inputs(), ext=".json"))
