"""kscale predict: each variant's scaling to 512 CPUs, from its 1-thread profile.

A run made with --profile records, per operation, what it does to each
shared resource (res_NAME_visits, _hold_ns, _wait_ns, _lines,
_instances, _sleeps; rwsems also _read_visits and _read_hold_ns) and the
machine's cache-line transfer latencies (context kscale_line_ns_*).  From
the 1-thread rows alone this module builds a closed queueing network per
variant and solves it by exact mean value analysis (mva.py) at each
thread count N:

- N customers (threads); a delay centre: the time per operation nobody
  waits for (the operation's private work, reader holds, sleeping I/O);
- a FIFO centre per instance of each shared class, with demand
  visits x (hold + lines x L(N) x P(N)) / instances: L(N) the mean
  one-way line transfer latency between the CPUs N threads get when
  placed compactly on the machine, P(N) = (m - 1) / m the chance that a
  visit finds the line last used on another of the m CPUs in use;
- above C threads, the CPU: a load-dependent centre with C servers.

It validates that model first, predicting every measured count of this
machine from the 1-thread rows, then prints each variant's rate per CPU
at 1, 2, 4 ... 512 CPUs, and for each seed (configs/seed-scale.tsv) the
predicted after/before ratio on the seed's machine beside the seed's
figure.  README "Predicting other machines" says what it assumes and
where it must not be trusted; usl.py fits Gunther's law where a variant
has three CPU counts.
"""

import csv
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from . import cli, compare, mva, plot, stats, summary, usl
from .results import KscaleError, finite, knob_text, load, one_line

