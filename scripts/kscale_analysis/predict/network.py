"""kscale predict's model: a variant's closed queueing network on a machine
at N threads, solved by exact mean value analysis (mva.py)."""

from dataclasses import dataclass

from .. import mva
from ..results import KscaleError
from .machine import MAX_CPUS, MAX_THREADS, line_latency, placement


NEGLIGIBLE_WAIT_NS = 1.0  # spinning waits below this are not flagged
MIN_VISITS = 1e-3  # classes visited less often per operation are not shown


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
