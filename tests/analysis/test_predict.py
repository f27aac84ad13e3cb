"""kscale predict: MVA, USL, machines and line latencies, the pipeline."""

import json
import math
import os
import re
import shutil
import tempfile
import unittest
from fractions import Fraction

from . import REPO, run_cli
from kscale_analysis import mva, usl
from kscale_analysis.predict import machine, network, profile, seeds, series
from kscale_analysis.results import KscaleError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def product_form_throughput(n, centres, delay, cpu=None):
    """X(n) by brute force: the normalisation constants of the product
    form, G(n) = sum over every way to place n customers, convolved in
    exact fractions; X(n) = G(n - 1) / G(n)."""
    def conv(a, b):
        return [sum(a[i] * b[k - i] for i in range(k + 1)) for k in range(n + 1)]

    g = [Fraction(delay) ** j / math.factorial(j) for j in range(n + 1)]
    for c in centres:
        for _ in range(c.count):
            g = conv(g, [Fraction(c.demand) ** j for j in range(n + 1)])
    if cpu:
        demand, servers = cpu
        h = [Fraction(1)]
        for j in range(1, n + 1):
            h.append(h[-1] * Fraction(demand) / min(j, servers))
        g = conv(g, h)
    return float(g[n - 1] / g[n])


class MvaTest(unittest.TestCase):
    def test_one_centre_and_a_delay_by_hand(self):
        # D = 1, Z = 1.  n = 1: R = 1, X = 1/(1+1) = 1/2, Q = 1/2.
        # n = 2: R = 1 x (1 + 1/2) = 3/2, X = 2/(1 + 3/2) = 4/5, Q = 6/5.
        # n = 3: R = 11/5, X = 3/(1 + 11/5) = 15/16.  (The product form
        # agrees: at n = 2 the weights of 0, 1, 2 customers queued are
        # 1/2, 1, 1, so the centre is busy 2/2.5 = 4/5 of the time.)
        xs = [s.throughput for s in mva.solve(3, [mva.Centre(1.0)], delay=1.0)]
        for got, want in zip(xs, [1 / 2, 4 / 5, 15 / 16]):
            self.assertAlmostEqual(got, want, places=12)

    def test_two_centres_by_hand(self):
        # D = 1 and 2, no delay.  n = 1: X = 1/3, Q = 1/3, 2/3.
        # n = 2: R = 4/3 + 10/3, X = 2/(14/3) = 3/7 (product form: G(1) = 3,
        # G(2) = 1 + 2 + 4 = 7).
        solutions = mva.solve(2, [mva.Centre(1.0), mva.Centre(2.0)])
        self.assertAlmostEqual(solutions[0].throughput, 1 / 3, places=12)
        self.assertAlmostEqual(solutions[1].throughput, 3 / 7, places=12)
        self.assertAlmostEqual(sum(solutions[1].queue), 2.0, places=12)

    def test_one_customer_never_queues(self):
        centres = [mva.Centre(0.3), mva.Centre(0.2, 4), mva.Centre(1.5)]
        x = mva.throughput(1, centres, delay=2.0)
        self.assertAlmostEqual(x, 1 / (2.0 + 0.3 + 4 * 0.2 + 1.5), places=12)

    def test_throughput_tends_to_the_bottleneck(self):
        centres = [mva.Centre(1.0), mva.Centre(0.5)]
        xs = [s.throughput for s in mva.solve(400, centres, delay=3.0)]
        self.assertTrue(all(a <= b * (1 + 1e-12) for a, b in zip(xs, xs[1:])))
        self.assertAlmostEqual(xs[-1], 1.0, places=6)
        # and grows no faster than without queueing
        self.assertTrue(all(x <= n / 4.5 + 1e-12 for n, x in enumerate(xs, start=1)))

    def test_identical_centres_are_one_group(self):
        grouped = mva.solve(20, [mva.Centre(0.1, 5), mva.Centre(0.4)], delay=1.0)
        apart = mva.solve(20, [mva.Centre(0.1)] * 5 + [mva.Centre(0.4)], delay=1.0)
        for g, a in zip(grouped, apart):
            self.assertAlmostEqual(g.throughput, a.throughput, places=12)

    def test_multiserver_by_hand(self):
        # Z = 1, a 2-server centre D = 1, n = 3: weights of j there
        # Z^(3-j)/(3-j)! x D^j / (1 x 2 x 2 ...): 1/6, 1/2, 1/2, 1/4,
        # G(3) = 17/12; G(2) = 1/2 + 1 + 1/2 = 2; X = 24/17.
        x = mva.throughput(3, [], delay=1.0, cpu=(1.0, 2))
        self.assertAlmostEqual(x, 24 / 17, places=12)

    def test_multiserver_matches_the_product_form(self):
        networks = [([mva.Centre(0.25), mva.Centre(0.05, 3)], 1.0, (0.7, 2)),
                    ([mva.Centre(0.5)], 0.2, (2.0, 4)),
                    ([], 0.0, (1.0, 8)),
                    ([mva.Centre(0.01, 10)], 3.0, (1.0, 16))]
        for centres, delay, cpu in networks:
            for n in (1, 2, 5, 17, 40):
                self.assertAlmostEqual(mva.throughput(n, centres, delay, cpu),
                                       product_form_throughput(n, centres, delay, cpu),
                                       places=9, msg=f"{centres} {delay} {cpu} n={n}")

    def test_multiserver_saturates_at_its_servers(self):
        self.assertAlmostEqual(mva.throughput(512, [], delay=1.0, cpu=(1.0, 2)), 2.0,
                               places=9)
        # below its servers nobody waits: a delay
        self.assertAlmostEqual(mva.throughput(8, [], delay=1.0, cpu=(1.0, 512)), 4.0,
                               places=9)

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            mva.solve(0, [])
        with self.assertRaises(ValueError):
            mva.solve(1, [mva.Centre(-1.0)])


