import json
import os
import tempfile
import unittest

from . import RUN_A, RUN_B, run_cli
from kscale_analysis import results, stats

M = 1e6
G1 = "openbench mounts:2 path_work_ns:0 placement:compact"
G2 = "openbench mounts:16 path_work_ns:0 placement:compact"


def row_for(output, test):
    """The text or markdown table row whose Test column is exactly `test`."""
    for line in output.splitlines():
        if line.startswith((test + "  ", f"| {test} |")):
            return line
    raise AssertionError(f"no row {test!r} in:\n{output}")


class StatsTest(unittest.TestCase):
    def test_median_cv_change(self):
        before = [10 * M, 11 * M, 12 * M, 13 * M, 14 * M]
        self.assertEqual(stats.median(before), 12 * M)
        self.assertAlmostEqual(stats.cv_percent(before), 1.5811388 / 12 * 100, places=4)
        self.assertAlmostEqual(stats.percent_change(12 * M, 22 * M), 83.3333, places=3)
        self.assertAlmostEqual(stats.percent_change(12.0, 6.0), -50.0)
        self.assertIsNone(stats.percent_change(0.0, 1.0))
        self.assertIsNone(stats.cv_percent([5.0]))
        self.assertEqual(stats.median([1.0, 100.0, 2.0, 3.0]), 2.5)

    def test_significance_mann_whitney(self):
        low = [float(v) for v in range(100, 109)]
        high = [float(v) for v in range(200, 209)]
        self.assertTrue(stats.significant(low, high))
        self.assertFalse(stats.significant(low, low[::-1]))
        self.assertFalse(stats.significant([1.0] * 5, [1.0] * 5))
        self.assertEqual(stats.fmt_change(low, high), "+96.2%")
        self.assertEqual(stats.fmt_change(low, [v + 0.5 for v in low]), "+0.5% ~")

    def test_significance_few_repetitions_uses_ranges(self):
        self.assertTrue(stats.significant([1.0, 2.0, 3.0], [3.5, 4.0, 5.0]))
        self.assertFalse(stats.significant([1.0, 2.0, 3.0], [3.0, 4.0, 5.0]))
        self.assertFalse(stats.significant([], [1.0]))

    def test_percentage_points_and_seed_headers(self):
        from kscale_analysis import compare
        before = [19.0, 20.0, 21.0, 19.5, 20.5]
        after = [14.0, 14.5, 15.0, 13.5, 14.2]
        self.assertEqual(stats.fmt_points(before, after), "-5.80 pp")
        self.assertEqual(stats.fmt_points(before, before), "+0.00 pp ~")
        self.assertEqual(compare.header("total_MBps"),
                         ["Test", "BW before", "BW after", "% change"])
        self.assertEqual(compare.header("down_write_failed_self_pct"),
                         ["Test", "before", "after", "pp change"])

    def test_format(self):
        self.assertEqual(stats.fmt_value(12.34 * M), "12.3M")
        self.assertEqual(stats.fmt_value(456_700.0), "456.7k")
        self.assertEqual(stats.fmt_value(1.234 * M), "1.23M")
        self.assertEqual(stats.fmt_value(0.98), "0.98")
        self.assertEqual(stats.fmt_cell([0.5, 0.5]), "0.5 ±0.0%")
        self.assertEqual(stats.fmt_cell([7.0]), "7")
        self.assertEqual(stats.fmt_cell([]), "n/a")


