"""`scripts/kscale run --check`: configs checked, nothing run or written."""

import os
import subprocess
import tempfile
import unittest

from kscale_analysis.models import MODELS

from . import REPO

KSCALE = os.path.join(REPO, "scripts", "kscale")
CONFIGS = os.path.join(REPO, "configs")


# the bench binaries, asked with --dry-run (meson test sets it)
BUILD = os.environ.get("KSCALE_TEST_BUILD") or os.path.join(REPO, "build")


@unittest.skipUnless(all(os.access(os.path.join(BUILD, "bench", m), os.X_OK) for m in MODELS),
                     f"no bench binaries in {BUILD}/bench")
class RunCheckTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.build = BUILD

    def kscale(self, *args, build=None, **more_env):
        env = dict(os.environ, KSCALE_NO_SETUP="1", KSCALE_BUILD=build or self.build,
                   KSCALE_RESULTS=os.path.join(self.tmp, "results"),
                   KSCALE_PLOTS=os.path.join(self.tmp, "plots"), **more_env)
        proc = subprocess.run(["bash", KSCALE, *args], capture_output=True, text=True,
                              errors="surrogateescape", env=env, cwd=self.tmp,
                              stdin=subprocess.DEVNULL, timeout=60)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "results")))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "plots")))
        return proc

    def config(self, text):
        path = os.path.join(self.tmp, "c.conf")
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        return path

    def assert_refused(self, proc, message):
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertRegex(proc.stderr, "^kscale: ")
        self.assertIn(message, proc.stderr)

    def test_every_config_checks(self):
        names = sorted(f[:-5] for f in os.listdir(CONFIGS) if f.endswith(".conf"))
        for name in names:
            with self.subTest(config=name):
                proc = self.kscale("run", "--check", name)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertEqual(proc.stderr, "")
                self.assertRegex(proc.stdout, rf"^kscale: \S*configs/{name}\.conf: OK: "
                                 r"\d+ run, \d+ compare, \d+ plot, \d+ predict, \d+ headline lines; "
                                 r"binaries checked with --dry-run\n$")

    def test_default_and_counts(self):
        proc = self.kscale("run", "--check")
        self.assertIn("configs/default.conf: OK: 8 run, 0 compare, 1 plot, 0 predict, "
                      "5 headline lines", proc.stdout)
        path = self.config("run a mnt_writers\ncompare a atomic percpu\nplot a\n"
                           "plot a --metric=m\npredict a --machine=x\n")
        proc = self.kscale("run", "--check", path, "--", "--cpus=1")
        self.assertEqual(proc.stdout, "kscale: c.conf: OK: 1 run, 1 compare, 2 plot, "
                                      "1 predict, 0 headline lines; binaries checked "
                                      "with --dry-run\n")

    def test_binaries(self):
        path = self.config("run a no_such_bench\n")
        self.assert_refused(self.kscale("run", "--check", path), "no bench binary")
        proc = self.kscale("run", "--check", path, build=os.path.join(self.tmp, "none"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("binaries not checked (none in none/bench)", proc.stdout)

    def test_problems_found_before_anything_runs(self):
        for text, message in (
                ("bogus line\n", "unknown directive 'bogus'"),
                ("run a mnt_writers --max-repetitions=9\n", "needs --target-ci"),
                ("run a mnt_writers --target-ci=two\n", "--target-ci=two: expected a percentage"),
                ("run a mnt_writers --target-ci=0%\n", "expected a percentage above 0"),
                ("run a mnt_writers --target-ci=2% --max-repetitions=0\n",
                 "--max-repetitions=0: expected a positive number"),
                # bash arithmetic of the run would take these for names
                ("run a mnt_writers --benchmark_repetitions=abc\n",
                 "--benchmark_repetitions=abc: expected a positive number"),
                ("run a mnt_writers --benchmark_repetitions=09\n",
                 "--benchmark_repetitions=09: expected a positive number"),
                ("headline a x y --seed=000\n", "no earlier 'run a'"),
                ("run a mnt_writers\nheadline a x y --seed=999\n", "no seed '999'"),
                ("run a mnt_writers\nheadline a x y --seed=000 --here=b\n",
                 "no earlier 'run b'"),
                ("run a mnt_writers\nheadline a x y --seed=000 --sensitivity\n",
                 "headline --sensitivity: run a is not simulated on a machine file"),
                ("run a mnt_writers --sim=here\nheadline a x y --seed=000 --sensitivity\n",
                 "headline --sensitivity: run a is not simulated on a machine file"),
                ("run a mnt_writers\npredict a b\n", "no earlier 'run b'"),
                ("run a mnt_writers\nplot a b --metric=m\n", "no earlier 'run b'"),
                ("run a mnt_writers\nplot --metric=m a\n", "expected: plot LABEL..."),
                ("run a mnt_writers\npredict --machine=x\n", "expected: predict LABEL..."),
                ("", "c.conf: an empty config"),
                ("# nothing\n", "c.conf: an empty config"),
                ("run a mnt_writers\ncompare a atomic percpu --bogus\n",
                 "c.conf:2: compare: unrecognized arguments: --bogus"),
                ("run a mnt_writers\nplot a --metrc=x\n",
                 "c.conf:2: plot: unrecognized arguments: --metrc=x"),
                ("run a mnt_writers\npredict a --machne=x\n",
                 "c.conf:2: predict: unrecognized arguments: --machne=x"),
                # what the binary's --dry-run refuses: variant, knob, machine, flags
                ("run a mnt_writers --variants=bogus\n",
                 "c.conf:1: run a: mnt_writers: unknown variant 'bogus'"),
                ("run a mnt_writers --mounts=0\n", "c.conf:1: run a: mnt_writers: --mounts=0"),
                ("run a mnt_writers --sim=no-such-machine\n",
                 "c.conf:1: run a: mnt_writers: machine no-such-machine: cannot read"),
                ("run a mnt_writers --benchmark_bogus=1\n",
                 "c.conf:1: run a: mnt_writers: unknown option '--benchmark_bogus=1'"),
                # a selector of what the run line does not run
                ("run a mnt_writers --variants=atomic\ncompare a atomic percpu\n",
                 "c.conf:2: 'percpu': run a has no variant percpu (it runs atomic)"),
                ("run a mnt_writers --mounts=1\ncompare a atomic/mounts:2 percpu\n",
                 "c.conf:2: 'atomic/mounts:2': run a runs mounts 1, not 2"),
                ("run a mnt_writers\ncompare a atomic/bogus:1 percpu\n",
                 "c.conf:2: 'atomic/bogus:1': run a has no knob bogus"),
                ("run a mnt_writers --cpus=1\ncompare a atomic/threads:2 percpu\n",
                 "c.conf:2: 'atomic/threads:2': run a runs no 2 threads"),
                ("run a mnt_writers --variants=atomic\nheadline a atomic percpu --seed=000\n",
                 "c.conf:2: 'percpu': run a has no variant percpu")):
            with self.subTest(config=text):
                path = self.config(text)
                self.assert_refused(self.kscale("run", "--check", path), message)
                if "repetitions=" in text or "run a mnt_writers -" in text:
                    # a run refuses it before it runs anything
                    self.assert_refused(self.kscale("run", path), message)

    def test_extra_bench_args_checked(self):
        path = self.config("run a mnt_writers\n")
        self.assert_refused(self.kscale("run", "--check", path, "--", "--cpus=0"),
                            "c.conf:1: run a: mnt_writers: --cpus")
        self.assert_refused(self.kscale("run", path, "--", "--bogus"),
                            "c.conf:1: run a: mnt_writers: unknown option '--bogus'")

    def test_latin1_byte_at_the_end_of_a_line(self):
        # read says 1 at an incomplete UTF-8 character: it was a silent exit 1
        path = self.config("run a mnt_writers\nplot a --metric=\udcc2\n")
        proc = self.kscale("run", "--check", path, LC_ALL="C.UTF-8")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("OK: 1 run, 0 compare, 1 plot", proc.stdout)
        path = self.config("\udcc2")
        self.assert_refused(self.kscale("run", "--check", path, LC_ALL="C.UTF-8"),
                            "unknown directive")

    def test_line_length(self):
        # bash's ${line%%#*} is quadratic: a 128 KiB line took 15 s
        ok = self.config("run a mnt_writers  #variants=" + "x" * (4096 - 29) + "\n")
        proc = self.kscale("run", "--check", ok)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        long = self.config("run a mnt_writers  #variants=" + "x" * (4097 - 29) + "\n")
        self.assert_refused(self.kscale("run", "--check", long),
                            "c.conf:1: a line of over 4096 characters")
