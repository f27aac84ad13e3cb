import json
import os
import shutil
import tempfile
import unittest

from . import RUN_A, RUN_B, run_cli
from kscale_analysis import plot, results

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
G1 = "mnt_writers-openbench-mounts-2_path_work_ns-0_placement-compact"
G2 = "mnt_writers-openbench-mounts-16_path_work_ns-0_placement-compact"
HINT = "kscale plot: gnuplot not found; install it with: sudo apt-get install gnuplot-nox"


class PlanTest(unittest.TestCase):
    def test_file_stem_is_safe(self):
        self.assertEqual(plot.file_stem(None, "m", "w", (("a", "x y"), ("b", "1")), "ops"),
                         "m-w-a-x-y_b-1-ops")
        self.assertEqual(plot.file_stem("my run", "m", "w", (), "ops"), "my-run-w-ops")

    def test_series_median_and_range(self):
        res = results.load(RUN_A)
        plots = plot.plan(res, ["ops_per_sec"], "out", None)
        self.assertEqual([p.stem for p in plots],
                         [os.path.join("out", f"{G1}-ops_per_sec"),
                          os.path.join("out", f"{G2}-ops_per_sec")])
        self.assertEqual(plots[0].series, [
            ("percpu", [(1, 12e6, 10e6, 14e6), (2, 14e6, 10e6, 18e6)]),
            ("atomic", [(1, 22e6, 20e6, 24e6), (2, 15e6, 11e6, 19e6)]),
        ])
        self.assertEqual(plots[0].ylabel, "ops/s")
        self.assertIn("error bars: min..max", plots[0].title)

    def test_merged_files_pool_repetitions(self):
        res = results.load_merged([RUN_A, RUN_B])
        self.assertEqual(res.label, f"{RUN_A}, {RUN_B}")
        first_group = next(iter(results.group_runs(res.runs.values()).values()))
        percpu1 = dict(plot.series(first_group, "ops_per_sec"))["percpu"]
        self.assertEqual(percpu1[0], (1, 17e6, 10e6, 24e6))  # 10 repetitions pooled
        self.assertEqual([t for t, *_ in percpu1], [1, 2, 4])

    def test_sources_keep_their_own_lines(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        sim = os.path.join(tmp.name, "sim.json")
        with open(RUN_B) as f:
            doc = json.load(f)
        doc.setdefault("context", {})["kscale_sim_machine"] = "x445"
        with open(sim, "w") as f:
            json.dump(doc, f)
        res = results.load_merged([RUN_A, sim], by_source=True)
        first_group = next(iter(results.group_runs(res.runs.values()).values()))
        lines = dict(plot.series(first_group, "ops_per_sec"))
        self.assertEqual(sorted(lines), ["atomic (here)", "atomic (x445)",
                                         "percpu (here)", "percpu (x445)"])
        self.assertEqual(lines["percpu (here)"], [(1, 12e6, 10e6, 14e6),
                                                  (2, 14e6, 10e6, 18e6)])
        # one source: pooled as before
        self.assertEqual(results.load_merged([RUN_A, RUN_B], by_source=True).variants(),
                         ["atomic", "percpu"])

    def test_single_cpu_count_gets_padded_xrange(self):
        single = plot.Plot("out/x", "t", "ops/s", [("v", [(2, 5.0, 4.0, 6.0)])])
        script = plot.script_text(single, "d.dat", "x.png", "x.svg")
        self.assertIn("set xrange [1.5:2.5]", script)
        self.assertIn("set yrange [0:*]", script)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.out = os.path.join(self.tmp, "plots")


@unittest.skipUnless(shutil.which("gnuplot"), "gnuplot not installed")
class PlotCliTest(TempDirTest):

    def test_writes_png_and_svg(self):
        proc = run_cli("plot", RUN_A, f"--out-dir={self.out}")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        expected = sorted(f"{g}-{m}.{ext}" for g in (G1, G2)
                          for m in ("ops_per_sec", "ops_per_sec_per_cpu")
                          for ext in ("png", "svg"))
        self.assertEqual(sorted(os.listdir(self.out)), expected)  # no temp files left
        self.assertEqual(sorted(proc.stdout.split()),
                         sorted(os.path.join(self.out, f) for f in expected))
        for name in expected:
            path = os.path.join(self.out, name)
            with open(path, "rb") as f:
                head = f.read(4096)
            if name.endswith(".png"):
                self.assertTrue(head.startswith(PNG_MAGIC), name)
            else:
                self.assertIn(b"<svg", head, name)
        with open(os.path.join(self.out, f"{G1}-ops_per_sec_per_cpu.svg")) as f:
            svg = f.read()
        self.assertIn("ops/s per CPU", svg)
        self.assertIn("CPUs (threads)", svg)

    def test_prefix_and_metric(self):
        proc = run_cli("plot", RUN_A, RUN_B, "--out-dir", self.out, "--prefix=k6",
                       "--metric=fairness")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(os.listdir(self.out)), sorted(
            f"k6-openbench-{g}-fairness.{ext}"
            for g in ("mounts-2_path_work_ns-0_placement-compact",
                      "mounts-16_path_work_ns-0_placement-compact")
            for ext in ("png", "svg")))



class PlotErrorsTest(TempDirTest):
    """Failures need no real gnuplot and must leave --out-dir untouched."""

    def assert_fails(self, proc, status, message):
        self.assertEqual(proc.returncode, status, proc.stdout + proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertEqual(proc.stderr.splitlines(), [message])
        self.assertFalse(os.path.exists(self.out), "output written on error")

    def test_gnuplot_missing(self):
        proc = run_cli("plot", RUN_A, f"--out-dir={self.out}",
                       env={"KSCALE_GNUPLOT": os.path.join(self.tmp, "no-gnuplot")})
        self.assert_fails(proc, 2, HINT)

    def test_gnuplot_failure_writes_nothing(self):
        fake = os.path.join(self.tmp, "fake-gnuplot")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'line 1: boom' >&2\nexit 1\n")
        os.chmod(fake, 0o755)
        proc = run_cli("plot", RUN_A, f"--out-dir={self.out}", env={"KSCALE_GNUPLOT": fake})
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("gnuplot failed", proc.stderr)
        self.assertIn("line 1: boom", proc.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_bad_input_writes_nothing(self):
        proc = run_cli("plot", RUN_A, f"--out-dir={self.out}", "--metric=latency")
        self.assert_fails(proc, 2, f"kscale plot: {RUN_A}: no metric 'latency' (available: "
                                   "cpu_time, fairness, mounts, ops_per_sec, "
                                   "ops_per_sec_per_cpu, real_time)")
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("{")
        proc = run_cli("plot", RUN_A, bad, f"--out-dir={self.out}")
        self.assertEqual(proc.returncode, 2)
        self.assertTrue(proc.stderr.startswith(f"kscale plot: {bad}: invalid JSON"))
        self.assertFalse(os.path.exists(self.out))

    def test_help(self):
        proc = run_cli("plot", "--help")
        self.assertEqual(proc.returncode, 0)
        for option in ("--out-dir", "--metric", "--prefix", "KSCALE_GNUPLOT"):
            self.assertIn(option, proc.stdout)


if __name__ == "__main__":
    unittest.main()
