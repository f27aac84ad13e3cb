"""kscale predict's machines: machine files, this machine from the results'
contexts, and the line transfer latency of a compact placement."""

import math
import os
import re
from dataclasses import dataclass, field

from .. import stats
from ..results import KscaleError, finite


MAX_CPUS = 512
# CPUs of a machine and threads of a prediction: NR_CPUS at most (x86's
# CONFIG_MAXSMP); above a machine's CPUs the MVA's CPU centre costs N^2
MAX_THREADS = 8192


LATENCIES = ("smt", "node", "remote")

# The figures the simulator reads (lib/sim/machine.c), each with its
# source.KEY line, besides the optional wake_curve
SIM_FIGURES = ("cpus", "nodes", "threads_per_core", "line_bytes", "ghz",
               "hit_ns", "line_ns_smt", "line_ns_node", "line_ns_remote",
               "mem_ns_local", "mem_ns_remote", "atomic_ns", "wake_ns",
               "ctxsw_ns")
# every key a machine file may have (lib/sim/machine.c's keys[]), each
# but name and wake_curve with its source.KEY
MACHINE_KEYS = SIM_FIGURES + ("ipc", "smt_throughput", "wake_curve")


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


def positive_number(value, what, integer=False, most=None):
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
        cpus = positive_number(values.get("cpus"), "cpus", integer=True, most=MAX_THREADS)
        nodes = positive_number(values.get("nodes", "1"), "nodes", integer=True)
        tpc = positive_number(values.get("threads_per_core", "1"), "threads_per_core", integer=True)
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
                line_ns[kind] = positive_number(text, f"line_ns_{kind}")
        ghz = values.get("ghz")
        ghz = None if ghz in (None, "", "none") else positive_number(ghz, "ghz")
    except ValueError as e:
        raise KscaleError(f"{where}: {e}") from None
    sources = {k[len("source."):]: v for k, v in values.items() if k.startswith("source.")}
    return Machine(values.get("name") or name, cpus, nodes, tpc, line_ns, ghz, sources)


def machine_path(spec, directory):
    """NAME -> DIRECTORY/NAME.conf; anything with a '/' or .conf is a path."""
    if "/" in spec or spec.endswith(".conf"):
        return spec
    return os.path.join(directory, f"{spec}.conf")


def machine_values(path):
    """A machine file's `key = value` lines as a dict (configs/machines/README):
    a '#' starts a comment to the end of its line; blank lines are skipped."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines()
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
        if key != "name" and key.removeprefix("source.") not in MACHINE_KEYS:
            raise KscaleError(f"{path}:{lineno}: unknown key '{key}' "
                              "(configs/machines/README)")
        values[key] = value
    if text and not text.endswith("\n"):
        raise KscaleError(f"{path}:{len(lines)}: no newline at the end "
                          "(the file cut short?)")
    return values


def read_machine(path):
    """Parse a machine file into the Machine predict's MVA uses."""
    values = machine_values(path)
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
