"""The ticket spinlock's Markov model of Boyd-Wickizer, Kaashoek, Morris and
Zeldovich, "Non-scalable locks are dangerous" (Linux Symposium 2012), the
analytic reference the simulator is checked against (docs/sim.md).

n cores each run a non-critical section of mean length a, then take one
ticket lock and hold it for s.  State k (0..n) is the number of cores
holding or waiting for the lock.  A core outside arrives at rate 1/a, so
state k moves to k + 1 at rate (n - k) / a.  The lock passes on at rate
1 / (s + c k / 2): the holder's section, then the hand-off, in which the
home directory answers the k waiters' reads of the released line one
after another (c each) and the next holder's read is, on average, half
way along.  The chain is a birth-death process, so its steady state is a
product:

    P_k = P_0 * prod_{i=0}^{k-1} ((n - i) / a) * (s + c (i + 1) / 2)

and the lock's throughput is sum_{k>=1} P_k / (s + c k / 2).  The paper
gives the service rate as 1 / (s + ck/2) (restated in several reading
notes of it; its displayed product has been quoted with ck instead, which
disagrees with its own rate: the rate is what is used here).
"""

import math


def steady_state(n, a, s, c):
    """P_0..P_n for n cores; a, s, c in one time unit."""
    logs = [0.0]
    for i in range(n):
        logs.append(logs[-1] + math.log((n - i) / a) +
                    math.log(s + c * (i + 1) / 2))
    top = max(logs)
    w = [math.exp(x - top) for x in logs]
    total = sum(w)
    return [x / total for x in w]


def throughput(n, a, s, c):
    """Lock acquisitions per time unit (the unit of a, s and c)."""
    p = steady_state(n, a, s, c)
    return sum(p[k] / (s + c * k / 2) for k in range(1, n + 1))


def curve(ns, a, s, c):
    """{n: throughput} over the core counts ns."""
    return {n: throughput(n, a, s, c) for n in ns}


def collapse_point(tp):
    """The core count of the peak of a {n: throughput} curve."""
    return max(tp, key=lambda n: (tp[n], -n))
