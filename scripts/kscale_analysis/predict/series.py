"""kscale predict's input: the rows of the results files, by variant and
thread count, profiled (res_* counters) or plain."""

import re
from dataclasses import dataclass, field

from .. import stats
from ..results import finite


RES_VISITS = re.compile(r"^res_(.+)_visits$")


def key_label(key):
    """model/workload/variant"""
    return "/".join(key[:3])


def is_profiled(row):
    return any(RES_VISITS.match(k) for k in row)


def values(rows, metric):
    """The finite values of a counter over rows, as Run.values gives them."""
    return [v for v in (finite(r.get(metric)) for r in rows) if v is not None]


def median_of(rows, name):
    return stats.median(values(rows, name))


@dataclass
class Series:
    """Every row of one (model, workload, variant, knobs), by thread count."""
    key: tuple
    context: dict       # of the first file holding it
    order: int          # family_index: the model's registration order
    profiled: dict = field(default_factory=dict)  # threads -> rows
    plain: dict = field(default_factory=dict)
    profile_context: dict = None  # of the first file holding profiled rows

    def measured(self, threads):
        """The rows a count is measured by: the plain ones (the figure a
        run reports, without the profile's counting) where there are any."""
        return self.plain.get(threads) or self.profiled.get(threads) or []


def gather(loaded):
    """{key: Series} over the loaded results files, first-seen order."""
    series = {}
    for res in loaded:
        for run in res.runs.values():
            key = (run.model, run.workload, run.variant, run.knobs)
            s = series.setdefault(key, Series(key, res.context, run.order))
            for row in run.rows:
                side = s.profiled if is_profiled(row) else s.plain
                side.setdefault(run.threads, []).append(row)
                if side is s.profiled and s.profile_context is None:
                    s.profile_context = res.context
    return series


def timing_rows(s):
    """The 1-thread rows a variant's time per operation comes from: the
    plain ones where there are any, for the profile's counting slows a
    tight loop (60 ns a lock visit on the development VM)."""
    return s.plain.get(1) or s.profiled[1]


def primary_metric(s):
    """The model's headline metric, where its 1-thread rows have it."""
    metric = s.context.get("kscale_primary_metric") or "ops_per_sec"
    return metric if values(timing_rows(s), metric) else "ops_per_sec"


def ratio_for(s, metric):
    """metric per ops_per_sec in the 1-thread timing rows, or None."""
    rows = timing_rows(s)
    value, ops = median_of(rows, metric), median_of(rows, "ops_per_sec")
    return value / ops if value is not None and ops else None
