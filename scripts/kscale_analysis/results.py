"""Load, validate and group Google Benchmark JSON results.

Benchmark names follow the kscale contract:
    <model>/<workload>/<variant>[/<knob>:<value>...][/<Google Benchmark suffixes>]
A point is (model, workload, knobs, threads); a variant is one line/series.
Iteration rows sharing a name are the repetitions of one (point, variant).
"""

import json
import math
import re
from dataclasses import dataclass, field

# Segments Google Benchmark appends to a benchmark name.
GB_VALUE_KEYS = {"iterations", "repeats", "threads", "min_time", "min_warmup_time"}
GB_FLAGS = {"manual_time", "real_time", "process_time"}
# Numeric row fields that describe the run rather than measure it.
BOOKKEEPING = {"family_index", "per_family_instance_index", "repetitions",
               "repetition_index", "threads", "iterations"}


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def finite(value):
    """A JSON number as a finite float; None for anything else (NaN, an
    infinity, an integer too large for a float, a string...)."""
    if not is_number(value):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def one_line(text):
    """text with its control characters escaped: a newline in a
    benchmark name stays one line of a message."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class KscaleError(Exception):
    """A user-facing error: printed as one line, exits with `status`."""

    def __init__(self, message, status=2):
        super().__init__(one_line(message))
        self.status = status


@dataclass
class Run:
    """All repetitions of one benchmark name."""
    name: str
    model: str
    workload: str
    variant: str
    knobs: tuple  # ((key, value), ...) in name order
    threads: int
    rows: list = field(default_factory=list)

    @property
    def order(self):
        """The model's registration order (Google Benchmark's family_index)."""
        return finite(self.rows[0].get("family_index")) or 0.0

    @property
    def group(self):
        """Rows of one table / one plot share (model, workload, knobs)."""
        return (self.model, self.workload, self.knobs)

    def values(self, metric):
        """Finite values of `metric` over the repetitions."""
        values = (finite(row.get(metric)) for row in self.rows)
        return [v for v in values if v is not None]


@dataclass
class Results:
    label: str  # file name(s) for messages
    context: dict
    runs: dict  # name -> Run, in order of first appearance
    errors: list = field(default_factory=list)  # (name, message) of failed runs

    def variants(self):
        return sorted({run.variant for run in self.runs.values()})

    def metrics(self):
        """Numeric fields that appear in some iteration row."""
        names = set()
        for run in self.runs.values():
            for row in run.rows:
                names.update(k for k, v in row.items() if is_number(v))
        return sorted(names - BOOKKEEPING)

    def require_metric(self, metric):
        if metric not in self.metrics():
            raise KscaleError(f"{self.label}: no metric {metric!r} "
                              f"(available: {', '.join(self.metrics())})")


def parse_name(name, threads_field=None):
    """Split a benchmark name into (model, workload, variant, knobs, threads)."""
    parts = name.split("/")
    if len(parts) < 3 or not all(parts):
        raise ValueError("expected <model>/<workload>/<variant>[/key:value...]")
    model, workload, variant = parts[:3]
    knobs, threads = [], None
    for seg in parts[3:]:
        if seg in GB_FLAGS:
            continue
        key, sep, value = seg.partition(":")
        if not sep or not key or not value:
            raise ValueError(f"segment {seg!r} is not key:value")
        if key == "threads":
            if not (value.isascii() and value.isdigit()) or int(value) < 1:
                raise ValueError(f"bad thread count {seg!r}")
            threads = int(value)
        elif key not in GB_VALUE_KEYS:
            knobs.append((key, value))
    if threads_field is not None and not (type(threads_field) is int and threads_field >= 1):
        raise ValueError(f"bad \"threads\": {threads_field!r}")
    if threads is None:
        threads = threads_field or 1
    elif threads_field is not None and threads_field != threads:
        raise ValueError(f"threads:{threads} disagrees with \"threads\": {threads_field}")
    return model, workload, variant, tuple(knobs), threads


class NotFinite(float):
    """A number of a JSON file that is no finite float (NaN, Infinity,
    1e999, an integer beyond a double's range): its text, and its place
    among those of its file (`index`) to find its line by."""

    def __new__(cls, text, index):
        number = super().__new__(cls, math.nan if "N" in text else math.inf)
        number.text, number.index = text, index
        return number


# the tokens of a JSON text the parser calls parse_* for, strings skipped
JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:Infinity|NaN)|-?[0-9][0-9.eE+-]*')


def _number_hooks():
    """json.loads' parse_* hooks: a number that is not finite as a float
    becomes a NotFinite, numbered in the order the parser meets them."""
    count = [0]

    def check(text, value):
        try:
            if math.isfinite(float(value)):
                return value
        except OverflowError:
            pass
        count[0] += 1
        return NotFinite(text, count[0])

    return {"parse_float": lambda t: check(t, float(t)),
            "parse_int": lambda t: check(t, int(t)),
            "parse_constant": lambda t: check(t, float(t))}


def not_finite_line(text, number):
    """The line of text holding the NotFinite number."""
    hooks, count = _number_hooks(), 0
    for m in JSON_TOKENS.finditer(text):
        token = m.group()
        if token.startswith('"'):
            continue
        kind = "parse_constant" if token.lstrip("-")[0] in "IN" else \
            "parse_float" if any(c in token for c in ".eE") else "parse_int"
        try:
            count += isinstance(hooks[kind](token), NotFinite)
        except ValueError:
            continue
        if count == number.index:
            return text.count("\n", 0, m.start()) + 1
    return "?"


def _read_json(path, with_text=False):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise KscaleError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise KscaleError(f"{path}: invalid JSON: not UTF-8 text") from None
    try:
        data = json.loads(text, **_number_hooks())
        return (data, text) if with_text else data
    except json.JSONDecodeError as e:
        raise KscaleError(f"{path}: invalid JSON: {e}") from None
    except RecursionError:
        raise KscaleError(f"{path}: invalid JSON: nested too deeply") from None
    except ValueError:  # int() takes at most 4300 digits
        raise KscaleError(f"{path}: invalid JSON: a number of too many digits") from None


def load(path):
    """Load one results file; raises KscaleError on anything malformed."""
    data, text = _read_json(path, with_text=True)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise KscaleError(f"{path}: not Google Benchmark JSON (no \"benchmarks\" list)")
    if not data["benchmarks"]:
        raise KscaleError(f"{path}: empty \"benchmarks\" list")
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    # kscale's own values are strings (lib/harness/context.c): others are left out
    context = {k: v for k, v in context.items()
               if not k.startswith("kscale_") or (isinstance(v, str) and v)}
    runs, errors = {}, []
    for i, row in enumerate(data["benchmarks"]):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise KscaleError(f"{path}: benchmark #{i} has no \"name\"")
        if row.get("error_occurred"):
            errors.append((row["name"], str(row.get("error_message", ""))))
            continue
        if row.get("run_type") == "aggregate":
            continue
        for key, value in row.items():
            if isinstance(value, NotFinite):
                raise KscaleError(f"{path}:{not_finite_line(text, value)}: "
                                  f"{row['name']}: \"{key}\": {value.text[:40]}: "
                                  "not a finite number")
        _add_row(runs, row, path)
    if not runs:
        raise KscaleError(f"{path}: no successful iteration rows "
                          "(only aggregates or errors)")
    return Results(path, context, runs, errors)


def _add_row(runs, row, path):
    name = row["name"]
    run = runs.get(name)
    if run is None:
        try:
            model, workload, variant, knobs, threads = parse_name(name, row.get("threads"))
        except ValueError as e:
            raise KscaleError(f"{path}: malformed benchmark name {name!r}: {e}") from None
        run = runs[name] = Run(name, model, workload, variant, knobs, threads)
    run.rows.append(row)


def load_merged(paths, by_source=False):
    """Load several files into one Results; repetitions of equal names are
    pooled.  by_source: where the files' sources differ (simulated machines,
    this machine), each run's variant and name carry its source instead."""
    loaded = [load(p) for p in paths]
    if by_source and len({simulated(res) for res in loaded}) > 1:
        for res in loaded:
            source = simulated(res) or "here"
            for run in res.runs.values():
                run.variant = f"{run.variant} ({source})"
            res.runs = {f"{source}:{name}": run for name, run in res.runs.items()}
    merged = loaded[0]
    for res in loaded[1:]:
        for name, run in res.runs.items():
            if name in merged.runs:
                merged.runs[name].rows.extend(run.rows)
            else:
                merged.runs[name] = run
        merged.errors += res.errors
    merged.label = ", ".join(res.label for res in loaded)
    return merged


def simulated(results):
    """The simulated machine's name, or None: measured here.  A simulated
    file's repetitions are seeds (lib/harness/sim/window.c)."""
    return results.context.get("kscale_sim_machine")


def group_runs(runs):
    """{group: [runs]} keeping first-appearance order of groups."""
    groups = {}
    for run in runs:
        groups.setdefault(run.group, []).append(run)
    return groups


def unit(metric, results=None):
    """Human unit for a metric, or '' for plain numbers (ratios, counts)."""
    if metric in ("real_time", "cpu_time") and results is not None:
        time_unit = next(iter(results.runs.values())).rows[0].get("time_unit")
        return time_unit if isinstance(time_unit, str) else "ns"
    base = ""
    if metric.startswith("bytes_per_sec"):
        base = "B/s"
    elif metric.startswith("items_per_sec"):
        base = "items/s"
    elif "_per_sec" in metric:
        base = "ops/s"
    if base and metric.endswith("_per_cpu"):
        base += " per CPU"
    return base


def knob_text(knobs, sep=" "):
    return sep.join(f"{k}:{v}" for k, v in knobs)