class UslTest(unittest.TestCase):
    def test_recovers_sigma_and_kappa(self):
        truth = usl.Fit(1000.0, 0.05, 0.002, 0)
        points = [(n, truth(n)) for n in (1, 2, 4, 8, 16, 32, 64)]
        fit = usl.fit(points)
        self.assertAlmostEqual(fit.lam, 1000.0, delta=1e-3)
        self.assertAlmostEqual(fit.sigma, 0.05, delta=1e-6)
        self.assertAlmostEqual(fit.kappa, 0.002, delta=1e-7)
        self.assertAlmostEqual(fit.peak, math.sqrt(0.95 / 0.002), places=3)

    def test_recovers_them_through_noise(self):
        truth = usl.Fit(5e6, 0.1, 0.0005, 0)
        noise = [1.01, 0.99, 1.0, 1.02, 0.98, 1.0]
        points = [(n, truth(n) * e) for n in (1, 2, 4, 8, 16, 32) for e in noise]
        fit = usl.fit(points)
        self.assertAlmostEqual(fit.sigma, 0.1, delta=0.01)
        self.assertAlmostEqual(fit.kappa, 0.0005, delta=0.0001)

    def test_sigma_and_kappa_stay_non_negative(self):
        # superlinear data would want sigma < 0
        fit = usl.fit([(1, 1.0), (2, 2.2), (4, 4.8)])
        self.assertGreaterEqual(fit.sigma, 0.0)
        self.assertGreaterEqual(fit.kappa, 0.0)

    def test_refuses_two_counts(self):
        with self.assertRaises(usl.Refused) as cm:
            usl.fit([(1, 10.0), (1, 11.0), (2, 15.0), (2, 16.0)])
        self.assertIn("have 2", str(cm.exception))
        # a window with no operation (seen on a 16-CPU TCG guest): refused,
        # not a traceback from the relative residuals
        with self.assertRaises(usl.Refused) as cm:
            usl.fit([(1, 10.0), (2, 15.0), (4, 0.0), (8, 0.0)])
        self.assertEqual(str(cm.exception), "USL: no throughput measured at 4, 8 CPU(s)")


MACHINE = """\
# a test box: 512 CPUs, 16 nodes of 16 cores x 2 threads
name = box
cpus = 512
nodes = 16
threads_per_core = 2
line_ns_smt = 10
line_ns_node = 50   # same socket
line_ns_remote = 300
ghz = 2.0
source.line_ns_node = a paper, https://example.com/a#table-2
"""


class MachineTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name

    def machine_file(self, text, name="m.conf"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_parses_a_machine_file(self):
        m = machine.read_machine(self.machine_file(MACHINE))
        self.assertEqual((m.name, m.cpus, m.nodes, m.threads_per_core), ("box", 512, 16, 2))
        self.assertEqual(m.line_ns, {"smt": 10.0, "node": 50.0, "remote": 300.0})
        self.assertEqual(m.ghz, 2.0)
        self.assertEqual(m.sources["line_ns_node"], "a paper, https://example.com/a")

    def test_latency_mix_of_a_compact_placement(self):
        m = machine.read_machine(self.machine_file(MACHINE))
        # 16 threads: one a core of node 0, no siblings, no other node
        self.assertEqual(machine.placement(m, 16), {"smt": 0, "node": 240, "remote": 0})
        self.assertEqual(machine.line_latency(m, 16), 50.0)
        # 32: node 0 full, each core's two siblings pair: 16 x 2 ordered pairs
        self.assertEqual(machine.placement(m, 32), {"smt": 32, "node": 960, "remote": 0})
        self.assertAlmostEqual(machine.line_latency(m, 32), (32 * 10 + 960 * 50) / 992)
        # 48: node 1 half full, one a core
        self.assertEqual(machine.placement(m, 48),
                         {"smt": 32, "node": 960 + 240, "remote": 48 * 47 - 992 - 240})
        # 512: 16 full nodes; 261632 ordered pairs, 15872 in a node
        pairs = machine.placement(m, 512)
        self.assertEqual(pairs, {"smt": 512, "node": 15872 - 512, "remote": 261632 - 15872})
        self.assertAlmostEqual(machine.line_latency(m, 512),
                               (512 * 10 + 15360 * 50 + 245760 * 300) / 261632)
        self.assertEqual(machine.line_latency(m, 1), 0.0)

    def test_a_core_of_siblings_pairs_them_at_once(self):
        m = machine.make_machine("vm", {"cpus": "2", "threads_per_core": "2",
                                        "line_ns_smt": "15"}, "test")
        self.assertEqual(machine.line_latency(m, 2), 15.0)

    def test_this_machine_from_the_context(self):
        contexts = [{"kscale_allowed_cpus": "2", "kscale_nodes": "1",
                     "kscale_threads_per_core": "1", "kscale_line_ns_smt": "none",
                     "kscale_line_ns_node": v, "kscale_line_ns_remote": "none",
                     "mhz_per_cpu": 2600} for v in ("90", "60", "20")]
        here = machine.context_machine(contexts, "t")
        self.assertEqual((here.cpus, here.line_ns["node"], here.ghz), (2, 60.0, 2.6))
        big = machine.extended(here)
        self.assertEqual((big.cpus, big.nodes, big.line_ns["node"]), (512, 1, 60.0))
        with self.assertRaisesRegex(KscaleError, "no line latencies"):
            machine.context_machine([{"kscale_allowed_cpus": "2"}], "t")
        emulated = dict(contexts[1], kscale_nodes="2",
                        kscale_line_ns_remote="none (nodes emulated)")
        self.assertEqual(machine.context_machine([emulated], "t").line_ns["remote"], 60.0)

    def test_malformed_machine_files(self):
        cases = {
            "cpus = 8\nbogus line\n": r"m\.conf:2: expected 'key = value'",
            "nodes = 2\n": r"no 'cpus = N' line",
            "cpus = eight\nline_ns_node = 5\n": r"cpus: expected a whole number",
            "cpus = 8\nline_ns_node = -5\n": r"line_ns_node: must be > 0",
            "cpus = 8\ncpus = 8\n": r"m\.conf:2: cpus given twice",
            "cpus = 6\nnodes = 4\nline_ns_node = 5\nline_ns_remote = 9\n":
                r"not a multiple of nodes",
            "cpus = 8\nnodes = 2\nline_ns_node = 5\n": r"line_ns_remote: needed",
            "cpus = 8\nline_ns_node = none\n": r"line_ns_node: needed",
            "cpus = 8\nline_ns_node = 5\nghz = fast\n": r"ghz: expected a number",
        }
        for text, error in cases.items():
            with self.assertRaisesRegex(KscaleError, error, msg=text):
                machine.read_machine(self.machine_file(text))
        with self.assertRaisesRegex(KscaleError, "no such machine file"):
            machine.read_machine(os.path.join(self.tmp, "nope.conf"))

    def test_the_seed_machines_parse(self):
        directory = os.path.join(REPO, "configs", "machines")
        names = [n for n in sorted(os.listdir(directory)) if n.endswith(".conf")] \
            if os.path.isdir(directory) else []
        if not names:
            self.skipTest("no configs/machines/*.conf yet")
        for name in names:
            m = machine.read_machine(os.path.join(directory, name))
            self.assertEqual(m.name, name[:-len(".conf")])

    def test_seed_figures_and_knobs(self):
        self.assertEqual(seeds.parse_figure("150"), (150.0, 150.0))
        self.assertEqual(seeds.parse_figure("~4x"), (4.0, 4.0))
        self.assertEqual(seeds.parse_figure("5-10"), (5.0, 10.0))
        with self.assertRaises(ValueError):
            seeds.parse_figure("lots")
        self.assertEqual(seeds.parse_knobs("mounts=1 path_work_ns:0"),
                         {"mounts": "1", "path_work_ns": "0"})
        self.assertEqual(seeds.parse_knobs("-"), {})


# A model of this machine: 2 CPUs, one node, lines moved in 60 ns.
CONTEXT = {"kscale_allowed_cpus": "2", "kscale_nodes": "1",
           "kscale_threads_per_core": "1", "kscale_line_ns_smt": "none",
           "kscale_line_ns_node": "60", "kscale_line_ns_remote": "none",
           "kscale_primary_metric": "ops_per_sec", "kscale_cpu_model": "Test CPU",
           "mhz_per_cpu": 2600}


def resource(visits, hold, instances=1, scope=0, sleeps=0, lines=1, wait=0.0):
    return {"visits": visits, "hold_ns": hold, "wait_ns": wait, "lines": lines,
            "instances": instances, "sleeps": sleeps, "scope": scope}


def row(variant, threads, ops, resources=None, knobs="mounts:1/placement:compact",
        model="mnt_writers/openbench", **counters):
    name = f"{model}/{variant}/{knobs}/iterations:1/manual_time/threads:{threads}"
    out = {"name": name, "run_type": "iteration", "threads": threads,
           "ops_per_sec": ops, "ops_per_sec_per_cpu": ops / min(threads, 2), **counters}
    for res, fields in (resources or {}).items():
        out.update({f"res_{res}_{k}": v for k, v in fields.items()})
    return out


def profiled_series(rows1, rows2=None, plain=None):
    s = series.Series(("m", "w", "v", ()), CONTEXT, 0, {1: rows1}, {})
    if rows2:
        s.profiled[2] = rows2
    if plain:
        s.plain.update(plain)
    return s


class ModelTest(unittest.TestCase):
    here = machine.context_machine([CONTEXT], "test")

    def params(self, s, metric="ops_per_sec"):
        return profile.extract(s.key, s.profiled[1], s.profiled.get(2), metric,
                               series.timing_rows(s))

    def test_private_time_and_one_thread(self):
        # 100 ns an operation, 2 visits of 10 ns to one lock: 80 ns private
        s = profiled_series([row("v", 1, 1e7, {"lock": resource(2, 10)})])
        p = self.params(s)
        self.assertAlmostEqual(p.t1, 100.0)
        self.assertAlmostEqual(p.cpu_outside, 80.0)
        one = network.predict(p, self.here, 1)
        self.assertAlmostEqual(one.throughput, 1e7)

    def test_two_threads_by_hand(self):
        # one lock, 1 visit of 20 ns; 80 ns private.  At 2 threads a visit
        # moves the 60 ns line with probability b + (1 - b)/2, b the chance
        # of finding the lock held: its utilization with the other thread
        # alone, D / (80 + D), D = 20 + 30 (1 + b).  So b solves
        # 30 b^2 + 100 b - 50 = 0: b = (-10 + sqrt(160)) / 6.
        s = profiled_series([row("v", 1, 1e7, {"lock": resource(1, 20)})])
        two = network.predict(self.params(s), self.here, 2)
        b = (-10 + math.sqrt(160)) / 6
        service = 50 + 30 * b
        x1 = 1 / (80 + service)
        want = 2 / (80 + service * (1 + x1 * service))
        self.assertAlmostEqual(two.holds["lock"], service, places=6)
        self.assertAlmostEqual(two.throughput, want * 1e9, delta=1e-3)

    def test_an_atomics_line_moves_on_half_the_visits(self):
        # hold 0 (a line, not a lock): no handoff, (m-1)/m of visits move it
        s = profiled_series([row("v", 1, 1e7, {"count": resource(2, 0)})])
        two = network.predict(self.params(s), self.here, 2)
        self.assertAlmostEqual(two.holds["count"], 30.0)

    def test_a_per_cpu_class_scales(self):
        s = profiled_series([row("v", 1, 1e7, {"pcp": resource(4, 5, scope=2)})])
        p = self.params(s)
        for n in (2, 64, 512):
            self.assertAlmostEqual(network.predict(p, machine.extended(self.here), n).per_cpu,
                                   1e7, delta=1)

    def test_scope_from_the_two_thread_instances(self):
        one = [row("v", 1, 1e7, {"pcp": {"visits": 1, "hold_ns": 5, "instances": 1},
                                 "lock": {"visits": 1, "hold_ns": 5, "instances": 1}})]
        two = [row("v", 2, 1e7, {"pcp": {"visits": 1, "hold_ns": 5, "instances": 2},
                                 "lock": {"visits": 1, "hold_ns": 5, "instances": 1}})]
        p = self.params(profiled_series(one, two))
        self.assertEqual({r.name: r.scope for r in p.resources},
                         {"pcp": "cpu", "lock": "shared"})

    def test_instances_divide_the_queue(self):
        one = [row("v", 1, 1e6, {"dir": resource(1, 900, instances=100)})]
        lone = [row("v", 1, 1e6, {"dir": resource(1, 900)})]
        many, single = (network.predict(self.params(profiled_series(r)),
                                        machine.extended(self.here), 64)
                        for r in (one, lone))
        self.assertLess(single.throughput, 1e9 / 900 * 1.001)  # the one lock's limit
        self.assertGreater(many.throughput, 20 * single.throughput)

    def test_holds_over_the_operation_are_clamped(self):
        s = profiled_series([row("v", 1, 1e7, {"lock": resource(2, 80)})])
        p = self.params(s)
        self.assertEqual(p.cpu_outside, 0.0)
        self.assertRegex(p.notes[0], r"exclusive holds \(160 ns\) exceed the time per "
                                     r"operation \(100 ns\): private time clamped to 0")

    def test_nested_read_holds(self):
        # an rwsem read hold of 90 ns around a 30 ns exclusive one: 120 ns
        # of holds in 100 ns; the delay is the 70 ns outside the exclusive
        # hold, so one thread still runs at the measured rate
        rw = dict(resource(0, 0), read_visits=1, read_hold=90)
        rw["read_hold_ns"] = rw.pop("read_hold")
        s = profiled_series([row("v", 1, 1e7, {"rw": rw, "lock": resource(1, 30)})])
        p = self.params(s)
        self.assertAlmostEqual(p.cpu_outside, 70.0)
        self.assertRegex(p.notes[0], r"holds \(120 ns\) exceed the time per operation "
                                     r"\(100 ns\), nested")
        self.assertAlmostEqual(network.predict(p, self.here, 1).throughput, 1e7)

    def io_rows(self, **io):
        # a lookup: 120 us an operation, a 100 us read on 99% of them
        # under one of 100 directory locks (the model reports the sleep
        # and the read); 21 us of CPU work outside them
        # (lines=0: no transfers, so the product form is the exact answer)
        return [row("v", 1, 1e9 / 120000, {"dir": resource(0.99, 100000, instances=100,
                                                          sleeps=1, lines=0)}, **io)]

    def test_io_sleeps_off_the_cpu(self):
        p = self.params(profiled_series(self.io_rows(io_sleep_ns_per_op=99000.0,
                                                     io_read_ns=100000.0)))
        self.assertAlmostEqual(p.io_delay, 0.0)
        self.assertAlmostEqual(p.cpu_outside, 21000.0)
        self.assertAlmostEqual(p.resources[0].io_share, 100000.0)
        # 32 tasks on 2 CPUs: 100 directories of 990 ns an operation each
        # and 2 CPUs of 21 us, off the CPU while asleep: the CPUs are the
        # limit, 2 / 21 us; were the sleep on the CPU, 2 / 120 us
        x = network.predict(p, self.here, 32).throughput
        want = product_form_throughput(32, [mva.Centre(990.0, 100)], 0.0, (21000.0, 2))
        self.assertAlmostEqual(x, want * 1e9, delta=1e-3 * x)
        self.assertLess(x, 2 / 21000e-9)
        self.assertGreater(x, 0.9 * 2 / 21000e-9)
        # at 2 threads each has a CPU: no CPU centre
        two = network.predict(p, self.here, 2).throughput
        want = product_form_throughput(2, [mva.Centre(990.0, 100)], 21000.0)
        self.assertAlmostEqual(two, want * 1e9, delta=1e-6 * two)

    def test_bad_io_counters_are_refused(self):
        for name in ("io_sleep_ns_per_op", "io_read_ns"):
            rows = self.io_rows(**{"io_sleep_ns_per_op": 99000.0, "io_read_ns": 1e5,
                                   name: -1.0})
            with self.assertRaisesRegex(KscaleError, rf"^m/w/v: {name} is -1 in its "
                                                     r"1-thread rows: times are >= 0$"):
                self.params(profiled_series(rows))
        # which holds could it sleep in?
        with self.assertRaisesRegex(KscaleError, r"^m/w/v: io_sleep_ns_per_op without "
                                                 r"io_read_ns in its 1-thread rows$"):
            self.params(profiled_series(self.io_rows(io_sleep_ns_per_op=99000.0)))
        # no sleep: no read needed
        p = self.params(profiled_series(self.io_rows(io_sleep_ns_per_op=0.0)))
        self.assertEqual(p.io_delay, 0.0)

    def test_metric_conversion(self):
        # faults_per_sec_per_cpu: 2 faults an operation, per CPU in use
        s = profiled_series([row("v", 1, 1e6, {"lock": resource(1, 1)},
                                 faults_per_sec_per_cpu=2e6)])
        p = self.params(s, "faults_per_sec_per_cpu")
        self.assertAlmostEqual(p.ratio, 2.0)
        four = network.predict(p, machine.extended(self.here), 4)
        self.assertAlmostEqual(four.value, 2 * four.throughput / 4)
        self.assertAlmostEqual(four.per_cpu, four.value)
        # total_MBps: a total, per CPU divides by the CPUs
        s = profiled_series([row("v", 1, 1e6, {"lock": resource(1, 1)}, total_MBps=4.0)])
        p = self.params(s, "total_MBps")
        four = network.predict(p, machine.extended(self.here), 4)
        self.assertAlmostEqual(four.value, 4e-6 * four.throughput)
        self.assertAlmostEqual(four.per_cpu, four.value / 4)

    def test_plain_rows_time_the_operation(self):
        # the profile's counting slows the loop: the plain 1-thread rate wins
        s = profiled_series([row("v", 1, 5e6, {"lock": resource(1, 10)})],
                            plain={1: [row("v", 1, 1e7)]})
        self.assertAlmostEqual(self.params(s).t1, 100.0)
        self.assertEqual(self.params(s).timed, "plain")


def write_json(path, rows, context=CONTEXT):
    with open(path, "w") as f:
        json.dump({"context": context, "benchmarks": rows}, f)


SEED_SCALE = ("seed\tmachine\tthreads\tseed_ratio\tmetric\tbefore\tafter\tknobs\tnote\n"
              "000\tbox\t64\t4.0\tops_per_sec\tatomic\tpercpu\tmounts=1\ta note\n"
              "009\tbox\t8\t5-10\tops_per_sec\tnope\tnada\t-\t\n")


class PipelineTest(unittest.TestCase):
    """scripts/kscale-predict on a small synthetic run."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.results = os.path.join(self.tmp, "results", "tour")
        self.plots = os.path.join(self.tmp, "plots")
        self.configs = os.path.join(self.tmp, "configs")
        os.makedirs(self.results)
        os.makedirs(os.path.join(self.configs, "machines"))
        with open(os.path.join(self.configs, "machines", "box.conf"), "w") as f:
            f.write(MACHINE)
        self.scale = os.path.join(self.configs, "seed-scale.tsv")
        with open(self.scale, "w") as f:
            f.write(SEED_SCALE)
        atomic = {"count": resource(2, 0), "writers": resource(2, 0)}
        percpu = {"count": resource(2, 0), "writer": resource(2, 3, scope=2)}
        self.profiled = os.path.join(self.results, "p_mnt.json")
        write_json(self.profiled,
                   [row("atomic", n, ops, atomic) for n, ops in ((1, 3e7), (2, 6e6))] * 5
                   + [row("percpu", n, ops, percpu) for n, ops in ((1, 2e7), (2, 9e6))] * 5)
        self.plain = os.path.join(self.results, "mnt.json")
        write_json(self.plain, [row("atomic", 2, 6.0e6 + 1e5 * i) for i in range(5)]
                   + [row("percpu", 2, 1.0e7 + 1e5 * i) for i in range(5)])

    def predict(self, *args, env=None):
        env = {"KSCALE_PLOTS": self.plots, **(env or {})}
        return run_cli("predict", f"--seed-scale={self.scale}", *args, env=env)

    def written(self):
        out = []
        for top in (self.results, self.plots):
            for directory, _, files in os.walk(top):
                out += [os.path.join(directory, f) for f in files]
        return sorted(out)

    def test_table_files_and_plots(self):
        proc = self.predict(self.profiled, self.plain)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertIn("mnt_writers: validation on this machine", out)
        # no plain 1-thread rows: both kinds predicted from the profiled ones
        self.assertRegex(out, r"\natomic +2 +5 plain +profiled +6\.20M ±\S+ +\S+M +[+-]\d+\.\d%")
        self.assertRegex(out, r"\npercpu +2 +5 profiled +profiled +9\.00M ±0\.0% +\S+M +"
                              r"[+-]\d+\.\d% +count wait \d+/0 hold \d+/0\n")
        self.assertRegex(out, r"Variant +Validation +1 +2 +4 +8 +16 +32 +64 +128 +256 +512\n")
        # the table's validation: rows like T1's, the profiled ones here
        for variant in ("atomic", "percpu"):
            error = re.search(rf"\n{variant} +2 +5 profiled +profiled +\S+ ±\S+ +\S+ +"
                              r"([+-]\d+\.\d%)", out).group(1)
            self.assertRegex(out, rf"\n{variant} +{re.escape(error)} at 2 +\d")
        self.assertRegex(out, r"\npercpu +[+-]\d+\.\d% at 2 +20\.0M ")
        self.assertIn("USL: needs 3 or more CPU counts, have 2\n", out)
        self.assertRegex(out, r"\n000 +atomic -> percpu +box +64 +\S+x +MVA +4\.0x +\d\.\d\d +"
                              r"atomic [+-]\d+\.\d% at 2; percpu [+-]\d+\.\d% at 2 +"
                              r"(within 2x|off by \d+\.\dx)\n")
        self.assertRegex(out, r"\n009 +nope -> nada +box +8 +n/a +- +5-10x +n/a +n/a +"
                              r"no prediction\n")
        self.assertIn("009: no profiled nope and nada with any knobs in these results", out)
        self.assertIn("000: a note", out)
        txt = os.path.join(self.results, "predict.txt")
        md = os.path.join(self.results, "predict.md")
        with open(txt) as f:
            self.assertTrue(out.startswith(f.read()))
        with open(md) as f:
            self.assertIn("| Variant | Threads | Runs |", f.read())
        if not shutil.which("gnuplot"):
            print("skipping the plot part: gnuplot not installed")
            self.assertIn("gnuplot not found", proc.stderr)
            return
        for ext in (".png", ".svg"):
            path = os.path.join(self.plots, "tour", "predict-mnt_writers" + ext)
            self.assertIn(path, out)
            with open(path, "rb") as f:
                head = f.read(8)
            self.assertEqual(head == PNG_MAGIC, ext == ".png")

    def test_the_simulator_where_its_validation_holds(self):
        sim = os.path.join(self.results, "mnt_sim.json")
        write_json(sim, [row("atomic", n, 1e6 * n ** 0.5) for n in (1, 8, 64)] * 5
                   + [row("percpu", n, 4e6 * n ** 0.5) for n in (1, 8, 64)] * 5,
                   dict(CONTEXT, kscale_sim_machine="box", kscale_sim_cpus="512"))
        validation = os.path.join(self.tmp, "validation.json")
        box = f"--machine={os.path.join(self.configs, 'machines', 'box.conf')}"
        for verdict, model, note in (
                (None, "MVA", "000: simulated 4.00x on box, not the figure: no kscale "
                              "sim-validate results for this machine"),
                ({"ok": False, "error_pct": -23.0}, "MVA",
                 "000: simulated 4.00x on box, not the figure: kscale sim-validate's 000 "
                 "ratio on this machine is off by -23% (tolerance 15%)"),
                ({"ok": True, "error_pct": 3.0}, "sim", "000: the MVA gave ")):
            with self.subTest(verdict=verdict):
                if verdict is None:
                    if os.path.exists(validation):
                        os.unlink(validation)
                else:
                    with open(validation, "w") as f:
                        json.dump({"ratio_tol_pct": 15, "seeds": {"000": verdict}}, f)
                proc = self.predict(self.profiled, self.plain, sim, box,
                                    f"--sim-validation={validation}")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertIn(note, " ".join(proc.stdout.split()))
                line = re.search(r"\n(000 +atomic -> percpu .*)\n", proc.stdout).group(1)
                self.assertEqual(line.split()[7], model, line)
                if model == "sim":
                    self.assertEqual(line.split()[6:10], ["4.00x", "sim", "4.0x", "1.00"])
                # a simulated file is not measured: the validation table
                # has no row at 64
                self.assertNotRegex(proc.stdout, r"\natomic +64 ")
        if shutil.which("gnuplot"):
            self.assertTrue(os.path.isfile(os.path.join(self.plots, "tour",
                                                        "predict-mnt_writers.svg")))

    def test_seeds_option(self):
        self.assert_refused(self.predict(self.profiled, "--seeds=000,001"),
                            r"--seeds: no seed 001 in ")
        proc = self.predict(self.profiled, self.plain, "--seeds=009")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("\n009 ", proc.stdout)
        self.assertNotIn("\n000 ", proc.stdout)
        # none: no seed table, the seeds' figures are a summary's
        proc = self.predict(self.profiled, self.plain, "--seeds=none")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("seeds: predicted after/before", proc.stdout)
        self.assertIn("seeds: predicted after/before", self.predict(
            self.profiled, self.plain).stdout)

    def test_machine_option_and_out_dir(self):
        out_dir = os.path.join(self.tmp, "elsewhere")
        proc = self.predict(self.profiled, self.plain,
                            f"--machine={os.path.join(self.configs, 'machines', 'box.conf')}",
                            f"--out-dir={out_dir}")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("table machine: box: 512 CPUs, 16 nodes, 2 threads a core", proc.stdout)
        self.assertIn("predicted ops_per_sec per CPU on box", proc.stdout)
        if shutil.which("gnuplot"):
            self.assertTrue(os.path.isfile(os.path.join(out_dir, "predict-mnt_writers.svg")))

    def test_usl_fitted_with_three_counts(self):
        context = dict(CONTEXT, kscale_allowed_cpus="4")
        with open(self.profiled) as f:
            write_json(self.profiled, json.load(f)["benchmarks"], context)
        truth = usl.Fit(1e7, 0.2, 0.01, 0)
        write_json(self.plain, [row("atomic", n, truth(n) * e) for n in (1, 2, 4)
                                for e in (0.99, 1.0, 1.01)], context)
        proc = self.predict(self.profiled, self.plain)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"USL atomic: lambda 10\.0\d?M ops/s, sigma 0\.2\d*, "
                                      r"kappa 0\.01\d*, peak at 9 CPUs")
        self.assertIn("USL: needs 3 or more CPU counts, have 2", proc.stdout)  # percpu

    def test_default_results(self):
        proc = self.predict(env={"KSCALE_RESULTS": os.path.join(self.tmp, "results")})
        self.assertEqual(proc.returncode, 2)
        self.assertRegex(proc.stderr, r"^kscale predict: no results in \S+/predict: ")
        os.rename(self.results, os.path.join(self.tmp, "results", "predict"))
        self.results = os.path.join(self.tmp, "results", "predict")
        proc = self.predict(env={"KSCALE_RESULTS": os.path.join(self.tmp, "results")})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("1-thread profiles in mnt.json, p_mnt.json", proc.stdout)
        self.assertTrue(os.path.isfile(os.path.join(self.results, "predict.txt")))

    def assert_refused(self, proc, error):
        self.assertEqual(proc.returncode, 2, proc.stdout)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertRegex(proc.stderr, "^kscale predict: " + error)
        self.assertEqual(proc.stdout, "")
        self.assertEqual(self.written(), sorted([self.profiled, self.plain]))

    def test_bad_input_writes_nothing(self):
        self.assert_refused(self.predict(self.plain), r".*no 1-thread profiled rows")
        self.assert_refused(self.predict(self.profiled, "--machine=no-such-box"),
                            r".*no-such-box\.conf: no such machine file")
        bad = os.path.join(self.tmp, "bad.conf")
        with open(bad, "w") as f:
            f.write("cpus = 4\nline_ns_node = 5\nthreads_per_core = two\n")
        self.assert_refused(self.predict(self.profiled, f"--machine={bad}"),
                            r".*bad\.conf: threads_per_core: expected a whole number")
        os.unlink(self.scale)
        self.assert_refused(self.predict(self.profiled), r".*seed-scale\.tsv: no seed-scale file")
        with open(self.scale, "w") as f:
            f.write(SEED_SCALE.replace("\tbox\t64", "\tgone\t64"))
        self.assert_refused(self.predict(self.profiled), r".*gone\.conf: no such machine file")
        with open(self.scale, "w") as f:
            f.write(SEED_SCALE.replace("\t4.0\t", "\tmany\t"))
        self.assert_refused(self.predict(self.profiled), r".*seed-scale\.tsv:2: seed_ratio")
        self.assert_refused(self.predict(self.profiled, "--bogus"), r"unrecognized arguments")


if __name__ == "__main__":
    unittest.main()
