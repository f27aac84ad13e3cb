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
    def test_median_spread_change(self):
        before = [10 * M, 11 * M, 12 * M, 13 * M, 14 * M]
        self.assertEqual(stats.median(before), 12 * M)
        # MAD 1M, x 1.4826, of a 12M median
        self.assertAlmostEqual(stats.spread_percent(before), 1.4826 / 12 * 100, places=4)
        self.assertAlmostEqual(stats.percent_change(12 * M, 22 * M), 83.3333, places=3)
        self.assertAlmostEqual(stats.percent_change(12.0, 6.0), -50.0)
        self.assertIsNone(stats.percent_change(0.0, 1.0))
        self.assertIsNone(stats.spread_percent([5.0]))
        self.assertEqual(stats.median([1.0, 100.0, 2.0, 3.0]), 2.5)
        # one outlier moves a stddev (143.7%) but not the robust spread
        self.assertEqual(stats.spread_percent([100.0, 100.0, 100.0, 100.0, 1000.0]), 0.0)
        self.assertEqual(stats.fmt_cell([100.0, 100.0, 100.0, 100.0, 1000.0]), "100 ±0.0%")

    def test_no_verdict_below_four_repetitions(self):
        for n in (1, 2, 3):
            low, high = [1.0 + i for i in range(n)], [100.0 + i for i in range(n)]
            a = stats.assess_table([(low, high)])[0]
            self.assertEqual(a.mark, "?", n)
            self.assertIsNone(a.p)
            self.assertIsNone(a.ci)
            self.assertEqual(stats.fmt_ci(a), "n/a")
            self.assertTrue(stats.fmt_change(a).endswith(" ?"))

    def test_verdicts_at_four_and_nine(self):
        four = stats.assess_table([([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0])])[0]
        self.assertAlmostEqual(four.p, 2 / 70)  # exact: both extreme orderings of 8
        self.assertEqual(four.mark, "")
        low = [float(v) for v in range(100, 109)]
        high = [float(v) for v in range(200, 209)]
        nine = stats.assess_table([(low, high), (low, low[::-1])])
        self.assertEqual([a.mark for a in nine], ["", "~"])
        self.assertEqual(stats.fmt_change(nine[0]), "+96.2%")
        # identical samples and ties: no evidence of a change
        same = stats.assess_table([([5.0] * 4, [5.0] * 4), ([1.0, 1.0, 2.0, 2.0],
                                                            [1.0, 2.0, 2.0, 1.0])])
        self.assertEqual([a.mark for a in same], ["~", "~"])
        self.assertEqual(same[0].p, 1.0)
        self.assertEqual(same[0].ci, (0.0, 0.0))

    def test_min_effect(self):
        low = [float(v) for v in range(1000, 1009)]
        nudged = [v + 9 for v in low]  # separated, +0.9%
        self.assertEqual(stats.assess_table([(low, nudged)])[0].mark, "~")
        self.assertEqual(stats.assess_table([(low, nudged)], min_effect=0.5)[0].mark, "")
        # percentage points from 0: the effect is absolute
        self.assertEqual(stats.assess_table([([0.0] * 5, [0.5] * 5)], points=True)[0].mark,
                         "~")
        self.assertEqual(stats.assess_table([([0.0] * 5, [2.0] * 5)], points=True)[0].mark,
                         "")

    def test_bootstrap_interval(self):
        # constant sides: every resample has the same medians
        self.assertEqual(stats.bootstrap_ci([100.0] * 4, [110.0] * 4), (10.0, 10.0))
        self.assertEqual(stats.bootstrap_ci([2.0] * 4, [5.0] * 4, points=True), (3.0, 3.0))
        # a known case: resampled medians of {1,2,3,4,5} lie in 1..5, so the
        # change against a constant 10 lies in +100%..+900%, and the fixed
        # seed makes it reproducible
        before, after = [1.0, 2.0, 3.0, 4.0, 5.0], [10.0] * 5
        lo, hi = stats.bootstrap_ci(before, after)
        self.assertTrue(100.0 <= lo < 233.4 < hi <= 900.0, (lo, hi))
        self.assertEqual(stats.bootstrap_ci(before, after), (lo, hi))
        self.assertNotEqual(stats.bootstrap_ci(before, after, seed=2), None)

    def test_benjamini_hochberg(self):
        # by hand: sorted 0.005, 0.01, 0.03, 0.04 -> x 4/rank = 0.02, 0.02,
        # 0.04, 0.04, then the running minimum from the top
        q = stats.benjamini_hochberg([0.01, 0.04, 0.03, 0.005, None])
        for got, want in zip(q, [0.02, 0.04, 0.04, 0.02, None]):
            if want is None:
                self.assertIsNone(got)
            else:
                self.assertAlmostEqual(got, want)
        # a lone separated row at n=4 (p = 0.029) is significant; among
        # three rows with no change its q is 0.086: not any more
        sep = ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0])
        null = ([1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0])
        marks = [a.mark for a in stats.assess_table([sep, null, null])]
        self.assertEqual(marks, ["~", "~", "~"])
        self.assertEqual(stats.assess_table([sep])[0].mark, "")

    def test_percentage_points_and_seed_headers(self):
        from kscale_analysis import compare
        before = [19.0, 20.0, 21.0, 19.5, 20.5]
        after = [14.0, 14.5, 15.0, 13.5, 14.2]
        a = stats.assess_table([(before, after)], points=True)[0]
        self.assertEqual(stats.fmt_change(a, points=True), "-5.80 pp")
        self.assertEqual(compare.header("total_MBps"),
                         ["Test", "BW before", "BW after", "% change", "95% CI"])
        self.assertEqual(compare.header("down_write_failed_self_pct"),
                         ["Test", "before", "after", "pp change", "95% CI"])

    def test_bistable_seeds(self):
        # five seeds of a saturated line: 3 near 5.7M, 2 near 7.5M; the
        # median (5.8M) and its spread (±2.6%) hide the second state
        split = [5.7 * M, 7.4 * M, 5.75 * M, 7.5 * M, 5.8 * M]
        low, high = stats.bistable(split)
        self.assertEqual((low, high), ([5.7 * M, 5.75 * M, 5.8 * M], [7.4 * M, 7.5 * M]))
        self.assertEqual(stats.states(split), [5.75 * M, 7.45 * M])
        self.assertEqual(stats.fmt_cell(split), "5.80M ±2.6%")
        self.assertEqual(stats.fmt_cell(split, seeds=True),
                         "bistable: 5.70M..7.50M over 5 seeds")
        # one seed of five in a second state is one too
        self.assertEqual(stats.bistable([1.0, 1.0, 1.0, 1.0, 2.0]),
                         ([1.0] * 4, [2.0]))
        for stable in ([5.7, 5.9, 6.1, 6.3, 6.5],  # spread evenly: the ± says it
                       [100.0, 100.0, 100.0, 109.0, 109.0],  # gap 9% < 10%
                       [100.0, 110.0, 120.0, 135.0, 140.0],  # gap 15 < 2 x 20
                       [5.7, 7.5],  # two seeds: no parts to tell apart
                       [0.0, 0.0, 0.0]):
            self.assertIsNone(stats.bistable(stable), stable)
            self.assertEqual(stats.states(stable), [stats.median(stable)])
            self.assertNotIn("bistable", stats.fmt_cell(stable, seeds=True))
        # at the bounds: a gap of exactly 10% of the median and 2x the range
        self.assertTrue(stats.bistable([100.0, 100.0, 100.0, 110.0, 110.0]))
        self.assertIsNone(stats.bistable([100.0, 100.0, 100.0, 109.9, 110.0]))
        self.assertTrue(stats.bistable([85.0, 95.0, 115.0, 115.0, 115.0]))
        self.assertIsNone(stats.bistable([85.0, 95.0, 114.9, 115.0, 115.0]))

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

    def test_a_missing_counter_is_left_out(self):
        res = results.load(RUN_A)
        run = next(r for r in res.runs.values()
                   if r.variant == "percpu" and r.knobs[0] == ("mounts", "16"))
        self.assertEqual(run.values("fairness"), [0.9, 0.8])

    def test_non_finite_values_are_refused_with_their_line(self):
        with open(RUN_A, encoding="utf-8") as f:
            text = f.read()
        # a string holding NaN is no number; the counter's line is named
        text = text.replace('"time_unit": "ns"', '"time_unit": "NaN ns"', 1)
        lines = text.split("\n")
        target = next(i for i, line in enumerate(lines) if '"ops_per_sec":' in line)
        for bad in ("NaN", "-Infinity", "1e999", "9" * 400):
            with self.subTest(value=bad), tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "r.json")
                edited = list(lines)
                edited[target] = f'   "ops_per_sec": {bad},'
                with open(path, "w", encoding="utf-8") as f:
                    f.write("\n".join(edited))
                with self.assertRaises(results.KscaleError) as e:
                    results.load(path)
                self.assertRegex(str(e.exception), rf'^{path}:{target + 1}: mnt_writers/\S+: '
                                 rf'"ops_per_sec": {bad[:40]}: not a finite number$')

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
        self.assertRegex(line, r"12\.0M ±12\.4% +22\.0M ±6\.7% +\+83\.3% +"
                         r"\[\+53\.8%, \+120\.0%\]$")
        self.assertRegex(row_for(out, f"{G1} threads:2"),
                         r"14\.0M ±21\.2% +15\.0M ±19\.8% +\+7\.1% ~ +\[")
        # 2 and 3 repetitions: no verdict, no interval
        self.assertRegex(row_for(out, f"{G2} threads:2"),
                         r"2\.00k ±74\.1% +4\.00k ±37\.1% +\+100\.0% \? +n/a$")
        self.assertIn("n = 3..5 repetitions", out)
        self.assertIn("Mann-Whitney", out)
        self.assertIn("Benjamini-Hochberg", out)
        self.assertIn("? = no verdict", out)
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
        self.assertIn(f"| {G1} threads:1 | 12.0M ±12.4% | 22.0M ±6.7% | +83.3% | "
                      "[+53.8%, +120.0%] |", out)
        self.assertIn(f"| {G1} threads:1 | 0.97 ±1.5% | 0.7 ±21.2% | -27.8% |", out)
        # the NaN repetition is left out: median of 0.9 and 0.8
        self.assertIn(f"| {G2} threads:2 | 0.85 ±8.7% | 0.9 ±0.0% | +5.9% ? | n/a |", out)

    def test_selectors_compare_across_a_knob(self):
        proc = run_cli("compare", RUN_A, "--before=percpu/mounts:2",
                       "--after=percpu/mounts:16")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # mounts is matched by the selectors and left out of the Test column
        line = row_for(proc.stdout, "openbench path_work_ns:0 placement:compact threads:2")
        self.assertRegex(line, r"14\.0M ±21\.2% +2\.00k ±74\.1% +-100\.0% \? +n/a$")
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
        self.assertRegex(row_for(out, f"{percpu} threads:1"),
                         r"12\.0M .* 22\.0M .* \+83\.3% +\[")
        self.assertRegex(row_for(out, f"{percpu} threads:2"),
                         r"14\.0M .* 28\.0M .* \+100\.0% +\[")
        self.assertRegex(row_for(out, f"{atomic} threads:1"), r"\+0\.0% ~ +\[")
        # the files' contexts differ in their kernel
        self.assertIn("warning: context differs: kscale_kernel_release", out)
        self.assertNotIn("threads:4", out)
        self.assertNotIn(f"{atomic} threads:2", out)
        self.assertIn(f"only in {RUN_A}: 3 benchmarks", out)
        self.assertIn(f"only in {RUN_B}: 1 benchmark\n", out)


