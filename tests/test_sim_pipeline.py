#!/usr/bin/env python3
"""kscale sim through the bench binaries (docs/sim.md): a bad machine file
or a host variant is refused with one line and nothing written; a run
writes Google Benchmark's JSON that kscale compare reads; the same seed
gives the same counters and another seed nearly the same; an atomic
counter nobody spins on agrees with MVA, by a locked add or by a cmpxchg
loop (the loop's accesses served in the line's order); and the ticket
spinlock on the
48-core machine follows the Markov model of "Non-scalable locks are
dangerous" (scripts/kscale_analysis/ticket_markov.py) until it collapses.
A run that ends in a lost wake-up fails with one line, not a crash,
kscale sim-sensitivity moves each estimated figure and nothing else, two
re-runs at a time as one at a time, and
kscale sim-validate --published runs a data set to its rows, table and
plot.  --profile counts each lock class's line transfers per operation,
and a wait's share of the threads' time counts the drain after the stop.

usage: test_sim_pipeline.py SOURCE_ROOT BUILD_ROOT
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT, BUILD = sys.argv[1], sys.argv[2]
sys.path.insert(0, ROOT)
from scripts.kscale_analysis import mva, ticket_markov  # noqa: E402
from scripts.kscale_analysis.predict.machine import (  # noqa: E402
    SIM_FIGURES, machine_values)

PRIMITIVES = os.path.join(BUILD, 'bench', 'primitives')
MNT_WRITERS = os.path.join(BUILD, 'bench', 'mnt_writers')
MACHINES = os.path.join(ROOT, 'configs', 'machines')

# A machine of round numbers, every figure "sourced" for the parser.
FIGURES = {
    'cpus': '16', 'nodes': '2', 'threads_per_core': '2', 'line_bytes': '64',
    'ghz': '2', 'hit_ns': '0.5', 'line_ns_smt': '15', 'line_ns_node': '60',
    'line_ns_remote': '180', 'mem_ns_local': '90', 'mem_ns_remote': '150',
    'atomic_ns': '5', 'wake_ns': '3000', 'ctxsw_ns': '1500', 'ipc': '1.5',
    'smt_throughput': '1.25',
}


def machine_file(directory, drop=None, source=True, **change):
    figures = dict(FIGURES, **change)
    lines = ['# a test machine', 'name = test']
    for key, value in figures.items():
        if key == drop:
            continue
        lines.append(f'{key} = {value}')
        if source:
            lines.append(f'source.{key} = tests/test_sim_pipeline.py')
    path = os.path.join(directory, 'test.conf')
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return path


def run(args, check=True):
    p = subprocess.run([PRIMITIVES] + args, capture_output=True, text=True)
    if check and p.returncode:
        raise AssertionError(f'{args}: exit {p.returncode}: {p.stderr}')
    return p


def results(path):
    with open(path) as f:
        return json.load(f)


def counters(doc, drop=('sim_host_seconds', 'sim_events_per_host_sec',
                        'cpu_time', 'real_time')):
    return [{k: v for k, v in b.items() if k not in drop}
            for b in doc['benchmarks']]


class Refusals(unittest.TestCase):
    def refused(self, args, why):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'out.json')
            p = run(args + ['--cpus=1', f'--benchmark_out={out}'],
                    check=False)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1,
                             p.stderr)
            self.assertIn(why, p.stderr)
            self.assertEqual(os.listdir(d), [])

    def test_bad_machine_files(self):
        with tempfile.TemporaryDirectory() as d:
            self.refused([f'--sim={machine_file(d, drop="wake_ns")}'],
                         'no wake_ns')
            self.refused([f'--sim={machine_file(d, source=False)}'],
                         'has no source.cpus line')
            self.refused([f'--sim={machine_file(d, hit_ns="fast")}'],
                         "hit_ns = 'fast'")
            self.refused([f'--sim={machine_file(d, cpus="15")}'],
                         'not a multiple of nodes')
            self.refused(['--sim=no-such-machine'], 'cannot read')
            path = machine_file(d)
            with open(path, 'a') as f:
                f.write('wake_curve = 2000:8000,1000:9000\n')
            self.refused([f'--sim={path}'], 'wake_curve')

    def test_existing_machine_files_are_complete_or_refused(self):
        # every profile the simulator is offered names its figures
        for name in sorted(os.listdir(MACHINES)):
            if not name.endswith('.conf'):
                continue
            p = run([f'--sim={name[:-5]}', '--cpus=1', '--dry-run'],
                    check=False)
            if p.returncode:
                self.assertEqual(len(p.stderr.strip().splitlines()), 1)
                self.assertRegex(p.stderr, 'no [a-z_]+ \\(the simulator '
                                 'needs it|has no source')

    def test_bench_without_a_simulator_build(self):
        sched = os.path.join(BUILD, 'bench', 'sched')
        p = subprocess.run([sched, '--sim=here', '--cpus=1'],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn('sched has no simulator\'s build', p.stderr)

    def test_host_variant_refused(self):
        rwsem = os.path.join(BUILD, 'bench', 'rwsem')
        p = subprocess.run([rwsem, '--sim=here', '--variants=v4.6,fio_xfs',
                            '--cpus=1'], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn('variant fio_xfs runs the host', p.stderr)


class Runs(unittest.TestCase):
    ARGS = ['--variants=spinlock,atomic', '--cpus=1,8,16',
            '--hold-ns=100', '--think-ns=400', '--duration=0.002',
            '--warmup=0.0005']

    def sim(self, d, seed, name):
        out = os.path.join(d, name)
        run([f'--sim={machine_file(d)}', f'--sim-seed={seed}',
             f'--benchmark_out={out}'] + self.ARGS)
        return out

    def test_same_seed_same_counters_and_compare_reads_them(self):
        with tempfile.TemporaryDirectory() as d:
            a, b, c = (self.sim(d, 1, 'a.json'), self.sim(d, 1, 'b.json'),
                       self.sim(d, 2, 'c.json'))
            ra, rb, rc = results(a), results(b), results(c)
            self.assertEqual(counters(ra), counters(rb))
            self.assertNotEqual(counters(ra), counters(rc))
            # atomic at 16 is one saturated line whose order of owners
            # (60 ns in a node, 180 ns across) the seed decides: 5.7M to
            # 7.5M/s over five seeds; every other row within 1%
            for x, y in zip(ra['benchmarks'], rc['benchmarks']):
                tol = 0.35 if 'atomic' in x['name'] and \
                    x['threads'] == 16 else 0.05
                self.assertAlmostEqual(x['ops_per_sec'] / y['ops_per_sec'],
                                       1, delta=tol, msg=x['name'])
            ctx = ra['context']
            self.assertEqual(ctx['kscale_sim_machine'], 'test')
            self.assertEqual(ctx['kscale_sim_seed'], '1')
            p = subprocess.run([os.path.join(ROOT, 'scripts', 'kscale-compare'),
                                a, '--before=atomic', '--after=spinlock',
                                '--metric=ops_per_sec'],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn('threads:16', p.stdout)

    def test_repetition_is_the_next_seed(self):
        """A repetition is another sample, not the same run again."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'r.json')
            run([f'--sim={machine_file(d)}', '--benchmark_repetitions=2',
                 f'--benchmark_out={out}'] + self.ARGS)
            reps = [b for b in results(out)['benchmarks']
                    if b.get('run_type') == 'iteration']
            drop = ('sim_host_seconds', 'sim_events_per_host_sec',
                    'cpu_time', 'real_time', 'repetitions',
                    'repetition_index')
            second = counters(results(self.sim(d, 2, 'c.json')), drop)
            self.assertEqual(len(reps), 2 * len(second))
            self.assertEqual(counters({'benchmarks': reps[1::2]}, drop),
                             second)
            self.assertNotEqual(counters({'benchmarks': reps[0::2]}, drop),
                                second)

    def test_every_row_has_its_threads_spread(self):
        """The least and most busy thread's rate and their mean."""
        with tempfile.TemporaryDirectory() as d:
            for b in results(self.sim(d, 1, 'a.json'))['benchmarks']:
                lo, mean, hi = (b[f'thread_ops_per_sec_{k}']
                                for k in ('min', 'mean', 'max'))
                self.assertTrue(0 < lo <= mean <= hi, b['name'])
                self.assertAlmostEqual(mean * b['threads'] /
                                       b['ops_per_sec'], 1, delta=1e-9)
                self.assertAlmostEqual(lo / hi, b['fairness'], delta=1e-9)


