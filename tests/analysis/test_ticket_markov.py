"""The ticket lock's Markov model (scripts/kscale_analysis/ticket_markov.py)
against the chain solved numerically and against its limits."""

import unittest

import numpy as np

from scripts.kscale_analysis import ticket_markov as tm


def solve_chain(n, a, s, c):
    """The same chain's steady state from its generator matrix."""
    q = np.zeros((n + 1, n + 1))
    for k in range(n + 1):
        if k < n:
            q[k, k + 1] = (n - k) / a
        if k > 0:
            q[k, k - 1] = 1 / (s + c * k / 2)
        q[k, k] = -q[k].sum()
    m = np.vstack([q.T, np.ones(n + 1)])
    rhs = np.zeros(n + 2)
    rhs[-1] = 1
    return np.linalg.lstsq(m, rhs, rcond=None)[0]


class TicketMarkov(unittest.TestCase):
    def test_product_form_is_the_chains_steady_state(self):
        for n, a, s, c in ((1, 100, 10, 5), (8, 5000, 160, 120),
                           (48, 20000, 400, 300)):
            p = tm.steady_state(n, a, s, c)
            np.testing.assert_allclose(p, solve_chain(n, a, s, c),
                                       rtol=1e-6, atol=1e-12)

    def test_one_core_alone(self):
        # no queue: one acquisition every a + s + c/2
        self.assertAlmostEqual(tm.throughput(1, 1000, 100, 50),
                               1 / (1000 + 100 + 25), places=9)

    def test_without_handoff_cost_it_saturates_at_the_section(self):
        tp = tm.throughput(48, 1000, 100, 0)
        self.assertAlmostEqual(tp, 1 / 100, delta=1e-5)

    def test_handoff_cost_makes_it_collapse(self):
        tp = tm.curve(range(1, 49), 20000, 400, 300)
        peak = tm.collapse_point(tp)
        self.assertLess(peak, 48)
        self.assertLess(tp[48], 0.5 * tp[peak])


if __name__ == '__main__':
    unittest.main()
