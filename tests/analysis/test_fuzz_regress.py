"""The Python fuzz targets (tests/fuzz/fuzz_*.py) replayed on every crash
they found (tests/fuzz/regress/NAME/) and on their seed corpora: each
input must pass the target's check, the property it fuzzes."""

import importlib.util
import os
import sys
import unittest

from . import REPO, run_cli

FUZZ = os.path.join(REPO, "tests", "fuzz")
# target: the corpus directories it is seeded from
TARGETS = {"results": ["results", "predict"], "compare": ["results"], "plot": ["results"],
           "predict": ["predict"], "machine": ["machine"], "seed_tables": ["seed_tables"],
           "config": ["config"]}


def target(name):
    """tests/fuzz/fuzz_NAME.py as a module (its main() not run)."""
    if FUZZ not in sys.path:
        sys.path.insert(0, FUZZ)
    spec = importlib.util.spec_from_file_location(f"fuzz_{name}",
                                                  os.path.join(FUZZ, f"fuzz_{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inputs(name, directories):
    paths = []
    for directory in [os.path.join("regress", name)] + [os.path.join("corpus", d)
                                                         for d in directories]:
        full = os.path.join(FUZZ, directory)
        if os.path.isdir(full):
            paths += [os.path.join(full, f) for f in sorted(os.listdir(full))]
    return paths


class FuzzRegressTest(unittest.TestCase):
    def test_every_target_is_replayed(self):
        found = {f[len("fuzz_"):-len(".py")] for f in os.listdir(FUZZ)
                 if f.startswith("fuzz_") and f.endswith(".py")}
        self.assertEqual(found, set(TARGETS))
        for name in os.listdir(os.path.join(FUZZ, "regress")):
            # the C targets' crashes are tests/fuzz/regress.sh's
            if os.path.exists(os.path.join(FUZZ, f"fuzz_{name}.py")):
                self.assertIn(name, TARGETS)

    def replay(self, name):
        check = target(name).check
        import pyfuzz  # on sys.path now: the hang alarm
        paths = inputs(name, TARGETS[name])
        self.assertTrue(paths)
        for path in paths:
            with self.subTest(input=os.path.relpath(path, FUZZ)):
                with open(path, "rb") as f:
                    pyfuzz.checked(check, f.read())

    def test_results(self):
        self.replay("results")

    def test_the_scripts_too(self):
        """The results crash inputs through scripts/kscale-compare, as the
        CLI runs it: exit 0 or 2, one line on failure, never a traceback."""
        for path in inputs("results", []):
            with self.subTest(input=os.path.relpath(path, FUZZ)):
                proc = run_cli("compare", path, "--before=a", "--after=b")
                self.assertIn(proc.returncode, (0, 2), proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
                if proc.returncode:
                    self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
                    self.assertEqual(proc.stdout, "")

    def test_compare(self):
        self.replay("compare")

    def test_plot(self):
        self.replay("plot")

    def test_predict(self):
        self.replay("predict")

    def test_machine(self):
        self.replay("machine")

    def test_seed_tables(self):
        self.replay("seed_tables")

    def test_config(self):
        self.replay("config")
