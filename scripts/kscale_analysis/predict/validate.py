"""kscale predict's validation: each measured thread count of a variant
against its prediction from the 1-thread rows; the USL fit."""

from dataclasses import dataclass

from .. import stats, usl
from .network import predict
from .profile import Params
from .series import Series, median_of, values


@dataclass
class Check:
    """One measured count of a variant against its prediction."""
    threads: int
    source: str         # "plain" or "profiled"
    measured: list      # the headline metric's repetitions
    prediction: object  # Prediction on this machine
    per_visit: dict     # resource -> measured (wait, hold) ns per visit (profiled rows)
    timed: str          # the 1-thread rows predicted from: "plain" or "profiled"

    @property
    def error(self):
        mid = stats.median(self.measured)
        return (self.prediction.value - mid) / abs(mid) * 100 if mid else None


@dataclass
class Variant:
    params: Params
    series: Series
    checks: list        # [Check], by count
    table: list         # [Prediction] at the table machine's counts
    fit: object = None  # usl.Fit, or the refusal's text


def excess(wait, alone):
    """A measured wait beyond the 1-thread one (the acquisition's own
    cost, which the model counts as private time)."""
    return None if wait is None else wait - (alone or 0.0)


def validate(params, profiled, s, here):
    """A Check per measured count (but 1) and kind of rows: plain rows
    against `params`, profiled ones against `profiled` (the same timed on
    the profiled 1-thread rows, their counting included)."""
    checks = []
    for threads in sorted((set(s.profiled) | set(s.plain)) - {1}):
        for source, rows, p in (("plain", s.plain.get(threads), params),
                                ("profiled", s.profiled.get(threads), profiled)):
            measured = values(rows or [], params.metric)
            if not measured:
                continue
            prediction = predict(p, here, threads)
            per_visit = {r.name: (excess(median_of(rows, f"res_{r.name}_wait_ns"),
                                         median_of(s.profiled[1], f"res_{r.name}_wait_ns")),
                                  median_of(rows, f"res_{r.name}_hold_ns"))
                         for r in params.resources}
            checks.append(Check(threads, source, measured, prediction,
                                {k: v for k, v in per_visit.items() if v != (None, None)},
                                p.timed))
    return checks


def summary_checks(variant):
    """The check a count is judged by: rows like the 1-thread ones timed
    (plain against plain, profiled against profiled: the profile's
    counting is no part of the model), else the others."""
    best = {}
    for c in variant.checks:
        if c.threads not in best or c.source == variant.params.timed:
            best[c.threads] = c
    return [best[t] for t in sorted(best)]


def usl_points(s, here):
    """(threads, ops_per_sec) of every measured repetition within the CPUs."""
    threads = sorted(set(s.profiled) | set(s.plain))
    return [(n, v) for n in threads if n <= here.cpus
            for v in values(s.measured(n), "ops_per_sec")]


def fit_usl(s, here):
    try:
        return usl.fit(usl_points(s, here))
    except usl.Refused as e:
        return str(e)