class Transfers(unittest.TestCase):
    def rows(self, d, profile):
        out = os.path.join(d, f'{profile}.json')
        p = subprocess.run(
            [MNT_WRITERS, f'--sim={machine_file(d)}', '--variants=atomic',
             '--cpus=1,4', f'--profile={profile}', '--duration=0.002',
             '--warmup=0.001', f'--benchmark_out={out}'],
            capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return {b['threads']: b for b in results(out)['benchmarks']}

    def test_each_class_lines_misses_per_op(self):
        """--profile under --sim: res_<class>_transfers, the simulator's
        misses of each class's lines per operation: none at one CPU, where
        every line stays in its cache after the warm-up; at four CPUs
        files_lock's line and the mount's move between them."""
        with tempfile.TemporaryDirectory() as d:
            rows = self.rows(d, 1)
            moved = {k: v for k, v in rows[1].items()
                     if k.endswith('_transfers')}
            self.assertIn('res_files_lock_transfers', moved)
            self.assertEqual(set(moved.values()), {0}, moved)
            for c in ('files_lock', 'vfsmount'):
                self.assertGreater(rows[4][f'res_{c}_transfers'], 0, c)

    def test_without_the_profile_only_the_transfers(self):
        """Without --profile, the lines are registered and nothing hooked:
        the transfers, for nothing in virtual time (the profile's hooks
        are model code the simulator charges), and no other res_ counter."""
        with tempfile.TemporaryDirectory() as d:
            rows = self.rows(d, 0)
            res = {k for k in rows[4] if k.startswith(('res_', 'lockstat'))}
            self.assertIn('res_files_lock_transfers', res)
            self.assertEqual({k for k in res if not k.endswith('_transfers')},
                             set(), res)
            for c in ('files_lock', 'vfsmount'):
                self.assertGreater(rows[4][f'res_{c}_transfers'], 0, c)


class WaitShares(unittest.TestCase):
    def test_a_share_of_the_threads_time_counts_the_drain(self):
        """64 lookups sleeping 1 ms for a disk behind one i_mutex: at the
        stop 63 still queue for it, and drain it for 63 ms more, 12 times
        the window.  dir_lock_wait_pct is of the threads' time in their
        loops, that drain included: most of it, never over 100; without
        one directory lock, none; and the disks, idle but one under the
        mutex, queue without it."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'lookup.json')
            p = subprocess.run(
                [os.path.join(BUILD, 'bench', 'real_lookup'),
                 f'--sim={machine_file(d)}', '--variants=i_mutex,immutable',
                 '--dcache=100', '--fs-io-us=1000', '--fs-lookup-ns=0',
                 '--disks=2', '--fs-io-depth=1', '--cpus=all*4',
                 '--oversubscribe', '--duration=0.005', '--warmup=0.001',
                 f'--benchmark_out={out}'], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = {b['name'].split('/')[2]: b
                    for b in results(out)['benchmarks']}
            self.assertGreater(rows['i_mutex']['dir_lock_wait_pct'], 50)
            self.assertLessEqual(rows['i_mutex']['dir_lock_wait_pct'], 100)
            self.assertEqual(rows['immutable']['dir_lock_wait_pct'], 0)
            self.assertEqual(rows['i_mutex']['fs_io_queued_pct'], 0)
            self.assertGreater(rows['immutable']['fs_io_queued_pct'], 50)


class LostWakeup(unittest.TestCase):
    def test_one_line_and_the_teardown_sees_the_sleepers_stack(self):
        """A run that ends with a task asleep for good fails with one line;
        the teardown still reads what the sleeper left on its stack (as
        the rwsem's does its wait list), so the binary does not crash."""
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run(
                [os.path.join(BUILD, 'tests', 'harness_check_sim'),
                 f'--sim={machine_file(d)}', '--workloads=hang',
                 '--variants=model', '--hang=loop', '--cpus=2',
                 '--duration=0.002', '--warmup=0.0005'],
                capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn('leaving the window: every task asleep with '
                          'nothing to wake it (a lost wake-up)', p.stderr)
            self.assertNotIn('stack was reused', p.stderr)


class Sensitivity(unittest.TestCase):
    def sensitivity(self, d, estimates, jobs, extra=()):
        path = machine_file(d)
        with open(path) as f:
            text = f.read()
        for key in estimates:
            text = text.replace(f'source.{key} = tests',
                                f'source.{key} = estimate: tests')
        with open(path, 'w') as f:
            f.write(text)
        # the run's results, which --label names
        open(os.path.join(d, 'prim.json'), 'w').close()
        p = subprocess.run(
            [os.path.join(ROOT, 'scripts', 'kscale-sim-sensitivity'),
             f'--results-dir={d}', '--label=prim', f'--jobs={jobs}',
             '--before=spinlock/threads:8', '--after=atomic/threads:8',
             '--', PRIMITIVES, f'--sim={path}', *extra] + Runs.ARGS,
            capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), os.path.join(
            d, 'prim.sensitivity.spinlock_threads-8-atomic_threads-8.json'))
        self.assertEqual(p.stderr.count('\n'), 1 + 2 * len(estimates), p.stderr)
        return results(p.stdout.strip())

    def test_each_estimate_moved_at_the_headlines_point(self):
        """kscale sim-sensitivity re-runs the headline's two points with
        each estimated figure 30% lower and higher, and nothing else;
        two at a time, each figure's ratios are those of one at a time,
        to the last digit (one calibration, the time virtual)."""
        docs = []
        with tempfile.TemporaryDirectory() as common:
            calibration = f'--calibration={os.path.join(common, "calibration")}'
            for jobs in (1, 2):
                with tempfile.TemporaryDirectory() as d:
                    docs.append(self.sensitivity(d, ['atomic_ns', 'hit_ns'],
                                                 jobs, [calibration]))
        self.assertEqual([f['figure'] for f in docs[0]['figures']],
                         ['hit_ns', 'atomic_ns'])
        figure = docs[0]['figures'][1]
        self.assertEqual(figure['value'], 5)
        # atomic_ns is in both sides' costs: the ratio moves with it
        self.assertNotAlmostEqual(figure['low'], figure['high'], places=3)
        self.assertEqual(docs[0], docs[1])


class Published(unittest.TestCase):
    """kscale sim-validate --published end to end on a made-up data set
    (tests/analysis/fixtures/published): a series anchored at its
    1-thread point and run at 1, 2 and 4 threads on a 4-CPU machine, and
    one whose variant the bench does not know, which is not run."""

    def test_fixture_runs_to_rows_table_and_plot(self):
        data = os.path.join(ROOT, 'tests', 'analysis', 'fixtures',
                            'published')
        with tempfile.TemporaryDirectory() as d:
            out, plots = os.path.join(d, 'out'), os.path.join(d, 'plots')
            p = subprocess.run(
                [os.path.join(ROOT, 'scripts', 'kscale'), 'sim-validate',
                 '--published', f'--data={data}', '--seeds=2',
                 f'--out={out}', f'--plot-dir={plots}'],
                capture_output=True, text=True,
                env=dict(os.environ, KSCALE_NO_SETUP='1',
                         KSCALE_BUILD=BUILD))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn('sim-validate: tiny-spinlock/unbuilt: not run: '
                          'variant nonesuch unknown to ', p.stderr)
            doc = results(os.path.join(out, 'published.json'))
            self.assertEqual(len(doc['not_run']), 1)
            rows = doc['rows']
            self.assertEqual([(r['series'], r['threads'], r['published'])
                              for r in rows],
                             [('ticket', 1, 1e6), ('ticket', 2, 1.5e6),
                              ('ticket', 4, 1.2e6)])
            for r in rows:
                self.assertEqual(r['seeds'], 2)
                self.assertAlmostEqual(
                    r['error_pct'], 100 * (r['simulated'] / r['published']
                                           - 1))
                self.assertLessEqual(r['simulated_min'], r['simulated'])
                self.assertLessEqual(r['simulated'], r['simulated_max'])
                self.assertRegex(r['anchor'], r'^think_ns=[1-9][0-9]*$')
            # the anchor puts the 1-thread point on the published one
            self.assertLess(abs(rows[0]['error_pct']), 2)
            # the spinlock's line saturates: 4 threads do less than 2
            self.assertLess(rows[2]['simulated'], rows[1]['simulated'])
            for r in rows:
                self.assertIn(f'| ticket | {r["threads"]} | ', p.stdout)
            self.assertIn('ticket knee: published 2, simulated 2', p.stdout)
            for ext in ('png', 'svg'):
                image = os.path.join(plots, f'published-tiny-spinlock.{ext}')
                self.assertIn(image + '\n', p.stdout)
                self.assertGreater(os.path.getsize(image), 0)


class Machines(unittest.TestCase):
    """Every machine file the simulator can run, every figure sourced."""

    def test_every_figure_names_its_source(self):
        names = sorted(f[:-5] for f in os.listdir(MACHINES)
                       if f.endswith('.conf'))
        self.assertIn('sgi-altix3700-512p', names)
        with tempfile.TemporaryDirectory() as d:
            for name in names:
                m = read_machine(name)
                for key in SIM_FIGURES + (('wake_curve',)
                                           if 'wake_curve' in m else ()):
                    source = m.get('source.' + key, '')
                    # a citation or a derivation, not a placeholder; a
                    # "none" says why in a few words
                    self.assertGreater(len(source.split()),
                                       2 if m[key] == 'none' else 5,
                                       msg=f'{name}: source.{key}')
                p = run([f'--sim={name}', '--cpus=1', '--variants=atomic',
                         '--duration=0.0001', '--warmup=0',
                         f'--benchmark_out={d}/{name}.json'], check=False)
                self.assertEqual(p.returncode, 0, msg=f'{name}: {p.stderr}')


def read_machine(name):
    return machine_values(os.path.join(MACHINES, name + '.conf'))


def mean_transfer(m):
    """The mean one-way transfer between two random CPUs of m (no SMT)."""
    cpus, nodes = int(m['cpus']), int(m['nodes'])
    same = (cpus // nodes - 1) / (cpus - 1)
    return same * float(m['line_ns_node']) + \
        (1 - same) * float(m['line_ns_remote'])


def paper_locks(machine, variants, counts):
    """primitives' VARIANTS on MACHINE at COUNTS as "Non-scalable locks
    are dangerous" ran them: 400 cycles held, 50,000 outside, 20 ms.  The
    knobs are this machine's ns, scaled back by the run's work_scale
    (read from a first, tiny run); the results document and the hold and
    think times in the machine's ns."""
    ghz = float(read_machine(machine)['ghz'])
    hold, think = 400 / ghz, 50000 / ghz
    with tempfile.TemporaryDirectory() as d:
        first, out = os.path.join(d, 'scale.json'), os.path.join(d, 'locks.json')
        run([f'--sim={machine}', '--cpus=1', '--variants=atomic',
             '--duration=0.0001', '--warmup=0', f'--benchmark_out={first}'])
        scale = float(results(first)['context']['kscale_sim_work_scale'])
        run([f'--sim={machine}', f'--variants={variants}',
             '--cpus=' + ','.join(map(str, counts)),
             f'--hold-ns={round(hold / scale)}',
             f'--think-ns={round(think / scale)}',
             '--duration=0.02', '--warmup=0.002', f'--benchmark_out={out}'])
        return (results(out), round(hold / scale) * scale,
                round(think / scale) * scale)


def counter_mva(m, think, scale, n):
    """MVA's closed network for a counter on one shared line, at 1..n
    CPUs: a delay of the work (think ns of this machine, scaled), one
    FIFO centre of a mean transfer and a locked add."""
    demand = mean_transfer(m) + float(m['atomic_ns'])
    return mva.solve(n, [mva.Centre(demand)], delay=think * scale)


class AgainstMva(unittest.TestCase):
    """Where MVA's assumptions hold, one shared line nobody spins on: an
    atomic counter incremented after 50,000 cycles of work on the 48-core
    machine, against MVA's closed network (a delay of the work, one FIFO
    centre of a mean transfer and a locked add).  Within 4% here."""

    MACHINE = 'amd-48core-opteron-2010'
    COUNTS = [1, 8, 16, 32, 48]

    def test_atomic_counter(self):
        m = read_machine(self.MACHINE)
        think = 50000 / float(m['ghz'])
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'atomic.json')
            run([f'--sim={self.MACHINE}', '--variants=atomic',
                 '--cpus=' + ','.join(map(str, self.COUNTS)),
                 f'--think-ns={round(think)}', '--duration=0.02',
                 '--warmup=0.002', f'--benchmark_out={out}'])
            doc = results(out)
        scale = float(doc['context']['kscale_sim_work_scale'])
        model = counter_mva(m, round(think), scale, max(self.COUNTS))
        for b in doc['benchmarks']:
            n = b['threads']
            x = b['ops_per_sec'] / 1e9
            self.assertAlmostEqual(x / model[n - 1].throughput, 1,
                                   delta=0.1, msg=f'{n} CPUs')


class CmpxchgCounter(unittest.TestCase):
    """A counter by atomic_add_unless() (a read, then a cmpxchg loop)
    beside one by atomic_inc() (a locked add) on the 48-core machine with
    20 us of work between increments.  Below the line's saturation (1-16
    CPUs) the loop is within 15% of the locked add and of MVA's network;
    past it (32, 48) it keeps at least a third of the locked add's rate:
    a failed cmpxchg costs a transfer, as in hardware, and its retry hits
    the line the failure brought.  With each access taking effect when it
    was asked for, not when the line served it, every CPU queued behind
    others read and changed the counter before them: 0.07x of the locked
    add at 32 CPUs, 0.03x at 48."""

    MACHINE = 'amd-48core-opteron-2010'
    THINK = 20000
    COUNTS = [1, 2, 4, 8, 16, 32, 48]

    def test_against_the_locked_add_and_mva(self):
        m = read_machine(self.MACHINE)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'cmpxchg.json')
            run([f'--sim={self.MACHINE}',
                 '--variants=atomic,atomic_add_unless',
                 '--cpus=' + ','.join(map(str, self.COUNTS)),
                 f'--think-ns={self.THINK}', '--duration=0.02',
                 '--warmup=0.002', f'--benchmark_out={out}'])
            doc = results(out)
        scale = float(doc['context']['kscale_sim_work_scale'])
        model = counter_mva(m, self.THINK, scale, max(self.COUNTS))
        rate = {}
        for b in doc['benchmarks']:
            variant = b['name'].split('/')[2]
            rate[variant, b['threads']] = b['ops_per_sec']
        report = '\n'.join(
            f'{n:3d} atomic {rate["atomic", n]:10.0f}/s add_unless '
            f'{rate["atomic_add_unless", n]:10.0f}/s mva '
            f'{model[n - 1].throughput * 1e9:10.0f}/s'
            for n in self.COUNTS)
        print('\n' + report)
        for n in self.COUNTS:
            loop, add = rate['atomic_add_unless', n], rate['atomic', n]
            if n <= 16:
                self.assertAlmostEqual(loop / add, 1, delta=0.15,
                                       msg=report)
                self.assertAlmostEqual(
                    loop / (model[n - 1].throughput * 1e9), 1,
                    delta=0.15, msg=report)
            else:
                self.assertGreaterEqual(loop, add / 3, msg=report)


class TicketLockFairness(unittest.TestCase):
    """A fair lock stays fair: the ticket lock serves its waiters in
    order, so with nothing but the lock (100 ns held, nothing outside)
    every thread's rate is within 10% of the mean at 2..64 CPUs, on each
    of three seeds (0.02 s: 30 acquisitions a thread at 48 CPUs, so one
    more is 3%), and every acquisition follows another thread's
    (`lock_handoffs_per_op`).  With one grace slot a line, or the
    releasing CPU retaking the lock before a waiter's request took
    effect, one CPU ran whole bursts of acquisitions while the others
    waited.  Alone, a CPU never hands a lock over."""

    RUNS = [('amd-48core-opteron-2010', [2, 4, 8, 16, 32, 48]),
            ('hpe-superdome-flex-512', [64])]

    def test_every_thread_within_a_tenth_of_the_mean(self):
        lines = []
        with tempfile.TemporaryDirectory() as d:
            for machine, counts in self.RUNS:
                out = os.path.join(d, machine + '.json')
                run([f'--sim={machine}', '--variants=spinlock',
                     '--cpus=' + ','.join(map(str, counts)),
                     '--hold-ns=100', '--duration=0.02', '--warmup=0.002',
                     '--benchmark_repetitions=3', f'--benchmark_out={out}'])
                for b in results(out)['benchmarks']:
                    if b.get('run_type') == 'aggregate':
                        continue
                    mean = b['thread_ops_per_sec_mean']
                    lines.append((machine, b['threads'],
                                  b['thread_ops_per_sec_min'] / mean,
                                  b['thread_ops_per_sec_max'] / mean,
                                  b['lock_handoffs_per_op']))
        report = '\n'.join(f'{m} {n:3d}: min {lo:.3f} max {hi:.3f} of the '
                            f'mean, {h:.4f} hand-offs an acquisition'
                            for m, n, lo, hi, h in lines)
        print('\n' + report)
        self.assertEqual(len(lines), 3 * 7, msg=report)
        for _, _, lo, hi, handoffs in lines:
            self.assertGreaterEqual(lo, 0.9, msg=report)
            self.assertLessEqual(hi, 1.1, msg=report)
            self.assertGreaterEqual(handoffs, 0.99, msg=report)

    def test_alone_a_lock_is_never_handed_over(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'one.json')
            run(['--sim=amd-48core-opteron-2010', '--cpus=1',
                 '--variants=spinlock,qspinlock,decb_spinlock,ia64_spinlock',
                 '--hold-ns=100', '--duration=0.002', '--warmup=0.0005',
                 f'--benchmark_out={out}'])
            for b in results(out)['benchmarks']:
                self.assertEqual(b['lock_handoffs_per_op'], 0, b['name'])


class TicketLockCollapse(unittest.TestCase):
    """The 48-core machine, a 400-cycle critical section and 50,000 cycles
    outside it at 2.4 GHz, against the Markov model on the same figures
    (c: the mean transfer between two of its CPUs).

    Up to 14 cores the two agree within 1.3% here.  Past that the
    simulator collapses at once (207k/s at 16 cores against the chain's
    741k/s; 62k/s at 48 against 131k/s): each hand-off waits for all k
    waiters' re-reads, not half of them, since the release queues at the
    line behind the reads still pending, and each arrival's xadd on the
    same word sends every spinner to read again (18 misses an
    acquisition at 16 cores).  The chain leaves both out; the paper found
    the hardware's collapse sharper than its model's.  So the chain is
    held to 20% below the collapse, and above it the simulator must
    collapse no later and no less.  docs/sim.md measures what each of the
    two costs.
    """

    MACHINE = 'amd-48core-opteron-2010'
    COUNTS = [1, 2, 4, 8, 12, 14, 16, 20, 24, 32, 40, 48]

    def test_curve_and_collapse_point(self):
        m = read_machine(self.MACHINE)
        doc, s_ns, a_ns = paper_locks(self.MACHINE, 'spinlock', self.COUNTS)
        c = mean_transfer(m)
        sim = {}
        for b in doc['benchmarks']:
            n = int(b['name'].rsplit('threads:', 1)[1])
            sim[n] = b['ops_per_sec'] / 1e9        # per ns
        model = ticket_markov.curve(self.COUNTS, a_ns, s_ns, c)
        report = '\n'.join(f'{n:3d} sim {sim[n] * 1e9:12.0f}/s markov '
                           f'{model[n] * 1e9:12.0f}/s '
                           f'{100 * (sim[n] / model[n] - 1):+6.1f}%'
                           for n in self.COUNTS)
        print(f'\nc = {c:.1f} ns, s = {s_ns:.1f} ns, a = {a_ns:.0f} ns\n'
              + report)
        peak_sim = ticket_markov.collapse_point(sim)
        peak_model = ticket_markov.collapse_point(model)
        self.assertGreaterEqual(peak_sim, 8, msg=report)
        self.assertLessEqual(peak_sim, peak_model, msg=report)
        for n in self.COUNTS:
            if n <= peak_sim:
                self.assertAlmostEqual(sim[n] / model[n], 1, delta=0.2,
                                       msg=report)
            else:
                self.assertLess(sim[n], 1.2 * model[n], msg=report)
                self.assertLess(sim[n], 0.8 * sim[peak_sim], msg=report)


class QueuedLockHolds(unittest.TestCase):
    """The second half of "Non-scalable locks are dangerous": on the same
    48-core machine and figures as TicketLockCollapse, the queued spinlock
    (6.18's, lib/kernel/qspinlock.h), each waiter spinning on its own MCS
    node, does not collapse: its rate at 48 cores is at least 0.8 of its
    peak, where the ticket lock's, in the same run, falls below 0.8 of
    its own (docs/sim.md: 0.97 and 0.19 when measured)."""

    MACHINE = 'amd-48core-opteron-2010'
    COUNTS = [1, 8, 16, 24, 32, 40, 48]

    def test_no_collapse(self):
        doc, _, _ = paper_locks(self.MACHINE, 'spinlock,qspinlock',
                                self.COUNTS)
        rate = {'spinlock': {}, 'qspinlock': {}}
        for b in doc['benchmarks']:
            variant = b['name'].split('/')[2]
            n = int(b['name'].rsplit('threads:', 1)[1])
            rate[variant][n] = b['ops_per_sec']
        report = '\n'.join(f'{n:3d} ticket {rate["spinlock"][n]:10.0f}/s '
                           f'queued {rate["qspinlock"][n]:10.0f}/s'
                           for n in self.COUNTS)
        print('\n' + report)
        for variant in rate:
            self.assertEqual(sorted(rate[variant]), self.COUNTS, msg=report)
        queued, ticket = rate['qspinlock'], rate['spinlock']
        self.assertGreaterEqual(queued[48], 0.8 * max(queued.values()),
                                msg=report)
        self.assertLess(ticket[48], 0.8 * max(ticket.values()), msg=report)
        self.assertGreater(queued[48], 2 * ticket[48], msg=report)


class AcrossInvocations(unittest.TestCase):
    """The same command, seed and --calibration file give the same
    counters in two processes: every figure a --sim run measures on the
    host is the file's, and the layout of the model's memory does not move
    (no address randomisation; each allocation on lines of its own,
    lib/sim/heap.c: the third run's longer --benchmark_out name changes
    what the heap held before the model's memory, and with it which
    allocations shared a line).  Left out of the comparison: cpu_time,
    sim_host_seconds and sim_events_per_host_sec, the host's time spent
    simulating; the context's date and load_avg, Google Benchmark's of
    the host."""
    HOST_TIME = ('cpu_time', 'sim_host_seconds', 'sim_events_per_host_sec')
    # the host's state: another kscale run may lift RT throttling meanwhile
    HOST_CONTEXT = ('date', 'load_avg', 'rt_throttling')

    def runs(self, binary, args, third='a-longer-name-2'):
        """The first run fills the file; the next two use it, the third
        writing to THIRD.json."""
        with tempfile.TemporaryDirectory() as d:
            cal = os.path.join(d, 'cal')
            docs = []
            for name in ('0', '1', third):
                out = os.path.join(d, f'{name}.json')
                p = subprocess.run(
                    [os.path.join(BUILD, 'bench', binary), *args,
                     '--sim-seed=3', f'--calibration={cal}',
                     f'--benchmark_out={out}'],
                    capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                docs.append(results(out))
            with open(cal) as f:
                names = [line.split()[0] for line in f
                         if not line.startswith('#')]
        first, second, third = docs
        self.assertEqual(counters(second, self.HOST_TIME),
                         counters(third, self.HOST_TIME))
        ctx = [{k: v for k, v in doc['context'].items()
                if k not in self.HOST_CONTEXT} for doc in (second, third)]
        self.assertEqual(ctx[0], ctx[1])
        self.assertEqual(second['context']['kscale_sim_aslr'],
                         'off (personality ADDR_NO_RANDOMIZE)')
        for name in ('sim.host.copy_ns_per_kib', 'sim.host.rdtsc_ns',
                     'sim.host.clock_ns', 'sim.host.tsc_per_ns'):
            self.assertIn(name, names)
        for name in names:
            if not name.startswith('sim.'):
                continue
            measured = first['context']['kscale_' + name]
            reused = second['context']['kscale_' + name]
            self.assertTrue(measured.endswith(' (measured)'), measured)
            self.assertEqual(reused, measured.replace('measured', 'reused'))
        return names

    def test_here(self):
        names = self.runs('primitives', [
            '--sim=here', '--variants=atomic,spinlock', '--cpus=1,2',
            '--hold-ns=100', '--duration=0.002', '--warmup=0.0005'])
        for name in ('sim.here.hit_ns', 'sim.here.atomic_ns',
                     'sim.here.line_ns_node', 'sim.here.mem_ns_local',
                     'sim.here.ctxsw_ns', 'sim.here.wake_ns',
                     'sim.here.wake_ns.idle_ns=2000', 'sim.here.block_ns'):
            self.assertIn(name, names)

    def test_named_machine(self):
        names = self.runs('shmem_fault', [
            '--sim=hpe-superdome-flex-512', '--variants=upstream',
            '--cpus=64', '--fault-work-ns=auto', '--pages=256',
            '--duration=0.005', '--warmup=0.002'])
        self.assertIn('sim.host.ghz', names)
        self.assertIn('shmem_fault.fault_work_ns', names)

    def test_pointer_hash(self):
        """real_lookup's dentry hash is of the dentries' addresses, which
        still follow the heap's history (an output name 14 bytes longer
        moved 16 CPUs of i_mutex from 202.6k to 202.2k lookups/s): the
        same command, the same name's length."""
        self.runs('real_lookup', [
            '--sim=hpe-superdome-flex-512', '--variants=i_mutex',
            '--dcache=1000', '--fs-lookup-ns=auto', '--cpus=16',
            '--duration=0.005', '--warmup=0.02'], third='2')


if __name__ == '__main__':
    unittest.main(argv=sys.argv[:1], verbosity=2)