class ResultsTest(unittest.TestCase):
    def test_load_groups_interleaved_iterations_and_ignores_aggregates(self):
        res = results.load(RUN_A)
        self.assertEqual(len(res.runs), 6)
        self.assertEqual(res.variants(), ["atomic", "percpu"])
        run = next(r for r in res.runs.values() if r.variant == "percpu" and r.threads == 1)
        self.assertEqual(run.values("ops_per_sec"), [10 * M, 11 * M, 12 * M, 13 * M, 14 * M])
        self.assertEqual(run.knobs, (("mounts", "2"), ("path_work_ns", "0"),
                                     ("placement", "compact")))

    def test_non_finite_values_are_missing(self):
        res = results.load(RUN_A)
        run = next(r for r in res.runs.values()
                   if r.variant == "percpu" and r.knobs[0] == ("mounts", "16"))
        self.assertEqual(run.values("fairness"), [0.9, 0.8])

    def test_parse_name(self):
        self.assertEqual(
            results.parse_name("m/w/v/hit:low/iterations:1/repeats:3/manual_time/threads:4", 4),
            ("m", "w", "v", (("hit", "low"),), 4))
        self.assertEqual(results.parse_name("m/w/v", 1), ("m", "w", "v", (), 1))
        for bad in ("m/w", "m//v", "m/w/v/knob", "m/w/v/threads:x", "m/w/v/:1"):
            with self.subTest(name=bad), self.assertRaises(ValueError):
                results.parse_name(bad)
        with self.assertRaises(ValueError):
            results.parse_name("m/w/v/threads:2", 4)

    def test_unit(self):
        self.assertEqual(results.unit("ops_per_sec"), "ops/s")
        self.assertEqual(results.unit("ops_per_sec_per_cpu"), "ops/s per CPU")
        self.assertEqual(results.unit("fairness"), "")


