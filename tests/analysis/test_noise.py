import json
import os
import tempfile
import unittest

from . import run_cli
from kscale_analysis import noise


class NoiseTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def results(self, values_of, context=None):
        """A results file: one point per (variant, values), in run order."""
        rows = [{"name": f"m/w/{variant}/threads:1", "run_type": "iteration",
                 "threads": 1, "ops_per_sec": v}
                for variant, values in values_of.items() for v in values]
        path = os.path.join(self.tmp.name, "r.json")
        with open(path, "w") as f:
            json.dump({"context": context or {}, "benchmarks": rows}, f)
        return path

    def test_no_change_between_halves_is_no_false_positive(self):
        flat = [100.0 + (i % 3) for i in range(18)]
        path = self.results({f"v{k}": flat for k in range(20)})
        proc = run_cli("noise", path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("ops_per_sec: 20 points, A/A halves of their repetitions (9 a side)",
                      proc.stdout)
        self.assertIn("false positives: 0 of 20 judged (0.0%)", proc.stdout)

    def test_a_drift_between_halves_shows_as_false_positives(self):
        # odd repetitions disturbed: every point's halves differ
        zigzag = [100.0 if i % 2 == 0 else 150.0 + i for i in range(18)]
        path = self.results({f"v{k}": zigzag for k in range(20)})
        proc = run_cli("noise", path)
        self.assertIn("false positives: 20 of 20 judged (100.0%)", proc.stdout)

    def test_few_repetitions_get_no_verdict(self):
        path = self.results({"a": [1.0, 2.0, 3.0, 4.0], "b": [5.0, 6.0]})
        out = run_cli("noise", path).stdout
        self.assertIn("no verdict: every half has fewer than 4 repetitions", out)

    def test_spread_summary(self):
        self.assertEqual(noise.percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.9), 4.6)
        self.assertIsNone(noise.percentile([], 0.5))
        path = self.results({"a": [100.0, 100.0, 100.0, 100.0, 1000.0, 100.0, 100.0, 100.0]})
        out = run_cli("noise", path).stdout
        self.assertIn("robust spread across points: median 0.00%", out)

    def test_errors(self):
        proc = run_cli("noise", self.results({"a": [1.0]}), "--metric=nope")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("kscale noise: ", proc.stderr)
        self.assertIn("no metric 'nope'", proc.stderr)


class AdaptiveTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def batch(self, n, values):
        path = os.path.join(self.tmp.name, f"b{n}.json")
        rows = [{"name": "m/w/v/threads:1", "run_type": "iteration", "threads": 1,
                 "ops_per_sec": v} for v in values]
        with open(path, "w") as f:
            json.dump({"context": {"kscale_primary_metric": "ops_per_sec"},
                       "benchmarks": rows}, f)
        return path

    def test_halfwidth(self):
        from kscale_analysis import adaptive
        self.assertEqual(adaptive.median_ci_halfwidth([5.0] * 6), 0.0)
        self.assertIsNone(adaptive.median_ci_halfwidth([1.0, 2.0, 3.0]))
        # medians of resamples of 90..110 stay within 90..110: at most ±10%
        half = adaptive.median_ci_halfwidth([90.0, 95.0, 100.0, 105.0, 110.0])
        self.assertTrue(0 < half <= 10.0, half)

    def test_check_and_merge(self):
        a = self.batch(1, [100.0, 110.0, 90.0, 100.0])
        b = self.batch(2, [100.0, 101.0, 99.0, 100.0])
        wide = run_cli("adaptive", "check", "--target-ci=1%", a)
        self.assertEqual(wide.returncode, 1)
        self.assertIn("is not below ±1% yet", wide.stderr)
        self.assertEqual(run_cli("adaptive", "check", "--target-ci=20", a, b).returncode, 0)
        out = os.path.join(self.tmp.name, "all.json")
        self.assertEqual(run_cli("adaptive", "merge", out, a, b).returncode, 0)
        with open(out) as f:
            self.assertEqual(len(json.load(f)["benchmarks"]), 8)
        bad = run_cli("adaptive", "check", "--target-ci=two", a)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("expected a percentage", bad.stderr)
