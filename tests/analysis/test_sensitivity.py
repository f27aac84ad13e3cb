import unittest

from kscale_analysis import sensitivity
from kscale_analysis.results import KscaleError

MACHINE = """\
name = m
cpus = 16   # sixteen
source.cpus = estimate: topology is not varied
wake_ns = 5300
source.wake_ns = estimate: a guess
mem_ns_remote = none
source.mem_ns_remote = estimate: none to vary
atomic_ns = 34
source.atomic_ns = measured: a paper
hit_ns = 0.33 # a comment
source.hit_ns = Estimate: one cycle
"""


class SensitivityTest(unittest.TestCase):
    def values(self, text=MACHINE):
        values = {}
        for line in text.splitlines():
            key, _, value = line.split("#")[0].partition("=")
            values[key.strip()] = value.strip()
        return values

    def test_only_estimated_costs_vary(self):
        self.assertEqual(sensitivity.estimated(self.values()),
                         {"wake_ns": 5300.0, "hit_ns": 0.33})

    def test_one_line_changes(self):
        text = sensitivity.varied_text(MACHINE, "hit_ns", 0.33 * 1.3)
        self.assertIn("hit_ns = 0.429 # a comment\n", text)
        self.assertIn("source.hit_ns = Estimate: one cycle\n", text)
        self.assertEqual(text.replace("0.429", "0.33"), MACHINE)
        with self.assertRaises(KscaleError):
            sensitivity.varied_text(MACHINE, "ctxsw_ns", 1)

    def test_a_figure_moves_within_its_range(self):
        # smt_throughput (1 to 2): its gain over 1 moves, not the 1
        self.assertAlmostEqual(sensitivity.moved("smt_throughput", 1.25, 0.7), 1.175)
        self.assertAlmostEqual(sensitivity.moved("smt_throughput", 1.25, 1.3), 1.325)
        self.assertAlmostEqual(sensitivity.moved("wake_ns", 5300, 0.7), 3710)

    def test_the_headlines_point_only(self):
        args = ["--sim=x445", "--variants=none,atomic,percpu", "--mounts=1,2",
                "--cpus=1,2,4,16", "--path-work-ns=auto", "--benchmark_out=x.json",
                "--benchmark_repetitions=5"]
        self.assertEqual(
            sensitivity.restricted(args, "atomic/mounts:1/threads:16",
                                   "percpu/mounts:2/threads:16"),
            ["--path-work-ns=auto", "--benchmark_repetitions=5",
             "--variants=atomic,percpu", "--mounts=1,2", "--cpus=16"])
        # no threads pinned: the run's own --cpus stay
        self.assertEqual(
            sensitivity.restricted(["--cpus=16", "--iolock-write=shared,exclusive"],
                                   "v4.6/iolock_write:shared", "reader_owned"),
            ["--cpus=16", "--variants=v4.6,reader_owned", "--iolock-write=shared"])

    def test_needs_a_machine_file(self):
        for args in (["--cpus=2"], ["--sim=here"], ["--sim=a", "--sim=b"]):
            with self.subTest(args=args), self.assertRaises(KscaleError):
                sensitivity.sim_option(args)
        self.assertEqual(sensitivity.sim_option(["--sim=x445"]), "x445")


if __name__ == "__main__":
    unittest.main()