class CompareVariantsTest(unittest.TestCase):
    def test_text_table(self):
        proc = run_cli("compare", RUN_A, "--before=percpu", "--after=atomic")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertIn("mnt_writers: ops_per_sec (ops/s), before=percpu after=atomic", out)
        self.assertRegex(out, r"Test +before +after +% change")
        line = row_for(out, f"{G1} threads:1")
        self.assertRegex(line, r"12\.0M ±13\.2% +22\.0M ±7\.2% +\+83\.3%$")
        self.assertRegex(row_for(out, f"{G1} threads:2"),
                         r"14\.0M ±22\.6% +15\.0M ±21\.1% +\+7\.1% ~$")
        # 3 repetitions with overlapping ranges: not significant
        self.assertRegex(row_for(out, f"{G2} threads:2"),
                         r"2\.00k ±50\.0% +4\.00k ±52\.9% +\+100\.0% ~$")
        self.assertIn("n = 3..5 repetitions", out)
        self.assertIn("Mann-Whitney", out)
        self.assertEqual(proc.stderr, "")

    def test_several_metrics_and_markdown(self):
        proc = run_cli("compare", RUN_A, "--before", "percpu", "--after", "atomic",
                       "--metric=ops_per_sec,fairness", "--format=markdown")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertIn("**mnt_writers: ops_per_sec (ops/s), before=percpu after=atomic**", out)
        self.assertIn("**mnt_writers: fairness, before=percpu after=atomic**", out)
        table_rows = [l for l in out.splitlines() if l.startswith("|")]
        self.assertEqual(len(table_rows), 2 * (2 + 3))  # (header + rule + 3 rows) per metric
        self.assertIn(f"| {G1} threads:1 | 12.0M ±13.2% | 22.0M ±7.2% | +83.3% |", out)
        self.assertIn(f"| {G1} threads:1 | 0.97 ±1.6% | 0.7 ±22.6% | -27.8% |", out)
        # the NaN repetition is left out: median of 0.9 and 0.8
        self.assertIn(f"| {G2} threads:2 | 0.85 ±8.3% | 0.9 ±0.0% | +5.9% ~ |", out)

    def test_selectors_compare_across_a_knob(self):
        proc = run_cli("compare", RUN_A, "--before=percpu/mounts:2",
                       "--after=percpu/mounts:16")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # mounts is matched by the selectors and left out of the Test column
        line = row_for(proc.stdout, "openbench path_work_ns:0 placement:compact threads:2")
        self.assertRegex(line, r"14\.0M ±22\.6% +2\.00k ±50\.0% +-100\.0%$")
        self.assertEqual(len([l for l in proc.stdout.splitlines() if "threads:" in l]), 1)
        bad = run_cli("compare", RUN_A, "--before=percpu/mounts", "--after=atomic")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("bad selector", bad.stderr)

    def test_selectors_compare_across_thread_counts(self):
        proc = run_cli("compare", RUN_A, "--before=percpu/threads:1",
                       "--after=percpu/threads:2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = [l for l in proc.stdout.splitlines() if "threads:1->2" in l]
        self.assertTrue(rows, proc.stdout)
        # `all` needs the context's allowed CPUs, which this file lacks
        bad = run_cli("compare", RUN_A, "--before=percpu/threads:all",
                      "--after=percpu/threads:all*4")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("kscale_allowed_cpus", bad.stderr)

    def test_repeated_metric_option(self):
        proc = run_cli("compare", RUN_A, "--before=percpu", "--after=atomic",
                       "--metric=fairness", "--metric", "ops_per_sec_per_cpu")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("mnt_writers: fairness,", proc.stdout)
        self.assertIn("mnt_writers: ops_per_sec_per_cpu (ops/s per CPU),", proc.stdout)
        self.assertNotIn("ops_per_sec (ops/s)", proc.stdout)


class CompareFilesTest(unittest.TestCase):
    def test_pairs_by_name(self):
        proc = run_cli("compare", RUN_A, RUN_B)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertIn(f"before: {RUN_A} (kernel 6.1.0, host testhost)", out)
        self.assertIn(f"after: {RUN_B} (kernel 6.8.0, host testhost)", out)
        percpu = "openbench percpu mounts:2 path_work_ns:0 placement:compact"
        atomic = "openbench atomic mounts:2 path_work_ns:0 placement:compact"
        self.assertRegex(row_for(out, f"{percpu} threads:1"), r"12\.0M .* 22\.0M .* \+83\.3%$")
        self.assertRegex(row_for(out, f"{percpu} threads:2"), r"14\.0M .* 28\.0M .* \+100\.0%$")
        self.assertRegex(row_for(out, f"{atomic} threads:1"), r"\+0\.0% ~$")
        self.assertNotIn("threads:4", out)
        self.assertNotIn(f"{atomic} threads:2", out)
        self.assertIn(f"only in {RUN_A}: 3 benchmarks", out)
        self.assertIn(f"only in {RUN_B}: 1 benchmark\n", out)


class CompareErrorsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_error(self, args, *fragments):
        proc = run_cli("compare", *args)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertNotIn("Traceback", proc.stderr)
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(lines[0].startswith("kscale compare: "), lines[0])
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def test_input_errors(self):
        sides = ["--before=percpu", "--after=atomic"]
        row = {"name": "m/w/v/threads:1", "run_type": "iteration", "threads": 1,
               "ops_per_sec": 1.0}
        cases = {
            "missing file": ([os.path.join(self.tmp.name, "nope.json")], "No such file"),
            "invalid JSON": ([self.write("bad.json", '{"benchmarks": [')], "invalid JSON"),
            "no benchmarks": ([self.write("nob.json", '{"context": {}}')],
                              'not Google Benchmark JSON (no "benchmarks" list)'),
            "empty benchmarks": ([self.write("empty.json", '{"benchmarks": []}')], "empty"),
            "malformed name": ([self.write("name.json", json.dumps(
                {"benchmarks": [dict(row, name="m/w")]}))], "malformed benchmark name 'm/w'"),
            "unknown variant": ([self.write("v.json", json.dumps({"benchmarks": [row]}))],
                                "no variant 'percpu' (variants: v)"),
        }
        for what, (files, fragment) in cases.items():
            with self.subTest(what):
                self.assert_error(files + sides, fragment)

    def test_usage_errors(self):
        self.assert_error([RUN_A, "--before=percpu", "--after=nope"],
                          "no variant 'nope' (variants: atomic, percpu)")
        self.assert_error([RUN_A, "--before=percpu", "--after=atomic", "--metric=latency"],
                          "no metric 'latency'", "ops_per_sec")
        self.assert_error([RUN_A, "--before=percpu"], "--after")
        self.assert_error([RUN_A, RUN_B, "--before=percpu"], "one results file")
        self.assert_error([RUN_A, "--before=percpu", "--after=atomic", "--format=html"],
                          "invalid choice")
        self.assert_error([RUN_A, "--bogus"], "--bogus")

    def test_help(self):
        proc = run_cli("compare", "--help")
        self.assertEqual(proc.returncode, 0)
        for option in ("--before", "--after", "--metric", "--format", "A.json B.json"):
            self.assertIn(option, proc.stdout)


if __name__ == "__main__":
    unittest.main()
