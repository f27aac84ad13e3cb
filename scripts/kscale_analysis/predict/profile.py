"""kscale predict's parameters of a variant: its shared resource classes,
and who shares them, from the res_* counters of its 1-thread rows."""

from dataclasses import dataclass, field

from ..results import KscaleError
from .io_sleep import io_per_op, place_io
from .series import RES_VISITS, key_label, median_of


@dataclass
class Resource:
    """One shared resource class, per operation, from the 1-thread rows."""
    name: str
    visits: float       # exclusive (write) visits per operation
    hold: float         # ns held per visit
    lines: float        # lines a visit moves between CPUs
    instances: float    # distinct instances visited
    sleeps: bool        # waiters sleep (else spin)
    read_visits: float = 0.0
    read_hold: float = 0.0
    scope: str = "shared"   # SCOPES: who shares an instance
    io_share: float = 0.0   # ns of each hold spent sleeping on I/O


@dataclass
class Params:
    """A variant's network parameters, from its 1-thread profiled rows."""
    key: tuple          # (model, workload, variant, knobs)
    t1: float           # ns per operation
    resources: list
    cpu_outside: float  # ns of CPU work per op outside exclusive holds
    io_delay: float     # ns of I/O sleep per op outside exclusive holds
    ratio: float        # headline metric per (ops_per_sec)
    metric: str
    reps: int           # 1-thread repetitions timed
    timed: str          # "plain" or "profiled": where t1 comes from
    notes: list = field(default_factory=list)

    @property
    def label(self):
        return key_label(self.key)


def resource_names(rows):
    """The resource classes of profiled rows: NAME of res_NAME_visits,
    NAME_read folded into NAME when NAME has fields of its own."""
    names = {m.group(1) for r in rows for k in r if (m := RES_VISITS.match(k))}
    keys = {k for r in rows for k in r}
    return sorted(n for n in names
                  if not (n.endswith("_read") and any(
                      k.startswith(f"res_{n[:-5]}_") and not k.startswith(f"res_{n}_")
                      for k in keys)))


# res_NAME_scope: 0 any CPU visits any instance, 1 one instance a node
# visited by its CPUs, 2 one instance a CPU visited by it
SCOPES = {0: "shared", 1: "node", 2: "cpu"}


def class_scope(name, rows1, rows2, instances):
    """Who shares an instance of a class: res_NAME_scope, or without it
    the 2-thread profile: a class each thread owns visits twice the
    instances with twice the threads (per-node classes look shared)."""
    scope = median_of(rows1, f"res_{name}_scope")
    if scope is not None:
        return SCOPES.get(round(scope), "shared")
    two = median_of(rows2, f"res_{name}_instances") if rows2 else None
    return "cpu" if two is not None and two >= 2 * instances else "shared"


def extract(key, rows1, rows2, metric, timing=None):
    """Params of one variant from its 1-thread (rows1) and, to tell a
    class every thread shares from one a thread owns, 2-thread (rows2)
    profiled rows; the time per operation and the metric's ratio to it
    from the 1-thread rows `timing` (default rows1)."""
    notes = []
    timing = timing or rows1
    ops = median_of(timing, "ops_per_sec")
    if not ops or ops < 0:
        raise KscaleError(f"{key_label(key)}: no ops_per_sec above 0 in its 1-thread rows")
    t1 = 1e9 / ops
    value = median_of(timing, metric)
    ratio = value / ops if value is not None else None
    resources = []
    for name in resource_names(rows1):
        def field_of(suffix, default):
            got = median_of(rows1, f"res_{name}_{suffix}")
            if got is not None and got < 0:
                raise KscaleError(f"{key_label(key)}: res_{name}_{suffix} is {got:g} "
                                  "in its 1-thread rows: counts and times are >= 0")
            return default if got is None else got
        res = Resource(name, field_of("visits", 0.0), field_of("hold_ns", 0.0),
                       field_of("lines", 1.0), max(1.0, field_of("instances", 1.0)),
                       field_of("sleeps", 0.0) >= 0.5, field_of("read_visits", 0.0),
                       field_of("read_hold_ns", 0.0))
        res.scope = class_scope(name, rows1, rows2, res.instances)
        if res.scope == "shared" and rows2:
            res.instances = max(res.instances, median_of(rows2, f"res_{name}_instances") or 1)
        resources.append(res)
    if not resources:
        raise KscaleError(f"{key_label(key)}: profiled rows without resources")
    # the delay: the time outside the queued (exclusive) holds, which
    # holds the read holds and the per-CPU ones; held within others
    # (nested), they would make the private time T1 - every hold < 0
    exclusive = sum(r.visits * r.hold for r in resources if r.scope != "cpu")
    held = exclusive + sum(r.read_visits * r.read_hold + (r.scope == "cpu") * r.visits * r.hold
                           for r in resources)
    label = key_label(key)
    if exclusive > t1:
        notes.append(f"{label}: exclusive holds ({exclusive:.0f} ns) exceed the time per "
                     f"operation ({t1:.0f} ns): private time clamped to 0")
    elif held > t1:
        notes.append(f"{label}: holds ({held:.0f} ns) exceed the time per operation "
                     f"({t1:.0f} ns), nested: the read and per-CPU holds taken as "
                     f"the {t1 - exclusive:.0f} ns outside the exclusive ones")
    io_delay = place_io(resources, *io_per_op(key, rows1))
    cpu_outside = max(0.0, t1 - exclusive - io_delay)
    return Params(key, t1, resources, cpu_outside, io_delay, ratio, metric, len(timing),
                  "profiled" if timing is rows1 else "plain", notes)
