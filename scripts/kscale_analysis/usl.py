"""Gunther's Universal Scalability Law, fitted to measured throughput.

    X(N) = lambda * N / (1 + sigma * (N - 1) + kappa * N * (N - 1))

sigma is contention (the serial share), kappa coherency (the cost of
every pair of CPUs agreeing on shared data).  Three parameters need three
distinct CPU counts: with fewer the fit is refused, not guessed; so is a
window that measured nothing (no relative residual exists for it).
"""

import math
from dataclasses import dataclass

MIN_COUNTS = 3


class Refused(Exception):
    """Too few distinct CPU counts to fit; str() is the one-line reason."""


@dataclass
class Fit:
    lam: float    # throughput of one CPU
    sigma: float  # contention
    kappa: float  # coherency
    counts: int   # distinct CPU counts fitted

    def __call__(self, n):
        return self.lam * n / (1 + self.sigma * (n - 1) + self.kappa * n * (n - 1))

    @property
    def peak(self):
        """The CPU count of the highest throughput, or None (no retrograde)."""
        if self.kappa <= 0 or self.sigma >= 1:
            return None
        return math.sqrt((1 - self.sigma) / self.kappa)


def fit(points):
    """Least-squares fit to [(cpus, throughput), ...] (repetitions may
    repeat a count), on relative residuals so each count weighs the same
    whatever its rate; sigma, kappa >= 0.  Raises Refused below
    MIN_COUNTS distinct counts or for a count that measured nothing."""
    idle = sorted({n for n, x in points if not x > 0})
    if idle:
        raise Refused(f"USL: no throughput measured at {', '.join(map(str, idle))} "
                      "CPU(s)")
    counts = sorted({n for n, _ in points})
    if len(counts) < MIN_COUNTS:
        raise Refused(f"USL: needs {MIN_COUNTS} or more CPU counts, have {len(counts)}")
    from scipy.optimize import least_squares  # slow import, only when fitting
    ns = [float(n) for n, _ in points]
    xs = [float(x) for _, x in points]
    first = [x / n for n, x in points if n == counts[0]]
    lam0 = sum(first) / len(first)

    def residuals(p):
        lam, sigma, kappa = p
        return [(lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1)) - x) / x
                for n, x in zip(ns, xs)]

    result = least_squares(residuals, [lam0, 0.01, 0.0001],
                           bounds=([lam0 * 1e-6, 0.0, 0.0], [math.inf, math.inf, math.inf]),
                           x_scale=[lam0, 0.1, 0.001], xtol=1e-12, ftol=1e-12)
    lam, sigma, kappa = result.x
    return Fit(lam, sigma, kappa, len(counts))
