"""kscale sim-validate: the simulator against this machine (docs/sim.md).

Every model variant of every model's bench, at 1 and 2 CPUs (the seed 003
disk line at 16 tasks a CPU), measured here and simulated with
--sim=here in the same session, with the same calibrated work (one
--calibration file, measured by the native run and reused by the
simulated ones).  `here` is measured once, by a first simulated run, and
written as a machine file that every simulated run then reads, so that
all of them simulate one machine.

A variant passes when its simulated rate is within --rate-tol (20%) of
the measured one (medians: native over --repetitions runs, simulated
over --seeds seeds); a seed's before/after ratio passes when the
simulated ratio is within --ratio-tol (15%) of the measured one.  Prints
both tables (markdown), writes them with every results file into
--out, and exits 1 if anything failed.

With --published it runs the published many-core data sets instead
(configs/validation/, scripts/kscale_analysis/published.py).
"""

import json
import os
import statistics
import subprocess
import sys
import time

from . import cli
from .cli import write_atomic
from .compare import parse_selector
from .models import MODELS
from .predict.machine import SIM_FIGURES
from .results import KscaleError, load_merged

# a model's knobs, after its model variants; a model not here runs at its
# defaults
MODEL_ARGS = {
    'mnt_writers': ['--mounts=1,2', '--path-work-ns=auto'],
    'shmem_fault': ['--fault-work-ns=auto', '--anon-work-ns=auto'],
    'real_lookup': ['--dcache=10000', '--fs-lookup-ns=auto'],
    'rwsem': ['--workloads=fio', '--rw=randrw'],
}
# seed 003's headline: lookups that sleep on 5 disks, 16 tasks a CPU
DISKS = ('real_lookup_disks', 'real_lookup',
         ['--variants=i_mutex,sharded', '--disks=5', '--fs-io-depth=1',
          '--dcache=1000', '--fs-io-us=100', '--fs-lookup-ns=auto',
          '--oversubscribe'])

# seed, run, before, after (variant[/knob:value...]), threads
SEEDS = [
    ('000', 'mnt_writers', 'atomic/mounts:1', 'percpu/mounts:1', 2),
    ('000-pernode', 'mnt_writers', 'none/mounts:1', 'pernode/mounts:1', 2),
    ('000-worst', 'mnt_writers', 'none/mounts:2', 'percpu_seed/mounts:2', 2),
    ('002', 'shmem_fault', 'stat_lock', 'nosbinfo', 2),
    ('003', 'real_lookup_disks', 'i_mutex', 'sharded', 32),
    ('003-immutable', 'real_lookup', 'i_mutex', 'immutable', 2),
    ('004', 'rwsem', 'v4.6', 'reader_owned', 2),
]

# what --sim=here measures: every figure but the clock, read from cpuinfo
HERE_KEYS = [k for k in SIM_FIGURES if k != 'ghz']


def parse_args(argv):
    p = cli.ArgumentParser(
        prog='kscale sim-validate',
        description='The simulator (--sim=here) against this machine: every '
                    'model variant\'s rate at 1 and 2 CPUs and each seed\'s '
                    'before/after ratio, measured and simulated in one '
                    'session (docs/sim.md).')
    p.add_argument('--build', default=None, help='build directory')
    p.add_argument('--out', default='results/sim-validate',
                   help='directory for the results files and tables '
                        '(default: results/sim-validate)')
    p.add_argument('--repetitions', type=int, default=5,
                   help='native repetitions a point (default: 5)')
    p.add_argument('--seeds', type=int, default=3,
                   help='simulated seeds a point (default: 3)')
    p.add_argument('--duration', type=float, default=0.25,
                   help='native window, s (default: 0.25)')
    p.add_argument('--sim-duration', type=float, default=0.02,
                   help='simulated window, virtual s (default: 0.02)')
    p.add_argument('--warmup', type=float, default=0.1,
                   help='warm-up before each window, native and virtual, '
                        's (default: 0.1: the dcache fills)')
    p.add_argument('--rate-tol', type=float, default=20,
                   help='a variant\'s rate, %% (default: 20)')
    p.add_argument('--ratio-tol', type=float, default=15,
                   help='a seed\'s ratio, %% (default: 15)')
    p.add_argument('--only', default=None,
                   help='runs to do, comma-separated (' +
                        ', '.join(MODELS + [DISKS[0]]) + '); with '
                        '--published, data sets')
    p.add_argument('--published', action='store_true',
                   help='the published many-core data sets of --data on '
                        'their machines instead: per point published, '
                        'simulated (median, min..max over --seeds), error '
                        'and knee; a plot per data set; OUT/published.json '
                        '(each series\' virtual window is its series.tsv\'s)')
    p.add_argument('--data', default=None,
                   help='with --published: the data sets\' directory '
                        '(default: configs/validation)')
    p.add_argument('--plot-dir', default='plots/sim-validate',
                   help='with --published: where the plots go (default: '
                        'plots/sim-validate)')
    args = p.parse_args(argv)
    if args.repetitions < 1 or args.seeds < 1:
        p.error('--repetitions and --seeds are at least 1')
    return args