class CompareReportsWhatItDrops(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def results(self, rows, context=None):
        path = os.path.join(self.tmp.name, f"r{len(os.listdir(self.tmp.name))}.json")
        with open(path, "w") as f:
            json.dump({"context": context or {}, "benchmarks": rows}, f)
        return path

    @staticmethod
    def row(variant, threads, value, metric="ops_per_sec", **extra):
        return dict({"name": f"m/w/{variant}/threads:{threads}", "run_type": "iteration",
                     "threads": threads, metric: value}, **extra)

    def test_unpaired_points_and_failed_runs(self):
        rows = [self.row("a", 1, 10.0), self.row("b", 1, 11.0), self.row("a", 2, 20.0),
                dict(self.row("b", 4, 0.0), error_occurred=True,
                     error_message="cannot pin thread 3")]
        proc = run_cli("compare", self.results(rows), "--before=a", "--after=b")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("dropped: 1 point of a with no b to pair", proc.stdout)
        self.assertIn("dropped: failed run in", proc.stdout)
        self.assertIn("m/w/b/threads:4: cannot pin thread 3", proc.stdout)

    def test_disturbed_repetitions_are_marked(self):
        rows = [self.row("a", 1, 10.0, steal_pct=0.0, snapshot_late_us=50.0),
                self.row("a", 1, 10.0, steal_pct=3.0, snapshot_late_us=50.0),
                self.row("b", 1, 12.0, steal_pct=0.0, snapshot_late_us=5000.0),
                self.row("b", 1, 12.0, steal_pct=0.0, snapshot_late_us=50.0),
                self.row("a", 2, 20.0, steal_pct=0.5), self.row("b", 2, 21.0)]
        out = run_cli("compare", self.results(rows), "--before=a", "--after=b").stdout
        self.assertIn("w threads:1 [disturbed 2/4]", out)
        self.assertIn("w threads:2  ", out)
        self.assertNotIn("w threads:2 [disturbed", out)
        self.assertIn("[disturbed k/n]: k of the row's n repetitions", out)

    def test_starved_threads_are_marked(self):
        def spread(low):
            return {"thread_ops_per_sec_min": low, "thread_ops_per_sec_mean": 5.0}
        rows = [self.row("a", 1, 10.0, **spread(5.0)), self.row("a", 1, 10.0, **spread(5.0)),
                self.row("b", 1, 10.0, **spread(0.0)), self.row("b", 1, 10.0, **spread(0.4)),
                self.row("a", 2, 10.0, **spread(0.49)), self.row("a", 2, 10.0, **spread(0.5)),
                self.row("b", 2, 10.0, **spread(5.0)), self.row("b", 2, 10.0),
                self.row("a", 4, 10.0, **spread(0.5)), self.row("b", 4, 10.0, **spread(4.0))]
        out = run_cli("compare", self.results(rows), "--before=a", "--after=b").stdout
        self.assertIn("w threads:1 [starved after 2/2]  ", out)
        self.assertIn("w threads:2 [starved before 1/2]  ", out)
        self.assertIn("w threads:4  ", out)
        self.assertNotIn("w threads:4 [", out)
        self.assertIn("[starved before k/n, after k/n]: in k of a side's n repetitions "
                      "a thread did under 10% of the threads' mean", out)

    def test_starved_classes_are_named(self):
        def spread(reader, writer):
            return {"thread_ops_per_sec_min": min(reader, writer),
                    "thread_ops_per_sec_mean": 5.0,
                    "reader_ops_per_sec_min": reader, "writer_ops_per_sec_min": writer}
        rows = [self.row("a", 2, 10.0, **spread(0.1, 9.0)), self.row("a", 2, 10.0, **spread(0.2, 0.3)),
                self.row("b", 2, 10.0, **spread(4.0, 5.0)), self.row("b", 2, 10.0, **spread(1.0, 0.0)),
                self.row("a", 4, 10.0, **spread(4.0, 5.0)), self.row("b", 4, 10.0, **spread(0.5, 6.0))]
        out = run_cli("compare", self.results(rows), "--before=a", "--after=b").stdout
        self.assertIn("w threads:2 [starved before 2/2 (reader, writer), after 1/2 (writer)]",
                      out)
        self.assertIn("w threads:4  ", out)
        self.assertNotIn("w threads:4 [", out)
        self.assertIn("(CLASS, ...): the classes it was of", out)

    def test_bistable_seeds_show_their_range(self):
        split = [5.7 * M, 7.4 * M, 5.75 * M, 7.5 * M, 5.8 * M]
        rows = [self.row("a", 16, v) for v in split] + \
            [self.row("b", 16, v) for v in (7.6 * M, 7.7 * M, 7.5 * M, 7.6 * M, 7.6 * M)]
        sim = self.results(rows, {"kscale_sim_machine": "x445"})
        out = run_cli("compare", sim, "--before=a", "--after=b").stdout
        self.assertRegex(row_for(out, "w threads:16"),
                         r"^w threads:16  +bistable: 5\.70M\.\.7\.50M over 5 seeds  +"
                         r"7\.60M ±0\.0%  +\+31\.0%")
        self.assertIn("bistable: LO..HI over n seeds: a simulated side whose seeds "
                      "split in two at the widest gap between neighbours, the gap at "
                      "least 10% of the median and 2x the range within either part", out)
        # measured here, repetitions are not seeds: the median stands
        here = self.results(rows)
        out = run_cli("compare", here, "--before=a", "--after=b").stdout
        self.assertRegex(row_for(out, "w threads:16"), r"^w threads:16  +5\.80M ±2\.6%  ")
        # two files: each side as its own file says
        a = self.results(rows[:5], {"kscale_sim_machine": "x445"})
        b = self.results([self.row("a", 16, v) for v in split])
        out = run_cli("compare", a, b).stdout
        self.assertRegex(row_for(out, "w a threads:16"),
                         r"bistable: 5\.70M\.\.7\.50M over 5 seeds  +5\.80M ±2\.6%")

    def test_default_metric_is_the_models_primary(self):
        rows = [self.row("a", 1, 10.0, metric="total_MBps", ops_per_sec=1.0),
                self.row("b", 1, 12.0, metric="total_MBps", ops_per_sec=1.0)]
        path = self.results(rows, {"kscale_primary_metric": "total_MBps"})
        proc = run_cli("compare", path, "--before=a", "--after=b")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("m: total_MBps, before=a after=b", proc.stdout)
        self.assertNotIn("m: ops_per_sec", proc.stdout)
        # a file of another workload of the model (rwsem's locktest, no
        # total_MBps): ops_per_sec
        rows = [self.row("a", 1, 10.0), self.row("b", 1, 12.0)]
        path = self.results(rows, {"kscale_primary_metric": "total_MBps"})
        proc = run_cli("compare", path, "--before=a", "--after=b")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("m: ops_per_sec (ops/s), before=a after=b", proc.stdout)

    def test_contexts_that_matter_are_compared(self):
        rows = [self.row("a", 1, 10.0)]
        a = self.results(rows, {"kscale_tsc_per_ns": "2.6", "kscale_path_work_ns_auto": "100",
                                "kscale_duration_s": "1"})
        b = self.results(rows, {"kscale_tsc_per_ns": "2.6", "kscale_path_work_ns_auto": "140",
                                "kscale_duration_s": "1"})
        out = run_cli("compare", a, b).stdout
        self.assertIn("warning: context differs: kscale_path_work_ns_auto: 100 (before) vs "
                      "140 (after)", out)
        self.assertNotIn("kscale_tsc_per_ns:", out)
        self.assertNotIn("kscale_duration_s:", out)


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
        self.assert_error([RUN_A, "--before=percpu", "--after=atomic", "--min-effect=-1"],
                          "--min-effect")

    def test_help(self):
        proc = run_cli("compare", "--help")
        self.assertEqual(proc.returncode, 0)
        for option in ("--before", "--after", "--metric", "--format", "A.json B.json"):
            self.assertIn(option, proc.stdout)


if __name__ == "__main__":
    unittest.main()
