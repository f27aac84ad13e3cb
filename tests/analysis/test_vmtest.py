import contextlib
import io
import json
import os
import re
import tempfile
import unittest
from unittest import mock

from kscale_analysis import vmtest


class GuestBootTest(unittest.TestCase):
    """A guest that never runs /init's first item is told from a slow one."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.serial = os.path.join(self.tmp.name, "console.log")

    def guest(self, script):
        g = vmtest.Guest(["/bin/sh", "-c", script, "sh", self.serial], self.serial)
        self.addCleanup(g.kill)
        return g

    def test_a_hung_boot_is_killed_and_named(self):
        g = self.guest('echo "[ 8.6] sched_clock: Marking stable" >"$1"; exec sleep 60')
        with self.assertRaises(vmtest.BootHung):
            g.wait(timeout=30, boot_timeout=2)
        self.assertIsNotNone(g.proc.poll(), "qemu left running")
        self.assertIn("Marking stable", vmtest.last_line(self.serial))

    def test_a_hung_boot_is_named_by_its_first_report(self):
        with open(self.serial, "w") as f:
            f.write("[ 22.1] rcu: 2-...!: (5255 ticks this GP)\n"
                    "[ 24.7] watchdog: BUG: soft lockup - CPU#1 stuck for 23s! "
                    "[migration/1:21]\n[ 293.1]  </TASK>\n")
        self.assertIn("soft lockup - CPU#1", vmtest.stuck_line(self.serial))

    def test_a_guest_past_init_is_not_a_hung_boot(self):
        g = self.guest('echo "kscale-vm: plan-compact (at 14 s)" >"$1"; sleep 4')
        self.assertEqual(g.wait(timeout=30, boot_timeout=2), 0)
        self.assertEqual(g.items, 1)


class SaneTest(unittest.TestCase):
    @staticmethod
    def row(fairness, ops_per_sec, threads=12):
        return {"name": "b/w/v", "iterations": 1, "threads": threads,
                "fairness": fairness, "ops_per_sec": ops_per_sec}

    def test_every_thread_worked(self):
        self.assertIsNone(vmtest.sane("b", self.row(0.5, 10), True, 0.4))

    def test_a_thread_at_0_not_judged_is_listed(self):
        self.assertEqual(vmtest.sane("b", self.row(0, 1e6), False, 0.4), "not judged")

    def test_a_thread_at_0_of_many_operations_fails(self):
        # 12 threads, 0.4 s at 300 a second: 120 operations, 10 a thread
        with self.assertRaisesRegex(vmtest.Failed, "fairness 0: a thread did nothing"):
            vmtest.sane("b", self.row(0, 300), True, 0.4)

    def test_a_thread_at_0_went_on_as_long_as_its_row_could(self):
        doc = {"context": {"kscale_duration_s": "0.4"}}
        self.assertEqual(vmtest.window_s(doc, {"until_counted_s": 25.6}), 26.0)
        # a host row does not go on
        self.assertEqual(vmtest.window_s(doc, {"until_counted_s": 0}), 0.4)

    def test_a_thread_at_0_of_too_few_operations_is_not_judged(self):
        # real_lookup's sharded, 12 threads in a 12-vCPU guest: 26 a second
        self.assertEqual(vmtest.sane("b", self.row(0, 26.3), True, 0.4), "few")
        self.assertEqual(vmtest.sane("b", self.row(0, 299), True, 0.4), "few")


class BenchTest(unittest.TestCase):
    """A thread at 0 fails a model's row, not the guest kernel's."""

    def outputs(self, d, fairness_of):
        m = vmtest.Machine(cpus=4, nodes=2, threads_per_core=2, mem_per_node=512)
        names = {"model": "a model", "real": "the running kernel"}
        with open(os.path.join(d, "list-b.out"), "w") as f:
            f.write("".join(f"  variant  {v} {names[v]}\n" for v in names))
        rows = [{"name": f"b/w/{v}/threads:{n}", "run_type": "iteration",
                 "iterations": 1, "threads": n, "ops_per_sec": 1e6,
                 "fairness": fairness_of.get((v, n), 0.5),
                 "until_counted_s": 0 if v == "real" else 60}
                for v in names for n in m.bench_counts]
        doc = {"context": {"kscale_duration_s": "0.4", "kscale_host_variants": "real"},
               "benchmarks": rows}
        with open(os.path.join(d, "bench-b.json"), "w") as f:
            json.dump(doc, f)
        for item, text in (("list-b", ""), ("bench-b", "")):
            with open(os.path.join(d, f"{item}.rc"), "w") as f:
                f.write("0\n")
        open(os.path.join(d, "bench-b.out"), "w").close()
        return m, vmtest.Outputs(d)

    def test_the_kernels_row_is_listed(self):
        with tempfile.TemporaryDirectory() as d:
            m, o = self.outputs(d, {("real", 4): 0})
            self.assertIn("guest kernel's own rows, not judged (docs/vm-test.md): real@4",
                          vmtest.check_bench("b")(m, o))

    def test_a_models_row_fails(self):
        with tempfile.TemporaryDirectory() as d:
            m, o = self.outputs(d, {("model", 4): 0})
            with self.assertRaisesRegex(vmtest.Failed, "b/w/model/threads:4: fairness 0"):
                vmtest.check_bench("b")(m, o)

    def test_a_models_oversubscribed_row_fails(self):
        # the model scheduler's 4 tasks a CPU: every one of them must run
        with tempfile.TemporaryDirectory() as d:
            m, o = self.outputs(d, {("model", 16): 0})
            with self.assertRaisesRegex(vmtest.Failed, "b/w/model/threads:16: fairness 0"):
                vmtest.check_bench("b")(m, o)

    def test_the_kernels_oversubscribed_row_is_listed(self):
        with tempfile.TemporaryDirectory() as d:
            m, o = self.outputs(d, {("real", 16): 0})
            self.assertIn("not judged (docs/vm-test.md): real@16",
                          vmtest.check_bench("b")(m, o))


class OnlyTest(unittest.TestCase):
    """--only runs and judges some items, in the checklist's order."""

    def test_only_the_items_named(self):
        a = vmtest.parse_args(["--only=torture,bench-shmem_fault"])
        self.assertEqual([i.name for i in a.items], ["bench shmem_fault", "torture"])
        self.assertEqual([r for i in a.items for r in i.runs],
                         ["list-shmem_fault", "bench-shmem_fault", "torture",
                          "torture-list"])

    def test_every_item_by_default(self):
        self.assertEqual(vmtest.parse_args([]).items, vmtest.ITEMS)
        self.assertEqual(len({i.key for i in vmtest.ITEMS}), len(vmtest.ITEMS))

    def test_an_unknown_item_is_refused_with_the_list(self):
        with self.assertRaisesRegex(vmtest.KscaleError, "no such item bench-nope; "
                                    "the items are topology, "):
            vmtest.parse_args(["--only=bench-nope"])
        with self.assertRaisesRegex(vmtest.KscaleError, r"no such item \(none\)"):
            vmtest.parse_args(["--only=,"])

    def test_items_left_out_are_not_judged(self):
        with tempfile.TemporaryDirectory() as d:
            m = vmtest.Machine(cpus=4, nodes=2, threads_per_core=2, mem_per_node=512)
            for item, text in (("plan-spread", "4 CPUs allowed on 2 node(s)\n"),):
                with open(os.path.join(d, f"{item}.out"), "w") as f:
                    f.write(text)
                with open(os.path.join(d, f"{item}.rc"), "w") as f:
                    f.write("0\n")
            with contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(vmtest.judge(m, d), [i.name for i in vmtest.ITEMS])
            self.assertEqual(len(out.getvalue().splitlines()), len(vmtest.ITEMS))
            with contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(vmtest.judge(m, d, vmtest.selected("placement-spread")),
                                 ["placement spread"])
            self.assertEqual(out.getvalue().count("FAIL: "), 1)