def model_variants(build):
    """{model: [its model variants]}, in its table's order, as the torture
    lists them (the bench's --list has its host variants too)."""
    p = subprocess.run([os.path.join(build, 'torture', 'torture'), '--list'],
                       stdout=subprocess.PIPE, text=True)
    if p.returncode:
        raise KscaleError(f'torture --list failed (exit {p.returncode})', 1)
    out = {}
    for line in p.stdout.splitlines():
        model, variant = line.split()[0].split('/')
        out.setdefault(model, []).append(variant)
    return out


def plan(build, only):
    """The runs, (label, bench, arguments): each model's bench over its
    model variants, and seed 003's disks; those --only names if given."""
    variants = model_variants(build)
    runs = [(name, name, ['--variants=' + ','.join(variants[name])] +
             MODEL_ARGS.get(name, [])) for name in MODELS]
    runs.append(DISKS)
    if only:
        names = only.split(',')
        unknown = [n for n in names if n not in [r[0] for r in runs]]
        if unknown or len(set(names)) != len(names):
            raise KscaleError(f'--only={only}: ' + (
                f'no run {unknown[0]!r}' if unknown else 'a run given twice') +
                f' (runs: {", ".join(r[0] for r in runs)})')
        runs = [r for r in runs if r[0] in names]
    return runs


def run(cmd, log):
    with open(log, 'a') as f:
        f.write(' '.join(cmd) + '\n')
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=f)
    if p.returncode:
        raise KscaleError(f'{cmd[0]} failed (exit {p.returncode}): see {log}',
                          1)


HERE_PROBES = 3


def measure_here(bench, out, log):
    """`here`, measured HERE_PROBES times (a transfer between two vCPUs
    took 40 ns in most probes here and 167 ns in one), each figure the
    median, as a machine file."""
    probes = []
    for i in range(HERE_PROBES):
        probe = os.path.join(out, f'here-probe{i}.json')
        run([bench, '--sim=here', '--cpus=1', '--variants=atomic',
             '--duration=0.0001', '--warmup=0', f'--benchmark_out={probe}'],
            log)
        with open(probe) as f:
            probes.append(json.load(f)['context'])
    ctx = dict(probes[0])
    for key in HERE_KEYS:
        values = [p['kscale_sim_' + key] for p in probes]
        if all(v != 'none' for v in values):
            ctx['kscale_sim_' + key] = str(statistics.median(
                float(v) for v in values))
    ghz = None
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('cpu MHz'):
                ghz = float(line.split(':')[1]) / 1000
                break
    if not ghz:
        raise KscaleError('this machine\'s clock is unknown (/proc/cpuinfo '
                          'has no cpu MHz)', 1)
    src = (f'measured by kscale sim-validate (--sim=here, '
           f'lib/harness/sim/here.c) on {ctx.get("host_name", "this host")} '
           f'at {ctx.get("date", time.strftime("%F %T"))}')
    lines = ['# this machine, measured by kscale sim-validate', 'name = here']
    for key in HERE_KEYS:
        lines.append(f'{key} = {ctx["kscale_sim_" + key]}')
        lines.append(f'source.{key} = {src}')
    curves = [p['kscale_sim_wake_curve'] for p in probes]
    if all(c != 'none' for c in curves):
        points = [[tuple(map(float, x.split(':'))) for x in c.split(',')]
                  for c in curves]
        curve = ','.join(f'{pts[0][0]:.0f}:'
                         f'{statistics.median(p[i][1] for p in points):.0f}'
                         for i, pts in enumerate(zip(*points)))
        lines.append(f'wake_curve = {curve}')
        lines.append(f'source.wake_curve = {src}')
    lines.append(f'ghz = {ghz}')
    lines.append('source.ghz = /proc/cpuinfo cpu MHz: work_scale is 1')
    # its block's time as an ipc: the named machine charges insns / (ipc x ghz)
    block_ns = statistics.median(float(p['kscale_sim_block_ns'])
                                 for p in probes)
    insns = float(ctx['kscale_sim_insns_per_block'])
    lines.append(f'ipc = {insns / (block_ns * ghz):.4f}')
    lines.append(f'source.ipc = {src}: {insns} instructions a block over '
                 f'{block_ns} ns a block (the median) at {ghz} GHz')
    lines.append('smt_throughput = none')
    lines.append('source.smt_throughput = none: --sim=here measures no '
                 'SMT siblings')
    path = os.path.join(out, 'here.conf')
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return path, ctx