PROG = "kscale predict"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
MAX_CPUS = 512
# CPUs of a machine and threads of a prediction: NR_CPUS at most (x86's
# CONFIG_MAXSMP); above a machine's CPUs the MVA's CPU centre costs N^2
MAX_THREADS = 8192
USAGE = (f"{PROG} [RESULTS.json...] [--machine=FILE|NAME] [--out-dir=DIR] "
         "[--seed-scale=FILE]")
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
line_ns_node, line_ns_remote, ghz)."""

RES_VISITS = re.compile(r"^res_(.+)_visits$")
SCALE_COLUMNS = ("seed", "machine", "threads", "seed_ratio", "metric", "before",
                 "after", "knobs", "note")
NEGLIGIBLE_WAIT_NS = 1.0  # spinning waits below this are not flagged
MIN_VISITS = 1e-3  # classes visited less often per operation are not shown


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
    return parser


# ---------------------------------------------------------------- machines

LATENCIES = ("smt", "node", "remote")


@dataclass
class Machine:
    """A machine: its CPUs, nodes, SMT width and one-way line transfer
    latencies (ns; None where the machine has no such pair of CPUs)."""
    name: str
    cpus: int
    nodes: int
    threads_per_core: int
    line_ns: dict  # "smt", "node", "remote" -> float or None
    ghz: object = None  # float or None
    sources: dict = field(default_factory=dict)

    @property
    def cpus_per_node(self):
        return self.cpus // self.nodes

    def describe(self):
        lat = ", ".join(f"{k} {v:g}" for k, v in self.line_ns.items() if v is not None)
        ghz = f", {self.ghz:g} GHz" if self.ghz else ""
        return (f"{self.name}: {self.cpus} CPUs, {self.nodes} node"
                f"{'s' * (self.nodes != 1)}, {self.threads_per_core} thread"
                f"{'s' * (self.threads_per_core != 1)} a core{ghz}; line transfer ns: {lat}")


def _number(value, what, integer=False, most=None):
    """A positive number (or integer), at most `most`, from a machine file
    or context value."""
    try:
        number = int(value) if integer else float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a {'whole ' * integer}number, got {value!r}") from None
    if not number > 0 or not (integer or math.isfinite(number)):
        raise ValueError(f"{what}: must be > 0, got {value!r}")
    if most is not None and number > most:
        raise ValueError(f"{what}: at most {most}, got {value!r}")
    return number


def make_machine(name, values, where):
    """A Machine from {key: text}; KscaleError naming `where` if malformed."""
    try:
        cpus = _number(values.get("cpus"), "cpus", integer=True, most=MAX_THREADS)
        nodes = _number(values.get("nodes", "1"), "nodes", integer=True)
        tpc = _number(values.get("threads_per_core", "1"), "threads_per_core", integer=True)
        if cpus % (nodes * tpc):
            raise ValueError(f"cpus ({cpus}) is not a multiple of nodes x "
                             f"threads_per_core ({nodes} x {tpc})")
        needed = {"smt": tpc > 1, "node": cpus // nodes > tpc, "remote": nodes > 1}
        line_ns = {}
        for kind in LATENCIES:
            text = values.get(f"line_ns_{kind}", "none")
            # "none", or "none (nodes emulated)" from --numa-emulate
            if str(text).strip().lower().startswith("none"):
                if needed[kind]:
                    raise ValueError(f"line_ns_{kind}: needed (the machine has "
                                     f"{kind} pairs of CPUs), got {text!r}")
                line_ns[kind] = None
            else:
                line_ns[kind] = _number(text, f"line_ns_{kind}")
        ghz = values.get("ghz")
        ghz = None if ghz in (None, "", "none") else _number(ghz, "ghz")
    except ValueError as e:
        raise KscaleError(f"{where}: {e}") from None
    sources = {k[len("source."):]: v for k, v in values.items() if k.startswith("source.")}
    return Machine(values.get("name") or name, cpus, nodes, tpc, line_ns, ghz, sources)


def machine_path(spec, directory):
    """NAME -> DIRECTORY/NAME.conf; anything with a '/' or .conf is a path."""
    if "/" in spec or spec.endswith(".conf"):
        return spec
    return os.path.join(directory, f"{spec}.conf")


def read_machine(path):
    """Parse a machine file (configs/machines/README): `key = value`
    lines, a '#' starting a comment to the end of its line, blank lines."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise KscaleError(f"{path}: no such machine file") from None
    except (OSError, ValueError) as e:  # not UTF-8, a NUL in the path
        raise KscaleError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    values = {}
    for lineno, line in enumerate(lines, start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = (part.strip() for part in line.partition("="))
        if not sep or not key or not value or not re.fullmatch(r"[A-Za-z0-9_.]+", key):
            raise KscaleError(f"{path}:{lineno}: expected 'key = value', got {line!r}")
        if key in values:
            raise KscaleError(f"{path}:{lineno}: {key} given twice")
        values[key] = value
    if "cpus" not in values:
        raise KscaleError(f"{path}: no 'cpus = N' line")
    name = os.path.splitext(os.path.basename(path))[0]
    return make_machine(name, values, path)


CONTEXT_KEYS = (("cpus", "kscale_allowed_cpus"), ("nodes", "kscale_nodes"),
                ("threads_per_core", "kscale_threads_per_core"),
                ("line_ns_smt", "kscale_line_ns_smt"), ("line_ns_node", "kscale_line_ns_node"),
                ("line_ns_remote", "kscale_line_ns_remote"))


def context_machine(contexts, where):
    """This machine, as the results' contexts describe it: each line
    latency the median of theirs (every bench binary measures its own,
    and a VM's vary from run to run), the rest the first's."""
    values = {"name": "this machine"}
    for key, ctx in CONTEXT_KEYS:
        found = [str(c[ctx]) for c in contexts if c.get(ctx) not in (None, "")]
        numbers = [float(v) for v in found if re.fullmatch(r"[0-9]+(\.[0-9]*)?", v)]
        if key.startswith("line_ns_") and numbers:
            values[key] = str(stats.median(numbers))
        elif found:
            values[key] = found[0]
    if "emulated" in values.get("line_ns_remote", "") and "line_ns_node" in values:
        values["line_ns_remote"] = values["line_ns_node"]  # pretend nodes: not remote
    if not any(f"line_ns_{kind}" in values for kind in LATENCIES):
        raise KscaleError(f"{where}: no line latencies (kscale_line_ns_*) in the context: "
                          "run the bench binaries with --profile")
    mhz = [finite(c.get("mhz_per_cpu")) for c in contexts if finite(c.get("mhz_per_cpu"))]
    if mhz and mhz[0] > 0:
        values["ghz"] = str(mhz[0] / 1000)
    values.setdefault("cpus", "1")
    return make_machine("this machine", values, f"{where} (context)")


def extended(here, cpus=MAX_CPUS):
    """This machine's line latencies on `cpus` CPUs in one node: its SMT
    width where it measured both SMT and core-to-core transfers; else one
    thread a core, each transfer at the latency it did measure."""
    node, smt = here.line_ns["node"], here.line_ns["smt"]
    tpc = here.threads_per_core if node is not None and smt is not None else 1
    line_ns = {"smt": smt if tpc > 1 else None,
               "node": node if node is not None else smt, "remote": None}
    return Machine(f"this machine's line latencies on {cpus} CPUs, one node", cpus, 1,
                   tpc, line_ns, here.ghz)


def placement(machine, n):
    """Ordered pairs of the first n CPUs of a compact placement, by kind:
    {"smt": siblings, "node": same node, other core, "remote": other node}.

    Compact fills one node before the next; within a node each core gets
    one thread before any gets its sibling (SMT siblings last), so a node
    of only siblings (one core) pairs them at once."""
    per_node = machine.cpus_per_node
    cores = per_node // machine.threads_per_core
    full, rest = divmod(min(n, machine.cpus), per_node)
    occupancy = [per_node] * full + ([rest] if rest else [])
    same_node = sum(t * (t - 1) for t in occupancy)
    siblings = 0
    for t in occupancy:
        each, extra = divmod(t, cores)  # threads a core: `extra` cores have one more
        siblings += extra * (each + 1) * each + (cores - extra) * each * (each - 1)
    total = len(occupancy) and sum(occupancy) * (sum(occupancy) - 1)
    return {"smt": siblings, "node": same_node - siblings, "remote": total - same_node}


def line_latency(machine, n):
    """Mean one-way line transfer latency (ns) between the CPUs of n
    compactly placed threads: every ordered pair alike; 0 for one CPU."""
    pairs = placement(machine, n)
    total = sum(pairs.values())
    if not total:
        return 0.0
    return sum(count * (machine.line_ns[kind] or 0.0)
               for kind, count in pairs.items()) / total


# ---------------------------------------------------------------- profiles

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


def resource_names(rows):
    """The resource classes of profiled rows: NAME of res_NAME_visits,
    NAME_read folded into NAME when NAME has fields of its own."""
    names = {m.group(1) for r in rows for k in r if (m := RES_VISITS.match(k))}
    keys = {k for r in rows for k in r}
    return sorted(n for n in names
                  if not (n.endswith("_read") and any(
                      k.startswith(f"res_{n[:-5]}_") and not k.startswith(f"res_{n}_")
                      for k in keys)))


def io_per_op(knobs, rows):
    """(ns per operation a thread sleeps on the model disk, ns a read):
    the fs_io_us knob times the reads per operation (the dentry cache's
    misses, less those the inode cache serves)."""
    io_us = dict(knobs).get("fs_io_us")
    if not io_us or not re.fullmatch(r"[0-9]{1,9}", io_us) or int(io_us) == 0:
        return 0.0, 0.0
    reads = 1.0
    for ratio in ("dcache_hit_ratio", "icache_hit_ratio"):
        hit = median_of(rows, ratio)
        if hit is not None:
            reads *= 1.0 - min(1.0, max(0.0, hit))
    return int(io_us) * 1000.0 * reads, int(io_us) * 1000.0


def place_io(resources, io, read):
    """Put the I/O sleep inside the exclusive holds long enough to hold a
    read (real_lookup reads the inode under the directory's i_mutex),
    longest first; return what is left outside them."""
    for r in sorted(resources, key=lambda r: -r.hold):
        if io <= 0 or r.scope == "cpu" or r.hold < read or not r.visits:
            continue
        r.io_share = min(r.hold, io / r.visits)
        io -= r.io_share * r.visits
    return max(0.0, io)


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
    io_delay = place_io(resources, *io_per_op(key[3], rows1))
    cpu_outside = max(0.0, t1 - exclusive - io_delay)
    return Params(key, t1, resources, cpu_outside, io_delay, ratio, metric, len(timing),
                  "profiled" if timing is rows1 else "plain", notes)


# ---------------------------------------------------------------- the model

@dataclass
class Prediction:
    threads: int
    cpus: int            # the machine's CPUs
    throughput: float    # operations per second, all threads
    value: float         # the headline metric
    per_cpu: float       # the headline metric per CPU in use
    waits: dict          # resource -> predicted ns waited per visit
    holds: dict          # resource -> predicted ns held per (write) visit
    spinning: bool       # spinning waiters with more threads than CPUs


def metric_value(params, throughput, threads, cpus):
    """The headline metric from ops/s: per CPU for *_per_cpu metrics."""
    value = params.ratio * throughput
    return value / min(threads, cpus) if params.metric.endswith("_per_cpu") else value


def transfer_probability(sharers, busy):
    """The chance a visit finds the line last used on another of the
    CPUs sharing it: certain when it finds the instance held (the holder
    is another thread), else the last visitor is any of them alike."""
    return busy + (1.0 - busy) * (sharers - 1) / sharers


def sharing(r, machine, used):
    """(instances, CPUs sharing one, their mean line latency) of a
    shared or per-node class at `used` CPUs."""
    if r.scope == "node":
        nodes = -(-used // machine.cpus_per_node)
        pairs = placement(machine, used)
        within = pairs["smt"] + pairs["node"]
        latency = (pairs["smt"] * (machine.line_ns["smt"] or 0.0) +
                   pairs["node"] * (machine.line_ns["node"] or 0.0)) / within if within else 0.0
        return nodes, used / nodes, latency
    return max(1, round(r.instances)), used, line_latency(machine, used)


def network(params, machine, n, slowdown=1.0, busy=None):
    """(centres, classes, services, delay, cpu) at n threads: classes[i]
    is the Resource of centres[i] (shared or per-node classes; per-CPU
    ones are private work), services[i] its ns per visit with transfers;
    busy[i] the chance a visit finds an instance of it held (0 when not
    given).  CPU work takes `slowdown` times as long as here (this
    machine's clock over the target's)."""
    used = min(n, machine.cpus)
    queued = [r for r in params.resources if r.scope != "cpu"]
    busy = busy or [0.0] * len(queued)
    centres, services = [], []
    for r, b in zip(queued, busy):
        count, sharers, latency = sharing(r, machine, used)
        # a lock's waiter takes the line from the holder; an atomic's line
        # (no hold) goes where the interconnect sends it, and a CPU holding
        # it may finish its next RMW first; with more threads than CPUs the
        # holder may share the waiter's CPU
        handoff = r.hold > 0 and n <= machine.cpus
        moves = r.lines * latency * transfer_probability(sharers, b if handoff else 0.0)
        hold = (r.hold - r.io_share) * slowdown + r.io_share
        demand = r.visits * (hold + moves) + r.read_visits * moves
        centres.append(mva.Centre(demand / count, count))
        services.append(hold + moves)
    cpu_work = params.cpu_outside * slowdown
    if n > machine.cpus:
        return centres, queued, services, params.io_delay, (cpu_work, machine.cpus)
    return centres, queued, services, params.io_delay + cpu_work, None


FIXED_POINT_ROUNDS = 100
FIXED_POINT_TOLERANCE = 1e-9


def solve_network(params, machine, n, slowdown=1.0):
    """The network at n threads and its MVA solution, the transfer
    probabilities at their fixed point: each class's chance of finding an
    instance held is its utilization with n - 1 threads (the arrival
    theorem), which the transfers it causes raise in turn."""
    busy = None
    for _ in range(FIXED_POINT_ROUNDS):
        net = network(params, machine, n, slowdown, busy)
        solutions = mva.solve(n, net[0], *net[3:])
        before = solutions[-2] if n > 1 else None
        now = [min(1.0, before.throughput * c.demand) if before else 0.0 for c in net[0]]
        if busy is not None and all(abs(a - b) <= FIXED_POINT_TOLERANCE
                                    for a, b in zip(now, busy)):
            break
        busy = now
    return net, solutions[-1]


def predict(params, machine, n, slowdown=1.0):
    """The Prediction at n threads on machine (demands evaluated at n)."""
    if n > MAX_THREADS:
        raise KscaleError(f"{params.label}: {n} threads: kscale predict models "
                          f"at most {MAX_THREADS}")
    (centres, classes, services, _, cpu), solution = solve_network(params, machine, n,
                                                                   slowdown)
    x = solution.throughput * 1e9  # ns -> s
    waits, holds, spinning = {}, {}, False
    for centre, r, service, residence in zip(centres, classes, services,
                                             solution.residence):
        visits = r.visits + r.read_visits
        if visits >= MIN_VISITS:
            waits[r.name] = centre.count * (residence - centre.demand) / visits
            holds[r.name] = service
            spinning |= (cpu is not None and not r.sleeps
                         and waits[r.name] >= NEGLIGIBLE_WAIT_NS)
    value = metric_value(params, x, n, machine.cpus)
    per_cpu = value if params.metric.endswith("_per_cpu") else value / min(n, machine.cpus)
    return Prediction(n, machine.cpus, x, value, per_cpu, waits, holds, spinning)


def slowdown(here, target):
    """How much longer CPU work takes on the target: clock here / there."""
    if here.ghz and target.ghz:
        return here.ghz / target.ghz
    return 1.0


def table_counts(machine):
    counts = [1 << i for i in range(MAX_CPUS.bit_length()) if 1 << i <= machine.cpus]
    return counts + ([machine.cpus] if machine.cpus not in counts else [])


# ---------------------------------------------------------------- the data

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


# ---------------------------------------------------------------- seeds

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
            count = machine.cpus if threads == "all" else _number(
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
    predicted: object = None  # after/before ratio
    problem: str = ""

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


def seed_line(scale, variants, here):
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


# ---------------------------------------------------------------- the report

def fmt_pct(value):
    return "n/a" if value is None else f"{value:+.1f}%"


def fmt_x(ratio):
    """An after/before ratio as the summary prints one: 1.92x, 23.3x, 150x."""
    return summary.fmt_ratio((ratio - 1) * 100)


def fmt_threads(threads, cpus):
    return str(threads) if threads <= cpus else f"{threads} on {cpus} CPUs"


def labels(variants):
    """Row labels: the variant, with the workload and the knobs that
    differ between the rows of its model."""
    out = {}
    for model in {v.params.key[0] for v in variants}:
        keys = [v.params.key for v in variants if v.params.key[0] == model]
        workloads = len({k[1] for k in keys}) > 1
        varying = {name for k in keys for name, value in k[3]
                   if any(dict(o[3]).get(name) != value for o in keys)}
        for k in keys:
            parts = [k[1]] * workloads + [k[2]]
            parts += [f"{n}:{v}" for n, v in k[3] if n in varying]
            out[k] = " ".join(parts)
    return out


def check_text(checks, cpus):
    return ", ".join(f"{fmt_pct(c.error)} at {fmt_threads(c.threads, cpus)}"
                     for c in checks) or "none measured"


PER_VISIT_SHOWN = 2  # classes a validation line shows: the most waited for


def per_visit_text(check):
    """'i_mutex wait 148.0k/192.6k hold 149.9k/141.4k': ns per visit, the
    model's and the measured (profiled rows; the wait beyond the 1-thread
    one), of the classes waited for most."""
    p = check.prediction

    def ns(value):
        return "-" if value is None else f"{value:.0f}" if abs(value) < 1000 else \
            stats.fmt_value(value)

    def pair(model, measured):
        return f"{ns(model)}/{ns(measured)}"

    shown = sorted((name for name in check.per_visit if name in p.waits),
                   key=lambda name: -max(p.waits[name], check.per_visit[name][0] or 0))
    return "; ".join(f"{name} wait {pair(p.waits[name], check.per_visit[name][0])} "
                     f"hold {pair(p.holds[name], check.per_visit[name][1])}"
                     for name in shown[:PER_VISIT_SHOWN])


def model_parts(model, variants, label, here, target, counts):
    metric = variants[0].params.metric
    per_cpu = metric if metric.endswith("_per_cpu") else f"{metric} per CPU"
    rows = []
    for v in variants:
        for c in v.checks:
            rows.append([label[v.params.key], fmt_threads(c.threads, here.cpus),
                         f"{len(c.measured)} {c.source}", c.timed, stats.fmt_cell(c.measured),
                         stats.fmt_value(c.prediction.value), fmt_pct(c.error),
                         per_visit_text(c)])
    parts = []
    title = f"{model}: validation on {here.name}, {metric} predicted from 1 thread"
    if rows:
        parts.append(("table", title, ["Variant", "Threads", "Runs", "T1", "Measured",
                                       "Predicted", "Error",
                                       "ns a visit, most waited (model/measured)"],
                      rows, 4))
    else:
        parts.append(("para", [f"{title}: no count other than 1 measured"]))
    rows = [[label[v.params.key], check_text(summary_checks(v), here.cpus)]
            + [stats.fmt_value(p.per_cpu) + "*" * p.spinning for p in v.table]
            for v in variants]
    parts.append(("table", f"{model}: predicted {per_cpu} on {target.name}",
                  ["Variant", "Validation"] + [str(n) for n in counts], rows, 2))
    fits = [(label[v.params.key], v.fit) for v in variants]
    refusals = {f for _, f in fits if isinstance(f, str)}
    lines = []
    if len(refusals) == 1 and all(isinstance(f, str) for _, f in fits):
        lines.append(refusals.pop() + usl_note(variants, here))
    else:
        for name, f in fits:
            lines.append(f"{f}" if isinstance(f, str) else
                         f"USL {name}: lambda {stats.fmt_value(f.lam)} ops/s, sigma "
                         f"{f.sigma:.4g}, kappa {f.kappa:.3g}, peak "
                         + (f"at {f.peak:.0f} CPUs" if f.peak else "none"))
    parts.append(("para", lines))
    return parts


def usl_note(variants, here):
    """' (32 tasks on 2 CPUs left out: ...)' when oversubscribed counts were."""
    over = sorted({n for v in variants for n in set(v.series.plain) | set(v.series.profiled)
                   if n > here.cpus})
    if not over:
        return ""
    return (f" ({', '.join(map(str, over))} tasks on {here.cpus} CPUs left out: "
            "more threads than CPUs)")


def seed_parts(lines, here):
    rows, notes = [], []
    for line in lines:
        s = line.scale
        valid = "; ".join(f"{v.params.key[2]} {check_text(summary_checks(v), here.cpus)}"
                          for v in (line.before, line.after) if v)
        figure = s.figure + ("" if s.figure.endswith("x") else "x")
        if line.predicted is None:
            rows.append([s.seed, f"{s.before} -> {s.after}", s.machine.name,
                         str(s.threads), "n/a", figure, "n/a", valid or "n/a",
                         "no prediction"])
            notes.append(f"{s.seed}: {line.problem}")
            continue
        q = line.quotient
        off = max(q, 1 / q)
        rows.append([s.seed, f"{s.before} -> {s.after}", s.machine.name, str(s.threads),
                     fmt_x(line.predicted), figure,
                     f"{q:.2f}", valid, "within 2x" if off <= 2 else f"off by {off:.1f}x"])
    for line in lines:
        if line.scale.note:
            notes.append(f"{line.scale.seed}: {line.scale.note}")
    title = "seeds: predicted after/before on the seed's machine at its thread count"
    header = ["Seed", "Before -> after", "Machine", "Threads", "Predicted", "Seed",
              "Quotient", "Validation", "Verdict"]
    return [("table", title, header, rows, 4)], notes


def machine_lines(here, target, seeds, measured):
    lines = [f"{here.describe()} (line transfers: the median of the profiled files'; "
             "each variant is validated on its own file's)"]
    lines += [f"  {name}: line transfer ns {latencies}" for name, latencies in measured]
    lines.append(f"table machine: {target.describe()}")
    for m in {s.scale.machine.name: s.scale.machine for s in seeds}.values():
        lines.append(f"seed machine {m.describe()}; CPU work x{slowdown(here, m):.2f} "
                     "(clock here / there)" if here.ghz and m.ghz else
                     f"seed machine {m.describe()}; CPU work as here (no clock to scale by)")
    return lines


FOOTNOTES = [
    "Predicted: exact mean value analysis of a closed network per variant, from the "
    "medians of its 1-thread profiled rows: threads as customers; the private time "
    "(1-thread time per operation less every hold) and sleeping I/O as a delay; each "
    "instance of a shared class a FIFO centre with demand visits x (hold + lines x "
    "L(N) x (m-1)/m) / instances, L(N) the mean line transfer latency between the m "
    "CPUs of N compactly placed threads; the CPU a load-dependent centre of C servers "
    "above C threads (README: Predicting other machines)",
    "Error: predicted against the measured median at that count on this machine, "
    "predicted from the 1-thread rows alone; Measured: median ± robust spread "
    "(median absolute deviation x 1.4826 as % of the median); Runs: repetitions, "
    "plain or profiled; T1: the 1-thread rows timing the operation (plain ones "
    "where there are any: the profile's counting slows a loop); Validation: "
    "the rows like T1's where measured",
    "* spinning waiters, more threads than CPUs: the model gives the CPU they spin on "
    "to others (optimistic)",
    "Quotient: predicted over the seed's figure (1.00 inside a range); within 2x when "
    "0.5 <= quotient <= 2",
]


def report_parts(model_tables, seed_lines, label, here, target, counts, notes, files,
                 measured):
    parts = [("para", [f"kscale predict: {len(sum(model_tables.values(), []))} variants "
                       f"from the 1-thread profiles in {', '.join(files)}"]
              + machine_lines(here, target, seed_lines, measured))]
    for model, variants in model_tables.items():
        parts += model_parts(model, variants, label, here, target, counts)
    seed_notes = []
    if seed_lines:
        tables, seed_notes = seed_parts(seed_lines, here)
        parts += tables
    parts.append(("para", FOOTNOTES + notes + seed_notes))
    return parts


def render(parts, markdown):
    out = []
    for part in parts:
        if part[0] == "para":
            out += compare.block(part[1], markdown)
            continue
        _, title, header, rows, left = part
        if markdown:
            out += [f"**{title}**", "", compare.markdown_row(header),
                    "|" + "|".join(":---" if i < left else "---:"
                                   for i in range(len(header))) + "|"]
            out += [compare.markdown_row(r) for r in rows] + [""]
        else:
            widths = compare.column_widths([header] + rows)
            out += [title, "", compare.aligned(header, widths, left), compare.rule(widths)]
            out += [compare.aligned(r, widths, left) for r in rows] + [""]
    return "\n".join(out).rstrip("\n") + "\n"


# ---------------------------------------------------------------- plots

@dataclass
class Curve:
    title: str
    predicted: list  # [(cpus, per CPU)] on the table machine
    measured: list   # [(threads, median, min, max)] per CPU, here
    usl: list        # [(cpus, per CPU)] of the USL fit, or []


def model_curves(variants, label, here, target):
    curves = []
    for v in variants:
        metric, s = v.params.metric, v.series
        measured = []
        for n in sorted(set(s.profiled) | set(s.plain)):
            per_cpu = [x if metric.endswith("_per_cpu") else x / n
                       for x in values(s.measured(n), metric)]
            if n <= here.cpus and per_cpu:
                measured.append((n, stats.median(per_cpu), min(per_cpu), max(per_cpu)))
        fitted = []
        if isinstance(v.fit, usl.Fit):
            fitted = [(p.threads, v.params.ratio * v.fit(p.threads) / p.threads)
                      for p in v.table]
        predicted = [(p.threads, p.per_cpu) for p in v.table]
        # a log axis: only positive (finite) values
        curves.append(Curve(label[v.params.key],
                            *([p for p in points if all(0 < x < math.inf for x in p)]
                              for points in (predicted, measured, fitted))))
    return curves


def plot_script(title, ylabel, curves, data, png, svg, counts):
    """gnuplot commands: per curve its prediction (a line), the measured
    medians (min..max bars) and any USL fit (dashed), in one colour."""
    items, index = [], 0
    for i, c in enumerate(curves, start=1):
        for points, style, what in ((c.predicted, "lines lw 2", "model"),
                                    (c.measured, "yerrorbars pt 7 ps 1.2", "measured"),
                                    (c.usl, "lines dt 2 lw 1", "USL")):
            if points:
                using = "1:2:3:4" if what == "measured" else "1:2"
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
        for points in (c.predicted, c.measured, c.usl):
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


# ---------------------------------------------------------------- the command

def default_results():
    directory = os.path.join(results_dir(), "default")
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        names = []
    if not names:
        raise KscaleError(f"no results in {directory}: run 'scripts/kscale run' "
                          "(the tour's profiled lines), or name RESULTS files")
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
    variants, notes = build_variants(series, here, target)
    seeds = [seed_line(s, variants, here) for s in scales]
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
    staged, written = [], []
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
                title = (f"{model}: {ylabel}\nlines: predicted on {target.name}\n"
                         f"points: measured on {here.name} (median, min..max), "
                         f"up to its {here.cpus} CPUs")
                stem = plot.short_name(f"predict-{plot.safe(model)}")
                staged += render_plot(gnuplot, workdir, os.path.join(out_dir, stem),
                                      title, ylabel, model_curves(vs, label, here, target),
                                      counts)
        try:
            for ext, body in ((".txt", text), (".md", markdown)):
                cli.write_atomic(out_base + ext, body)
                written.append(out_base + ext)
            sys.stdout.write(text)
            sys.stdout.flush()
            plot.install(staged)
        except OSError as e:
            raise KscaleError(f"cannot write: {e.strerror or e}") from None
    for path in written:
        print(path)


def main(argv):
    return cli.run(PROG, predict_command, argv)
