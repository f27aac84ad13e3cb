"""Exact mean value analysis of a closed, single-class queueing network.

`kscale predict` models a benchmark's threads as N customers circulating
through a delay centre (work no other thread waits for, and sleeping
I/O), queueing centres (the shared resources: each instance of a class a
FIFO single server) and, when the threads outnumber the CPUs, the CPU
itself as one load-dependent centre with C servers.

solve() is Reiser and Lavenberg's recursion: for n = 1..N customers, the
residence time of a visit to a queueing centre is its demand times one
plus the queue an arrival finds, which (the arrival theorem) is the
centre's mean queue with n - 1 customers.  Identical centres (the k
instances of a class, each with demand D/k) are one group: their queues
are equal, so one recursion serves them all, and 100 directories cost no
more than one.  The load-dependent CPU keeps the marginal probabilities
p(j | n) of j customers there (Reiser and Lavenberg's load-dependent
form), which is exact but O(N^2); it is used only above C threads.
"""

from dataclasses import dataclass


@dataclass
class Centre:
    """A group of `count` identical FIFO single servers, each visited with
    `demand` seconds (or ns: any one unit) of service per operation."""
    demand: float
    count: int = 1


@dataclass
class Solution:
    """The network at `population` customers."""
    population: int
    throughput: float   # operations per time unit, all customers together
    residence: list     # per Centre group: time per operation at ONE of its centres
    queue: list         # per Centre group: mean customers at one of its centres
    cpu_residence: float = 0.0  # time per operation at the multi-server CPU
    cpu_queue: float = 0.0
    cycle: float = 0.0  # time per operation, delay included: population / throughput


def _multiserver_step(probs, throughput, demand, servers):
    """Marginal probabilities at n customers from those at n - 1 (probs)."""
    new = [0.0] * (len(probs) + 1)
    for j in range(1, len(new)):
        new[j] = throughput * demand / min(j, servers) * probs[j - 1]
    # p(0|n) by difference; rounding can push it a hair below 0
    new[0] = max(0.0, 1.0 - sum(new[1:]))
    total = sum(new)
    return [p / total for p in new]


def solve(population, centres, delay=0.0, cpu=None):
    """Exact MVA up to `population` customers; the Solution at each n.

    centres: [Centre, ...]; delay: time per operation no one queues for;
    cpu: None, or (demand, servers): a load-dependent centre whose
    service rate is min(j, servers) / demand with j customers there.
    Returns [Solution at n = 1, ..., Solution at n = population]."""
    if population < 1:
        raise ValueError("population must be >= 1")
    if delay < 0 or any(c.demand < 0 or c.count < 1 for c in centres):
        raise ValueError("demands must be >= 0, counts >= 1")
    queue = [0.0] * len(centres)
    probs = [1.0]  # p(j | n-1) at the CPU: nobody there at n = 0
    out = []
    for n in range(1, population + 1):
        residence = [c.demand * (1.0 + q) for c, q in zip(centres, queue)]
        cycle = delay + sum(c.count * r for c, r in zip(centres, residence))
        cpu_residence = 0.0
        if cpu is not None:
            demand, servers = cpu
            # a visit's residence: sum over what it finds, j - 1 ahead
            cpu_residence = sum(demand * j / min(j, servers) * probs[j - 1]
                                for j in range(1, n + 1))
            cycle += cpu_residence
        throughput = n / cycle if cycle > 0 else float("inf")
        queue = [throughput * r for r in residence]
        if cpu is not None:
            probs = _multiserver_step(probs, throughput, *cpu)
        out.append(Solution(n, throughput, residence, list(queue), cpu_residence,
                            throughput * cpu_residence, cycle))
    return out


def throughput(population, centres, delay=0.0, cpu=None):
    """X(population) of the network: solve()'s last throughput."""
    return solve(population, centres, delay, cpu)[-1].throughput