def rates(paths, metric='ops_per_sec'):
    """{point: {threads: [values]}} over the results files (repetitions and
    seeds pooled), a point being VARIANT/KNOB:VALUE... as a selector of
    kscale compare writes it, the placement left out."""
    out = {}
    for run in load_merged(paths).runs.values():
        point = '/'.join([run.variant] + [f'{k}:{v}' for k, v in run.knobs
                                          if k != 'placement'])
        out.setdefault(point, {})[run.threads] = run.values(metric)
    return out


def find(table, selector, threads):
    """The median at threads of the one point the selector matches."""
    variant, knobs = parse_selector(selector)
    hits = []
    for point, by_threads in table.items():
        v, k = parse_selector(point)
        if v == variant and threads in by_threads and \
                all(k.get(key) == value for key, value in knobs.items()):
            hits.append(by_threads[threads])
    return statistics.median(hits[0]) if len(hits) == 1 else None


def main(argv):
    return cli.run('kscale sim-validate', validate_command, argv)


def validate_command(argv):
    """Everything refused (the runs, the build) before the first file."""
    args = parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.realpath(__file__))))
    build = args.build or os.path.join(root, 'build')
    if args.published:
        from . import published
        args.data = args.data or os.path.join(root, 'configs', 'validation')
        return published.published_command(args, build, root)
    if args.data:
        raise KscaleError('--data is --published\'s')
    runs = plan(build, args.only)
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, 'commands.log')
    open(log, 'w').close()
    here, ctx = measure_here(os.path.join(build, 'bench', 'primitives'),
                             args.out, log)
    native, sim = {}, {}
    for label, bench, extra in runs:
        binary = os.path.join(build, 'bench', bench)
        cal = os.path.join(args.out, f'{label}.cal')
        counts = ['--cpus=16,32'] if label == DISKS[0] else ['--cpus=1,2']
        out = os.path.join(args.out, f'{label}.native.json')
        print(f'sim-validate: {label}: measuring', file=sys.stderr)
        run([binary] + extra + counts +
            [f'--calibration={cal}', f'--duration={args.duration}',
             f'--warmup={args.warmup}',
             f'--benchmark_repetitions={args.repetitions}',
             '--benchmark_enable_random_interleaving=true',
             f'--benchmark_out={out}'], log)
        native[label] = rates([out])
        files = []
        for seed in range(1, args.seeds + 1):
            print(f'sim-validate: {label}: simulating, seed {seed}',
                  file=sys.stderr)
            out = os.path.join(args.out, f'{label}.sim{seed}.json')
            run([binary] + extra + counts +
                [f'--calibration={cal}', f'--sim={here}',
                 f'--sim-seed={seed}', f'--duration={args.sim_duration}',
                 f'--warmup={args.warmup}',
                 f'--benchmark_out={out}'], log)
            files.append(out)
        sim[label] = rates(files)
    if report(args, runs, native, sim, ctx):
        raise KscaleError('some of the simulator\'s figures are off '
                          f'(see {os.path.join(args.out, "validation.md")})', 1)