class DocsTest(unittest.TestCase):
    def test_the_docs_name_every_flag(self):
        with contextlib.redirect_stdout(io.StringIO()) as out, \
                self.assertRaises(SystemExit):
            vmtest.parse_args(["--help"])
        flags = set(re.findall(r"(--[a-z][a-z-]+)", out.getvalue())) - {"--help"}
        with open(os.path.join(vmtest.ROOT, "docs", "vm-test.md")) as f:
            doc = f.read()
        para = doc.split("Flags (`scripts/kscale vm-test --help`):", 1)[1].split("\n\n")[0]
        self.assertEqual(set(re.findall(r"`(--[a-z][a-z-]+)", para)), flags)


class MachineTest(unittest.TestCase):
    def test_sweep_has_the_node_boundaries_that_are_not_powers_of_two(self):
        m = vmtest.Machine(cpus=6, nodes=2, threads_per_core=1, mem_per_node=128)
        self.assertEqual(m.sweep("compact"), [1, 2, 3, 4, 6])
        self.assertEqual(m.sweep("spread"), [1, 2, 4, 6])

    def test_many_vcpus_share_one_tcg_thread(self):
        self.assertEqual(vmtest.Machine(4, 2, 2, 512).tcg_threads(64), "multi")
        self.assertEqual(vmtest.Machine(16, 4, 2, 512).tcg_threads(64), "multi")
        self.assertEqual(vmtest.Machine(64, 8, 2, 512).tcg_threads(64), "single")

    def test_vcpus_beyond_the_host_cpus_share_one_tcg_thread(self):
        self.assertEqual(vmtest.Machine(4, 2, 2, 512).tcg_threads(2), "single")
        self.assertEqual(vmtest.Machine(2, 2, 1, 512).tcg_threads(2), "multi")

    def test_tcg_threads_auto_or_as_told(self):
        self.assertEqual(vmtest.parse_args([]).tcg_threads, "single")
        with mock.patch.object(vmtest.os, "sched_getaffinity", return_value={0, 1}):
            self.assertEqual(vmtest.parse_args(["--cpus=4", "--nodes=2"]).tcg_threads,
                             "single")
        with mock.patch.object(vmtest.os, "sched_getaffinity", return_value=set(range(8))):
            self.assertEqual(vmtest.parse_args(["--cpus=4", "--nodes=2"]).tcg_threads,
                             "multi")
        self.assertEqual(vmtest.parse_args(["--tcg-threads=multi"]).tcg_threads, "multi")
        self.assertEqual(vmtest.parse_args(["--cpus=4", "--nodes=2", "--tcg-threads=single"])
                         .tcg_threads, "single")

    def test_a_window_may_go_on_for_what_the_vcpus_overcommit_the_host(self):
        m = vmtest.Machine(cpus=64, nodes=8, threads_per_core=2, mem_per_node=512)
        self.assertEqual(m.until_counted(1, 4, 0.5), 4 * 64)	# single-threaded TCG
        self.assertEqual(m.until_counted(2, 4, 0), 4 * 32)	# multi, 2 host CPUs
        m = vmtest.Machine(cpus=4, nodes=2, threads_per_core=2, mem_per_node=512)
        self.assertEqual(m.until_counted(4, 80, 1), 80)
        # a loaded host: 14 runnable tasks a CPU share the vCPUs' threads
        self.assertAlmostEqual(m.until_counted(2, 10, 14), 10 * 2 * 14)

    def test_a_window_may_go_on_for_a_minute_at_least(self):
        # CI's quick form, 0.1 s stretched to 0.4 s, ended rwsem's fio/v5.3
        # at 16 tasks on 4 vCPUs with a task at 0
        m = vmtest.Machine(cpus=4, nodes=2, threads_per_core=2, mem_per_node=512)
        self.assertEqual(m.until_counted(1, 0.1, 1), 60)
        m = vmtest.Machine(cpus=64, nodes=8, threads_per_core=2, mem_per_node=512)
        self.assertEqual(m.until_counted(1, 0.4, 0.5), 60)
        self.assertAlmostEqual(m.until_counted(1, 0.4, 4), 0.4 * 64 * 4)
        with mock.patch.object(vmtest.os, "getloadavg", return_value=(28, 0, 0)), \
                mock.patch.object(vmtest.os, "sched_getaffinity", return_value={0, 1}):
            self.assertEqual(vmtest.parse_args(["--cpus=4", "--nodes=2"]).host_load, 14)
        self.assertEqual(vmtest.parse_args([]).host_threads, 1)
        self.assertEqual(vmtest.parse_args(["--cpus=4", "--nodes=2",
                                            "--tcg-threads=multi"]).host_threads,
                         min(4, len(os.sched_getaffinity(0))))
        with mock.patch.object(vmtest.os, "sched_getaffinity", return_value={0, 1}):
            self.assertEqual(vmtest.parse_args(["--cpus=4", "--nodes=2"]).host_threads, 1)

    def test_a_cpu_offline_leaves_the_others(self):
        m = vmtest.Machine(cpus=64, nodes=8, threads_per_core=2, mem_per_node=512)
        self.assertEqual(m.hole_counts, (1, 63, 252))


if __name__ == "__main__":
    unittest.main()
