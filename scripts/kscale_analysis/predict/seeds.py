"""kscale predict's seeds: the seed-scale file (each seed's machine, thread
count and figure) and each seed's predicted after/before ratio."""

import csv
import math
import os
import re
from dataclasses import dataclass

from ..results import KscaleError, knob_text
from .machine import MAX_THREADS, Machine, machine_path, positive_number, read_machine
from .network import predict, slowdown
from .series import median_of, ratio_for


SCALE_COLUMNS = ("seed", "machine", "threads", "seed_ratio", "metric", "before",
                 "after", "knobs", "note")


@dataclass
class SeedScale:
    """A line of configs/seed-scale.tsv."""
    seed: str
    machine: Machine
    threads: int
    figure: str         # as the seed put it, e.g. "150" or "5-10"
    low: float
    high: float
    metric: str
    before: str
    after: str
    knobs: dict
    note: str


def parse_figure(text):
    """'150', '~4', '1.21x', '5-10': (low, high) of an after/before ratio."""
    m = re.fullmatch(r"~?\s*([0-9.]+)\s*(?:(?:-|\.\.)\s*([0-9.]+))?\s*x?", text.strip())
    try:
        low = float(m.group(1))
        high = float(m.group(2)) if m.group(2) else low
    except (AttributeError, ValueError):
        raise ValueError(f"seed_ratio {text!r}: expected N, ~N, N-M") from None
    if not 0 < low <= high:
        raise ValueError(f"seed_ratio {text!r}: expected 0 < low <= high")
    return low, high


def parse_knobs(text):
    """'mounts=1 path_work_ns=0' (or KNOB:VALUE, or '-'): {knob: value}."""
    if text.strip() in ("", "-"):
        return {}
    pairs = [re.fullmatch(r"([^:=\s]+)[:=]([^:=\s]+)", p) for p in text.split()]
    if not all(pairs):
        raise ValueError(f"knobs {text!r}: expected KNOB=VALUE... or -")
    return dict(m.groups() for m in pairs)


def read_seed_scale(path):
    """The seed-scale lines, each with its machine (machines/NAME.conf
    beside the file); KscaleError on anything missing or malformed."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = [r for r in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
                    if r and not r[0].startswith("#")]
    except FileNotFoundError:
        raise KscaleError(f"{path}: no seed-scale file (the seeds' machines and "
                          "figures; see --help)") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise KscaleError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    if not rows or tuple(c.strip() for c in rows[0]) != SCALE_COLUMNS:
        raise KscaleError(f"{path}: expected a header line of the tab-separated "
                          f"columns {', '.join(SCALE_COLUMNS)}")
    directory = os.path.join(os.path.dirname(path) or ".", "machines")
    machines, lines = {}, []
    for lineno, row in enumerate(rows[1:], start=2):
        if len(row) != len(SCALE_COLUMNS):
            raise KscaleError(f"{path}:{lineno}: expected {len(SCALE_COLUMNS)} "
                              f"tab-separated fields, got {len(row)}")
        seed, name, threads, figure, metric, before, after, knobs, note = (
            c.strip() for c in row)
        if not all((seed, name, threads, figure, metric, before, after)):
            raise KscaleError(f"{path}:{lineno}: empty field")
        if name not in machines:
            machines[name] = read_machine(machine_path(name, directory))
        machine = machines[name]
        try:
            count = machine.cpus if threads == "all" else positive_number(
                threads, "threads", integer=True, most=MAX_THREADS)
            low, high = parse_figure(figure)
            knobs = parse_knobs(knobs)
        except ValueError as e:
            raise KscaleError(f"{path}:{lineno}: {e}") from None
        lines.append(SeedScale(seed, machine, count, figure, low, high, metric, before,
                               after, knobs, note))
    return lines


@dataclass
class SeedLine:
    scale: SeedScale
    before: object = None  # Variant
    after: object = None
    predicted: object = None  # after/before ratio, of `model`
    problem: str = ""
    model: str = "MVA"  # or "sim"
    mva: object = None  # the MVA's ratio, where there is one
    simulated: object = None  # a simulated run's ratio on the seed's machine
    sim_unused: str = ""  # why the simulated ratio is not the prediction

    @property
    def quotient(self):
        """Predicted over the seed's figure (1 inside a range)."""
        s, p = self.scale, self.predicted
        return p / s.low if p < s.low else p / s.high if p > s.high else 1.0


