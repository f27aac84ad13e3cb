import json
import os
import shutil
import tempfile
import unittest

from . import REPO, run_cli
from kscale_analysis import config, sensitivity, summary
from kscale_analysis.results import KscaleError

CLAIMS = "seed\ttitle\treported\tmachine\n000\tmount writer counts\t~4x\tNUMA and SMP\n"
CONTEXT = {"kscale_allowed_cpus": "2", "kscale_primary_metric": "ops_per_sec",
           "kscale_cpu_model": "Test CPU", "kscale_kernel_release": "6.1.0"}


def line_for(output, seed):
    """The summary table line of `seed`."""
    for line in output.splitlines():
        if line.startswith(seed + "  "):
            return line
    raise AssertionError(f"no line of seed {seed} in:\n{output}")


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.claims = os.path.join(self.tmp.name, "claims.tsv")
        with open(self.claims, "w") as f:
            f.write(CLAIMS)

    def results(self, label, values_of, threads=(2,), sim=None):
        """RESULTS_DIR/label.json: each (variant, values) a point's
        repetitions at each thread count; simulated on sim (a machine
        name with that many CPUs) if given."""
        rows = [{"name": f"mnt_writers/openbench/{variant}/mounts:1/threads:{n}",
                 "run_type": "iteration", "threads": n, "ops_per_sec": v}
                for n in threads for variant, values in values_of.items() for v in values]
        context = dict(CONTEXT)
        if sim:
            context.update(kscale_sim_machine=sim[0], kscale_sim_cpus=str(sim[1]))
        with open(os.path.join(self.tmp.name, f"{label}.json"), "w") as f:
            json.dump({"context": context, "benchmarks": rows}, f)

    def summary(self, *headlines, out=None):
        args = [f"--claims={self.claims}", self.tmp.name, *headlines]
        return run_cli("summary", *args, *([f"--out={out}"] if out else []))

    def test_a_table_line(self):
        self.results("mnt", {"atomic": [10.0] * 5, "percpu": [20.0] * 5})
        proc = self.summary("mnt atomic percpu --seed=000")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("kscale summary: each seed's headline on Test CPU, 2 CPUs, "
                      "kernel 6.1.0", proc.stdout)
        self.assertRegex(proc.stdout, r"Seed +Bottleneck +Before -> after +Seed reported "
                         r"+On +Here +95% CI +Verdict\n")
        self.assertRegex(line_for(proc.stdout, "000"),
                         r"^000 +mount writer counts +atomic -> percpu +~4x +NUMA and SMP "
                         r"+2\.00x at 2 CPUs +2\.00x\.\.2\.00x +significant$")
        self.assertIn("n = 5 repetitions per side: 000 ops_per_sec of mnt.json", proc.stdout)
        self.assertIn("Benjamini-Hochberg", proc.stdout)
        self.assertEqual(proc.stderr, "")

    def test_no_verdict_below_four_repetitions(self):
        self.results("mnt", {"atomic": [10.0, 11.0, 12.0], "percpu": [30.0, 31.0, 32.0]})
        proc = self.summary("mnt atomic percpu --seed=000")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(line_for(proc.stdout, "000"),
                         r" 2\.82x at 2 CPUs +n/a +\? no verdict$")

    def test_not_significant_and_tasks_over_cpus(self):
        self.results("lookup", {"i_mutex": [10.0, 12.0, 11.0, 13.0, 12.0],
                                "sharded": [12.0, 11.0, 13.0, 10.0, 12.0]}, threads=(32,))
        proc = self.summary("lookup i_mutex sharded --seed=000 --metric=ops_per_sec")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(line_for(proc.stdout, "000"),
                         r" 1\.00x at 32 tasks on 2 CPUs +\S+x\.\.\S+x +~ not significant$")

    def test_lines_are_judged_together(self):
        with open(self.claims, "a") as f:
            f.write("002\t/dev/zero page faults\t150x\t256 CPUs\n")
        separated = {"atomic": [1.0, 2.0, 3.0, 4.0], "percpu": [5.0, 6.0, 7.0, 8.0]}
        self.results("a", separated)
        self.results("b", {"atomic": [1.0, 2.0, 3.0, 4.0], "percpu": [4.0, 3.0, 2.0, 1.0]})
        alone = self.summary("a atomic percpu --seed=000")
        self.assertTrue(line_for(alone.stdout, "000").endswith("  significant"), alone.stdout)
        # p = 0.029 alone; beside a line with no change its q is 0.057
        proc = self.summary("a atomic percpu --seed=000", "b atomic percpu --seed=002")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(line_for(proc.stdout, "000"), r" 2\.60x at 2 CPUs .* ~ not significant$")
        self.assertRegex(line_for(proc.stdout, "002"),
                         r"^002 +/dev/zero page faults +atomic -> percpu +150x +256 CPUs "
                         r"+1\.00x at 2 CPUs .* ~ not significant$")

    def test_out_writes_text_and_markdown(self):
        self.results("mnt", {"atomic": [10.0] * 5, "percpu": [20.0] * 5})
        base = os.path.join(self.tmp.name, "summary")
        proc = self.summary("mnt atomic percpu --seed=000", out=base)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, f"{base}.txt\n{base}.md\n")
        with open(base + ".txt") as f:
            self.assertEqual(line_for(f.read(), "000").split()[-1], "significant")
        with open(base + ".md") as f:
            self.assertIn("| 000 | mount writer counts | atomic -> percpu | ~4x | NUMA and "
                          "SMP | 2.00x at 2 CPUs | 2.00x..2.00x | significant |", f.read())
        self.assertEqual(sorted(os.listdir(self.tmp.name)),
                         ["claims.tsv", "mnt.json", "summary.md", "summary.txt"])

    def test_simulated_beside_this_machine(self):
        self.results("sim", {"atomic": [10.0] * 5, "percpu": [40.0] * 5},
                     threads=(16,), sim=("x445", 16))
        self.results("here", {"atomic": [10.0] * 5, "percpu": [15.0] * 5})
        proc = self.summary("sim atomic/threads:16 percpu/threads:16 --seed=000 --here=here")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("each seed's headline simulated on its machine", proc.stdout)
        self.assertRegex(proc.stdout, r"On +Simulated +95% CI +Verdict +This machine "
                                      r"+Validated\n")
        self.assertRegex(line_for(proc.stdout, "000"),
                         r"-> percpu/threads:16 +~4x +NUMA and SMP +4\.00x at 16 CPUs +4\.00x\.\.4\.00x "
                         r"+significant +1\.50x at 2 CPUs +no: no kscale sim-validate "
                         r"results for this machine$")
        self.assertIn("sim.json on x445", proc.stdout)
        self.assertIn("This machine: the same ratio measured on Test CPU, 2 CPUs", proc.stdout)
        # a simulated --here is no measurement of this machine
        proc = self.summary("sim atomic percpu --seed=000 --here=sim")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("sim.json was simulated", proc.stderr)
        # simulated and measured lines in one table say which is which
        self.results("mnt", {"atomic": [10.0] * 5, "percpu": [20.0] * 5})
        proc = self.summary("sim atomic percpu --seed=000", "mnt atomic percpu --seed=000")
        self.assertRegex(proc.stdout, r"On +Result +95% CI")
        self.assertIn("4.00x at 16 CPUs (sim)", proc.stdout)

    def test_validation_and_here_at_its_most_tasks(self):
        self.results("sim", {"atomic": [10.0] * 5, "percpu": [40.0] * 5},
                     threads=(16,), sim=("x445", 16))
        # here at 1 and 2 threads: the line is its most tasks' (2)
        rows = [{"name": f"mnt_writers/openbench/{v}/mounts:1/threads:{n}",
                 "run_type": "iteration", "threads": n, "ops_per_sec": x * n}
                for n, xs in ((1, (10.0, 10.0)), (2, (10.0, 30.0)))
                for v, x in zip(("atomic", "percpu"), xs) for _ in range(5)]
        with open(os.path.join(self.tmp.name, "here.json"), "w") as f:
            json.dump({"context": CONTEXT, "benchmarks": rows}, f)
        validation = os.path.join(self.tmp.name, "validation.json")
        headline = "sim atomic/threads:16 percpu/threads:16 --seed=000 --here=here"
        for ok, cell in ((True, r"yes, \+2\.8% here at 2 threads"),
                         (False, r"no: kscale sim-validate's 000 ratio on this "
                                 r"machine is off by \+31% \(tolerance 15%\)")):
            with self.subTest(ok=ok):
                with open(validation, "w") as f:
                    json.dump({"ratio_tol_pct": 15, "seeds": {"000": {
                        "ok": ok, "error_pct": 2.8 if ok else 31.0, "threads": 2}}}, f)
                proc = run_cli("summary", f"--claims={self.claims}",
                               f"--sim-validation={validation}", self.tmp.name, headline)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertRegex(line_for(proc.stdout, "000"),
                                 r" 3\.00x at 2 CPUs +" + cell + "$")
                self.assertIn("not of the seed's machine at the seed's scale", proc.stdout)

    def test_bistable_seeds_give_a_range(self):
        # before: three seeds near 10, two near 13; after: one state, 20
        self.results("sim", {"atomic": [10.0, 13.0, 10.1, 13.1, 9.9],
                             "percpu": [20.0, 20.1, 19.9, 20.0, 20.0]},
                     threads=(16,), sim=("x445", 16))
        proc = self.summary("sim atomic percpu --seed=000")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # 20 / 13.05 and 20 / 10: not the one 1.98x of the medians
        self.assertRegex(line_for(proc.stdout, "000"),
                         r" bistable: 1\.53x\.\.2\.00x over 5 seeds at 16 CPUs +\S+x\.\.\S+x +"
                         r"significant +no: ")
        self.assertIn("Simulated bistable: LOx..HIx: a side's seeds split in two", proc.stdout)
        # the same values measured here are one ratio of medians
        self.results("mnt", {"atomic": [10.0, 13.0, 10.1, 13.1, 9.9],
                             "percpu": [20.0, 20.1, 19.9, 20.0, 20.0]})
        proc = self.summary("mnt atomic percpu --seed=000")
        self.assertRegex(line_for(proc.stdout, "000"), r" 1\.98x at 2 CPUs ")

    def test_starved_threads_are_marked(self):
        rows = [{"name": f"mnt_writers/openbench/{variant}/mounts:1/threads:2",
                 "run_type": "iteration", "threads": 2, "ops_per_sec": v,
                 "thread_ops_per_sec_min": low, "thread_ops_per_sec_mean": v / 2}
                for variant, v, low in [("atomic", 10.0, 5.0)] * 4 +
                [("percpu", 20.0, 0.0)] * 4]
        with open(os.path.join(self.tmp.name, "mnt.json"), "w") as f:
            json.dump({"context": CONTEXT, "benchmarks": rows}, f)
        proc = self.summary("mnt atomic percpu --seed=000")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(" 2.00x at 2 CPUs [starved after 4/4] ", line_for(proc.stdout, "000"))

    def sensitivity(self, label, before, after, base, figures):
        doc = {"machine": "x445", "before": before, "after": after, "metric": None,
               "factor": 0.3, "base": base, "base_ci": [3.9, 4.3],
               "figures": [{"figure": f, "value": v, "low": lo, "high": hi}
                           for f, v, lo, hi in figures]}
        path = sensitivity.path_of(self.tmp.name, label, before, after)
        with open(path, "w") as f:
            json.dump(doc, f)

    def test_sensitivity_note(self):
        self.results("sim", {"atomic": [10.0] * 5, "percpu": [40.0] * 5},
                     threads=(16,), sim=("x445", 16))
        before, after = "atomic/threads:16", "percpu/threads:16"
        headline = f"sim {before} {after} --seed=000 --sensitivity"
        proc = self.summary(headline)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--sensitivity: none written", proc.stderr)
        # kscale run without --sensitivity: none made, and the note says so
        proc = self.summary(headline, "--sensitivity-not-run")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Sensitivity of 000: not run (`kscale run --sensitivity` "
                      "re-runs its simulated ratio", " ".join(proc.stdout.split()))
        self.sensitivity("sim", before, after, 4.1,
                         [("wake_ns", 5300, 4.0, 4.2), ("line_ns_remote", 450, 2.5, 5.5)])
        proc = self.summary(headline)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Sensitivity of 000: its simulated ratio re-run (4.10x, 95% CI "
                      "3.90x..4.30x: a move inside it is the seeds') with each "
                      "estimated figure of x445 x0.7 / x1.3: wake_ns 5300 4.00x/4.20x, "
                      "line_ns_remote 450 2.50x/5.50x; it moves most with line_ns_remote",
                      " ".join(proc.stdout.split()))
        # measured here, there is no machine file to vary
        self.results("mnt", {"atomic": [10.0] * 5, "percpu": [20.0] * 5})
        proc = self.summary("mnt atomic percpu --seed=000 --sensitivity")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--sensitivity: mnt.json was not simulated", proc.stderr)

    def test_a_claim_over_its_unknowns(self):
        # simulated at 1, 4, 8 and 16 threads, mounts 1 and 2: the ratio
        # rises with threads, mounts:2 halves it; the mechanism counter
        # (waits) falls to 0 after
        rows = [{"name": f"mnt_writers/openbench/{v}/mounts:{m}/threads:{n}",
                 "run_type": "iteration", "threads": n,
                 "ops_per_sec": 10.0 * (n / m if v == "percpu" else 1),
                 "waits": 0.0 if v == "percpu" else 2.0 * n}
                for n in (1, 4, 8, 16) for m in (1, 2) for v in ("atomic", "percpu")
                for _ in range(5)]
        context = dict(CONTEXT, kscale_sim_machine="x445", kscale_sim_cpus="16")
        with open(os.path.join(self.tmp.name, "sim.json"), "w") as f:
            json.dump({"context": context, "benchmarks": rows}, f)
        self.results("here", {"atomic": [10.0] * 5, "percpu": [15.0] * 5})
        unknowns = os.path.join(self.tmp.name, "unknowns.tsv")
        headline = ("sim atomic/mounts:1/threads:16 percpu/mounts:1/threads:16 "
                    "--seed=000 --here=here --mechanism=waits")
        for text, line in (
                # threads 4..16 and either mount count: 6 points, 2x..16x
                ("000\tthreads\t4\t16\ts\tsrc\n000\tmounts\t1\t2\ts\tsrc\n",
                 r"^000 +~4x +2\.00x\.\.16\.0x over 6 settings +inside +2\.00x at "
                 r"mounts 2, threads 4; waits 8 -> 0 +16\.0x at mounts 1, threads 16; "
                 r"waits 32 -> 0 +1\.50x at 2 CPUs$"),
                # one mount (a value pair, not a range), 8..16 threads
                ("000\tthreads\t8\t16\ts\tsrc\n000\tmounts\t1\t3\ts\tsrc\n"
                 "000\tnope\ta\tb\ts\tsrc\n",
                 r"^000 +~4x +4\.00x\.\.16\.0x over 4 settings +inside "),
                ("000\tthreads\t16\t16\ts\tsrc\n",
                 r"^000 +~4x +16\.0x\.\.16\.0x over 1 setting +below: 0\.25x the lowest CI "
                 r"+16\.0x at the one setting; waits 32 -> 0 "),
                ("000\tthreads\t1\t1\ts\tsrc\n",
                 r"^000 +~4x +1\.00x\.\.1\.00x over 1 setting +above: 4\.00x the highest CI "),
                ("000\tthreads\t32\t64\ts\tsrc\n",
                 r"^000 +~4x +no point in the unknowns' ranges +- +- +- +1\.50x at 2 CPUs$")):
            with self.subTest(unknowns=text):
                with open(unknowns, "w") as f:
                    f.write("\t".join(summary.UNKNOWN_COLUMNS) + "\n" + text)
                proc = run_cli("summary", f"--claims={self.claims}",
                               f"--unknowns={unknowns}", self.tmp.name, headline)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                claims = proc.stdout.split("Per claim: the simulated range")[1]
                self.assertRegex(line_for(claims, "000"), line)
                # the headline's own point and its mechanism, above
                self.assertRegex(line_for(proc.stdout, "000"),
                                 r" 16\.0x at 16 CPUs .* waits 32 -> 0 +1\.50x at 2 CPUs")
        # without unknowns a claim's range is its headlines' points
        proc = self.summary(headline, "sim atomic/mounts:2/threads:4 "
                            "percpu/mounts:2/threads:4 --seed=000")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(line_for(proc.stdout.split("Per claim")[1], "000"),
                         r"^000 +~4x +2\.00x\.\.16\.0x over 2 settings +inside +"
                         r"2\.00x at mounts 2, threads 4 +16\.0x at mounts 1, threads 16; ")
        # 3.9x with repetitions that spread past 4x: inside the CIs
        self.results("sim", {"atomic": [10.0] * 5, "percpu": [37.0, 38.0, 39.0, 42.0, 43.0]},
                     threads=(16,), sim=("x445", 16))
        proc = self.summary("sim atomic percpu --seed=000")
        self.assertRegex(line_for(proc.stdout.split("Per claim")[1], "000"),
                         r"^000 +~4x +3\.90x\.\.3\.90x over 1 setting +inside the CIs ")
        # measured here, no claim line
        self.results("mnt", {"atomic": [10.0] * 5, "percpu": [20.0] * 5})
        self.assertNotIn("Per claim", self.summary("mnt atomic percpu --seed=000").stdout)

    def test_a_plot_a_claim_over_threads(self):
        rows = [{"name": f"mnt_writers/openbench/{v}/mounts:{m}/threads:{n}",
                 "run_type": "iteration", "threads": n,
                 "ops_per_sec": 10.0 * (n / m if v == "percpu" else 1) + r}
                for n in (1, 4, 16) for m in (1, 2) for v in ("atomic", "percpu")
                for r in range(5)]
        context = dict(CONTEXT, kscale_sim_machine="x445", kscale_sim_cpus="16")
        with open(os.path.join(self.tmp.name, "sim.json"), "w") as f:
            json.dump({"context": context, "benchmarks": rows}, f)
        unknowns = os.path.join(self.tmp.name, "unknowns.tsv")
        with open(unknowns, "w") as f:
            f.write("\t".join(summary.UNKNOWN_COLUMNS) +
                    "\n000\tthreads\t4\t16\ts\tsrc\n000\tmounts\t1\t2\ts\tsrc\n")
        headline = "sim atomic/mounts:1/threads:16 percpu/mounts:1/threads:16 --seed=000"
        claims = summary.read_claims(self.claims)
        line = summary.headline_line(self.tmp.name, summary.parse_headline(headline),
                                     claims, unknowns=summary.read_unknowns(unknowns))
        plots = summary.claim_plots([line], "DIR")
        # a line a mount count over 4 and 16 threads, and the seed's ~4x
        self.assertEqual([p.stem for p in plots], ["DIR/claim-000-ops_per_sec"])
        curves = dict(plots[0].series)
        self.assertEqual(list(curves), ["mounts 1", "mounts 2", "the seed's ~4x"])
        self.assertEqual([(t, round(r, 2)) for t, r, _, _ in curves["mounts 2"]],
                         [(4, 1.83), (16, 6.83)])
        for t, r, lo, hi in curves["mounts 1"]:
            self.assertLessEqual(lo, r)
            self.assertLessEqual(r, hi)
        self.assertEqual(curves["the seed's ~4x"], [(4, 4.0, 4.0, 4.0), (16, 4.0, 4.0, 4.0)])
        # one thread count: nothing to plot against
        with open(unknowns, "w") as f:
            f.write("\t".join(summary.UNKNOWN_COLUMNS) + "\n000\tmounts\t1\t2\ts\tsrc\n")
        line = summary.headline_line(self.tmp.name, summary.parse_headline(headline),
                                     claims, unknowns=summary.read_unknowns(unknowns))
        self.assertEqual(summary.claim_plots([line], "DIR"), [])

    @unittest.skipUnless(shutil.which("gnuplot"), "gnuplot not installed")
    def test_plots_written(self):
        self.results("sim", {"atomic": [10.0] * 5, "percpu": [40.0] * 5},
                     threads=(4, 16), sim=("x445", 16))
        plots = os.path.join(self.tmp.name, "plots")
        proc = run_cli("summary", f"--claims={self.claims}", f"--plots={plots}",
                       self.tmp.name, "sim atomic/threads:16 percpu/threads:16 --seed=000",
                       "sim atomic/threads:4 percpu/threads:4 --seed=000")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        stems = [os.path.join(plots, "claim-000-ops_per_sec") + ext for ext in (".png", ".svg")]
        self.assertEqual(proc.stdout.splitlines()[-2:], stems)
        self.assertEqual(sorted(os.listdir(plots)),
                         ["claim-000-ops_per_sec.png", "claim-000-ops_per_sec.svg"])

    def test_unknowns(self):
        path = os.path.join(self.tmp.name, "unknowns.tsv")
        head = "\t".join(summary.UNKNOWN_COLUMNS) + "\n"
        for text, message in (
                ("seed\tknob\n", "expected a header line"),
                (head + "000\tthreads\t4\n", r"unknowns\.tsv:2: expected 6 non-empty"),
                (head + "000\tthreads\t16\t4\ts\tsrc\n", r":2: low '16' and high '4'"),
                (head + "000\tthreads\t4\tall\ts\tsrc\n", r":2: low '4' and high 'all'"),
                (head + "000\tthreads\tnan\tnan\ts\tsrc\n", r":2: low 'nan' and high 'nan'"),
                (head + "000\tthreads\t4\tinf\ts\tsrc\n", r":2: low '4' and high 'inf'"),
                (head + "000\tthreads\t4\t8\ts\tsrc\n000\tthreads\t1\t2\ts\tsrc\n",
                 r":3: seed 000's knob threads twice")):
            with self.subTest(text=text):
                with open(path, "w") as f:
                    f.write(text)
                with self.assertRaisesRegex(KscaleError, message):
                    summary.read_unknowns(path)
        # the project's own
        unknowns = summary.read_unknowns(os.path.join(REPO, "configs", "seed-unknowns.tsv"))
        claims = summary.read_claims(os.path.join(REPO, "configs", "seed-claims.tsv"))
        self.assertLessEqual(set(unknowns), set(claims))

    def test_errors(self):
        self.results("mnt", {"atomic": [10.0] * 5, "percpu": [20.0] * 5})
        self.results("two", {"atomic": [10.0] * 5, "percpu": [20.0] * 5}, threads=(1, 2))
        for headline, message in (
                ("mnt atomic nope --seed=000",
                 "mnt.json: no variant 'nope' (variants: atomic, percpu)"),
                ("mnt atomic percpu --seed=001", "no seed '001' in the claims (seeds: 000)"),
                ("mnt atomic percpu --seed=000 --metric=nope", "no metric 'nope'"),
                ("gone atomic percpu --seed=000", "gone.json: cannot read"),
                ("two atomic percpu --seed=000", "2 points pair up"),
                ("mnt atomic percpu", "expected LABEL BEFORE AFTER --seed=SEED"),
                ("mnt atomic percpu --seed=000 --bogus", "unknown option '--bogus'")):
            with self.subTest(headline=headline):
                proc = self.summary(headline)
                self.assertEqual(proc.returncode, 2)
                self.assertEqual(proc.stdout, "")
                self.assertTrue(proc.stderr.startswith("kscale summary: "), proc.stderr)
                self.assertIn(message, proc.stderr)
                self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)

    def test_claims(self):
        with open(self.claims, "a") as f:
            f.write("002\tno machine\t150x\n")
        with self.assertRaisesRegex(KscaleError, r"claims\.tsv:3: expected 4 non-empty"):
            summary.read_claims(self.claims)
        # the tour's: a line for each seed's headline, each secondary
        # claim (002-drop: configs/at-scale-002.conf), and the lock-only
        # lines of 000 and 002
        claims = summary.read_claims(os.path.join(REPO, "configs", "seed-claims.tsv"))
        self.assertEqual(sorted(claims), [
            "000", "000-lockonly", "000-pernode", "000-worst", "002", "002-512p",
            "002-drop", "002-lockonly", "003", "003-immutable", "004", "004-profile",
            "004-randwrite"])

    def test_every_simulated_claim_has_its_mechanism(self):
        """seeds-at-scale: each headline simulated on the seed's machine
        names the counter of its mechanism beside the ratio, but the one
        whose metric is itself the profile (004-profile)."""
        configs = config.Configs(REPO)
        configs.load(os.path.join(REPO, "configs", "seeds-at-scale.conf"))
        seeds = set()
        for name, headlines in configs.headlines.items():
            for label, _, _, *options in headlines:
                simulated = any(a.startswith("--sim=")
                                for a in configs.run_args[name, label])
                seed = next(o for o in options if o.startswith("--seed="))
                if not simulated or seed == "--seed=004-profile":
                    continue
                seeds.add(seed)
                self.assertTrue(any(o.startswith("--mechanism=") for o in options),
                                f"{name} {label} {seed}")
        self.assertEqual(len(seeds), 10, seeds)

    def test_ratio(self):
        self.assertEqual(summary.fmt_ratio(91.6), "1.92x")
        self.assertEqual(summary.fmt_ratio(2234.0), "23.3x")
        self.assertEqual(summary.fmt_ratio(-22.6), "0.77x")
        self.assertEqual(summary.fmt_ratio(14900.0), "150x")