def pct(a, b):
    return 100 * (a / b - 1) if b else float('inf')


def report(args, runs, native, sim, ctx):
    lines = ['# kscale sim-validate', '',
             f'Machine: {ctx.get("host_name", "?")}, '
             f'{ctx.get("num_cpus", "?")} CPUs, kernel '
             f'{ctx.get("kscale_kernel", "?")}; `here`: line '
             f'{ctx["kscale_sim_line_ns_node"]} ns, hit '
             f'{ctx["kscale_sim_hit_ns"]} ns, atomic '
             f'{ctx["kscale_sim_atomic_ns"]} ns, memory '
             f'{ctx["kscale_sim_mem_ns_local"]} ns, wake '
             f'{ctx["kscale_sim_wake_ns"]} ns, switch '
             f'{ctx["kscale_sim_ctxsw_ns"]} ns.', '',
             f'Native: median of {args.repetitions} runs of '
             f'{args.duration} s; simulated: median of {args.seeds} seeds '
             f'of {args.sim_duration} virtual s.', '',
             f'## Rates (ops/s), pass within {args.rate_tol:g}%', '',
             '| run | point | threads | measured | simulated | error | |',
             '|---|---|---|---|---|---|---|']
    failed = 0
    for label, _, _ in runs:
        for key in sorted(native[label]):
            for n in sorted(native[label][key]):
                m = statistics.median(native[label][key][n])
                s = sim[label].get(key, {}).get(n)
                if s is None:
                    lines.append(f'| {label} | {key} | {n} | {m:.4g} | - | '
                                 f'- | FAIL: not simulated |')
                    failed += 1
                    continue
                s = statistics.median(s)
                err = pct(s, m)
                ok = abs(err) <= args.rate_tol
                failed += not ok
                lines.append(f'| {label} | {key} | {n} | '
                             f'{m:.4g} | {s:.4g} | {err:+.1f}% | '
                             f'{"ok" if ok else "FAIL"} |')
    lines += ['', f'## Seeds\' before/after, pass within {args.ratio_tol:g}%',
              '', '| seed | run | before -> after | threads | measured | '
              'simulated | error | |', '|---|---|---|---|---|---|---|---|']
    labels = {r[0] for r in runs}
    seeds = {}
    for seed, label, before, after, n in SEEDS:
        if label not in labels:
            continue
        mb, ma = (find(native[label], v, n) for v in (before, after))
        sb, sa = (find(sim[label], v, n) for v in (before, after))
        if None in (mb, ma, sb, sa):
            lines.append(f'| {seed} | {label} | {before} -> {after} | {n} | '
                         f'- | - | - | FAIL: missing |')
            failed += 1
            seeds[seed] = {'ok': False, 'why': 'missing'}
            continue
        rm, rs = ma / mb, sa / sb
        err = pct(rs, rm)
        ok = abs(err) <= args.ratio_tol
        failed += not ok
        seeds[seed] = {'ok': ok, 'measured': rm, 'simulated': rs,
                       'error_pct': err, 'threads': n}
        lines.append(f'| {seed} | {label} | {before} -> {after} | {n} | '
                     f'{rm:.3f}x | {rs:.3f}x | {err:+.1f}% | '
                     f'{"ok" if ok else "FAIL"} |')
    lines += ['', f'{failed} failed.']
    text = '\n'.join(lines) + '\n'
    write_atomic(os.path.join(args.out, 'validation.md'), text)
    # for kscale predict: which seeds' ratios the simulator reproduces here
    write_atomic(os.path.join(args.out, 'validation.json'), json.dumps(
        {'machine': ctx.get('kscale_cpu_model', '?'),
         'ratio_tol_pct': args.ratio_tol, 'seeds': seeds}, indent=1) + '\n')
    print(text, end='')
    return failed