def seed_pair(scale, variants):
    """The (before, after) Variants a seed-scale line names, or a reason."""
    pairs = []
    for v in variants:
        model, workload, variant, knobs = v.params.key
        if variant != scale.before or any(dict(knobs).get(k) != x
                                          for k, x in scale.knobs.items()):
            continue
        for w in variants:
            if w.params.key == (model, workload, scale.after, knobs):
                pairs.append((v, w))
    if len(pairs) == 1:
        return pairs[0], ""
    if not pairs:
        return None, (f"no profiled {scale.before} and {scale.after} with "
                      f"{knob_text(scale.knobs.items()) or 'any knobs'} in these results")
    return None, (f"{len(pairs)} knob sets of {scale.before} and {scale.after} match; "
                  "pin them in the seed-scale knobs column")


def sim_ratio(scale, series):
    """The after/before ratio of the medians of a simulated run's rows at
    the seed's point (series: its gathered rows on the seed's machine), or
    None where it has no one such point."""
    medians = []
    for variant in (scale.before, scale.after):
        found = [s for key, s in (series or {}).items()
                 if key[2] == variant and all(dict(key[3]).get(k) == x
                                              for k, x in scale.knobs.items())]
        rows = found[0].plain.get(scale.threads, []) if len(found) == 1 else []
        medians.append(median_of(rows, scale.metric))
    if None in medians or not medians[0]:
        return None
    return medians[1] / medians[0]


def validated(seed, validation):
    """Whether kscale sim-validate reproduced the seed's ratio on this
    machine (its line of the seed, or of the seed it is a variant of:
    002-512p's is 002's); (False, why) where not."""
    if validation is None:
        return False, "no kscale sim-validate results for this machine"
    lines = validation.get("seeds", {})
    entry = lines.get(seed) or lines.get(seed.split("-")[0])
    if entry is None:
        return False, f"kscale sim-validate has no line of seed {seed}"
    if not entry.get("ok"):
        err = entry.get("error_pct")
        off = f"off by {err:+.0f}%" if isinstance(err, (int, float)) else entry.get("why", "")
        return False, (f"kscale sim-validate's {seed.split('-')[0]} ratio on this machine is "
                       f"{off} (tolerance {validation.get('ratio_tol_pct', '?')}%)")
    return True, ""


def seed_line(scale, variants, here, sim_series=None, validation=None):
    """The seed's prediction: the simulator's where a simulated run on the
    seed's machine has its point and the simulator's validation here holds
    for the seed, the MVA's otherwise."""
    line = mva_line(scale, variants, here)
    line.mva = line.predicted
    line.simulated = sim_ratio(scale, sim_series)
    if line.simulated is None:
        return line
    ok, line.sim_unused = validated(scale.seed, validation)
    if ok:
        line.predicted, line.model, line.problem = line.simulated, "sim", ""
    return line


def mva_line(scale, variants, here):
    pair, problem = seed_pair(scale, variants)
    if pair is None:
        return SeedLine(scale, problem=problem)
    before, after = pair
    rates = []
    for v in pair:
        ratio = ratio_for(v.series, scale.metric)
        if ratio is None:
            return SeedLine(scale, before, after,
                            problem=f"no {scale.metric} in {v.params.label}'s profiled rows")
        p = predict(v.params, scale.machine, scale.threads, slowdown(here, scale.machine))
        rates.append(ratio * p.throughput)
    if not all(math.isfinite(r) and r > 0 for r in rates):
        return SeedLine(scale, before, after, problem=f"predicted rates {rates[0]:g} and "
                        f"{rates[1]:g}: no ratio")
    return SeedLine(scale, before, after, predicted=rates[1] / rates[0])
