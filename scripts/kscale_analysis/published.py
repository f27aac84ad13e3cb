"""kscale sim-validate --published: the simulator against published
many-core curves (configs/validation/README, docs/sim.md).

Each data set of DATA/datasets.tsv (its points in its own TSV) runs on
its machine file; DATA/series.tsv says, one line a published series, how
it runs: the bench, workload, model variant and flags, the CPU
placement, the results metric and the factor to the published unit, an
optional anchor (a knob the series' 1-thread point sets), and the
virtual window; or, with bench `-`, why it cannot run.  Every point runs
at --seeds seeds; printed per point are the published figure, the
simulated median and its interval over the seeds (min..max), the error
of the median and each curve's knee (the thread count of its peak, or
of its first point where it only falls), then one plot per data set.
The rows go to OUT/published.json (written whole or not at all).

An anchor is the work the model leaves out, set from the 1-thread point
as a 1-CPU profile would: the point is simulated with the knob at 0 and
at ANCHOR_PROBE_NS (seed 1), and the knob is the ns, a line through the
two, that gives the published rate.  Every other point is a prediction.

A series whose variant or workload the bench does not know (a variant
not built yet) is not run: one line says so and the others run.
"""

import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field

from . import plot, stats
from .cli import write_atomic
from .predict.machine import read_machine
from .results import KscaleError
from .simvalidate import rates, run

DATASET_COLUMNS = ['dataset', 'file', 'machine', 'kernel', 'workload']
SERIES_COLUMNS = ['dataset', 'series', 'bench', 'workload', 'variant',
                  'args', 'placement', 'metric', 'scale', 'anchor',
                  'duration', 'warmup', 'why']
CURVE_COLUMNS = ['series', 'threads', 'value', 'unit']
FAIRNESS_COLUMNS = ['series', 'class', 'class_threads', 'total_threads',
                    'min', 'mean', 'max', 'unit']
PLACEMENTS = ('compact', 'spread', 'cores')
# flags the runner sets itself
OWN_FLAGS = ('--sim', '--sim-seed', '--cpus', '--duration', '--warmup',
             '--variants', '--workloads', '--placement', '--calibration',
             '--benchmark_out', '--benchmark_repetitions', '--oversubscribe')
ANCHOR_PROBE_NS = 1000


@dataclass
class Curve:
    label: str      # the series, or a fairness table's "series class stat"
    metric: str     # the results metric it is read from
    points: dict    # threads -> published value
    unit: str


@dataclass
class Series:
    """A published series and how it runs: one bench run a seed, its
    curves (one, or a fairness table's six) read from it."""
    dataset: str
    name: str
    how: dict               # its series.tsv line
    where: str              # file:line of that line
    curves: list = field(default_factory=list)


@dataclass
class Dataset:
    name: str
    path: str
    machine: str            # the machine file's path
    kernel: str
    workload: str
    series: list = field(default_factory=list)


def read_tsv(path, columns, extra=()):
    """[(line number, {column: value})] of a tab-separated file whose
    header is columns (then any of extra, in order); every field
    non-empty."""
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except FileNotFoundError:
        raise KscaleError(f'{path}: no such file') from None
    except (OSError, ValueError) as e:
        raise KscaleError(f'{path}: cannot read: '
                          f'{getattr(e, "strerror", None) or e}') from None
    lines = text.split('\n')
    if lines[-1] == '':
        lines.pop()
    else:
        raise KscaleError(f'{path}:{len(lines)}: no newline at the end '
                          '(the file cut short?)')
    if not lines:
        raise KscaleError(f'{path}: empty, no header line')
    header = lines[0].split('\t')
    allowed = columns + list(extra)
    if header != allowed[:len(header)] or len(header) < len(columns):
        raise KscaleError(f'{path}:1: header {"/".join(header)!r}, expected '
                          f'{"/".join(columns)}'
                          + (f' [{"/".join(extra)}]' if extra else ''))
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split('\t')
        if len(cells) != len(header):
            raise KscaleError(f'{path}:{n}: {len(cells)} fields, the header '
                              f'has {len(header)}')
        if not all(c.strip() for c in cells):
            raise KscaleError(f'{path}:{n}: an empty field')
        rows.append((n, dict(zip(header, cells))))
    if not rows:
        raise KscaleError(f'{path}: no data line')
    return rows


def number(text, where, what, integer=False):
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        raise KscaleError(f'{where}: {what} {text!r} is not a '
                          f'{"whole " * integer}number') from None
    if not (value > 0 and value < float('inf')):
        raise KscaleError(f'{where}: {what} {text!r} is not positive')
    return value


def curve_points(path, rows):
    """{series: [(label, stat, {threads: value}, unit)]} of a curve's TSV."""
    out = {}
    for n, row in rows:
        where = f'{path}:{n}'
        threads = number(row['threads'], where, 'threads', integer=True)
        value = number(row['value'], where, 'value')
        curve = out.setdefault(row['series'], [(row['series'], None, {},
                                                row['unit'])])[0]
        _, _, points, unit = curve
        if row['unit'] != unit:
            raise KscaleError(f'{where}: unit {row["unit"]!r}, the series '
                              f'has {unit!r}')
        if threads in points:
            raise KscaleError(f'{where}: {row["series"]} at {threads} '
                              'threads given twice')
        points[threads] = value
    return out


def fairness_points(path, rows):
    """{series: [(label, (class, stat), {total threads: value}, unit)]}:
    a fairness table's per-thread min, mean and max of each class."""
    out = {}
    for n, row in rows:
        where = f'{path}:{n}'
        threads = number(row['total_threads'], where, 'total_threads',
                         integer=True)
        number(row['class_threads'], where, 'class_threads', integer=True)
        curves = out.setdefault(row['series'], [])
        if any(c[1][0] == row['class'] for c in curves):
            raise KscaleError(f'{where}: {row["series"]} {row["class"]} '
                              'given twice')
        for stat in ('min', 'mean', 'max'):
            curves.append((f'{row["series"]} {row["class"]} {stat}',
                           (row['class'], stat),
                           {threads: number(row[stat], where, stat)},
                           row['unit']))
    return out


def points_of(path):
    """A data set's TSV, a curve's or a fairness table's (its header
    says which)."""
    try:
        return curve_points(path, read_tsv(path, CURVE_COLUMNS,
                                           extra=['stdev']))
    except KscaleError as e:
        if f'{path}:1: header' not in str(e):
            raise
    try:
        return fairness_points(path, read_tsv(path, FAIRNESS_COLUMNS))
    except KscaleError as e:
        if f'{path}:1: header' not in str(e):
            raise
    raise KscaleError(f'{path}:1: the header is neither a curve\'s ('
                      f'{"/".join(CURVE_COLUMNS)}[/stdev]) nor a fairness '
                      f'table\'s ({"/".join(FAIRNESS_COLUMNS)})')


def check_how(path, n, row, root):
    """A series.tsv line's fields, or a one-line KscaleError."""
    where = f'{path}:{n}'
    if row['bench'] == '-':
        if row['why'] == '-':
            raise KscaleError(f'{where}: bench - (not run) needs a why')
        return
    if not row['bench'].replace('_', '').isalnum() or not os.path.isfile(
            os.path.join(root, 'bench', row['bench'] + '.c')):
        raise KscaleError(f'{where}: no bench {row["bench"]!r} (no '
                          f'bench/{row["bench"]}.c)')
    for key in ('scale', 'duration', 'warmup'):
        number(row[key], where, key)
    if row['placement'] not in PLACEMENTS:
        raise KscaleError(f'{where}: placement {row["placement"]!r} is not '
                          f'one of {", ".join(PLACEMENTS)}')
    if row['args'] != '-':
        for arg in row['args'].split():
            if not arg.startswith('--') or \
                    arg.split('=', 1)[0] in OWN_FLAGS:
                raise KscaleError(f'{where}: args: {arg!r} is not a flag '
                                  'of the bench\'s own (the runner sets '
                                  f'{", ".join(OWN_FLAGS)})')
    if row['anchor'] != '-' and not row['anchor'].replace('_', '').isalnum():
        raise KscaleError(f'{where}: anchor {row["anchor"]!r} is not a knob '
                          'name')


def load(data, root, only=None):
    """The data sets of DATA/datasets.tsv (those of --only), each checked
    whole, with its series; nothing run yet."""
    index = os.path.join(data, 'datasets.tsv')
    how_path = os.path.join(data, 'series.tsv')
    hows = {}
    for n, row in read_tsv(how_path, SERIES_COLUMNS):
        check_how(how_path, n, row, root)
        key = (row['dataset'], row['series'])
        if key in hows:
            raise KscaleError(f'{how_path}:{n}: {"/".join(key)} given twice')
        hows[key] = (n, row)
    datasets = []
    for n, row in read_tsv(index, DATASET_COLUMNS):
        if only and row['dataset'] not in only:
            continue
        if any(d.name == row['dataset'] for d in datasets):
            raise KscaleError(f'{index}:{n}: {row["dataset"]} given twice')
        if os.path.basename(row['file']) != row['file']:
            raise KscaleError(f'{index}:{n}: file {row["file"]!r} is not a '
                              f'file of {data}')
        machine = os.path.join(root, 'configs', 'machines',
                               row['machine'] + '.conf')
        try:
            read_machine(machine)
        except KscaleError as e:
            raise KscaleError(f'{index}:{n}: machine {row["machine"]!r}: '
                              f'{e}') from None
        path = os.path.join(data, row['file'])
        if not os.path.isfile(path):
            raise KscaleError(f'{index}:{n}: no data set file {path}')
        curves = points_of(path)
        d = Dataset(row['dataset'], path, machine, row['kernel'],
                    row['workload'])
        for name, found in curves.items():
            if (d.name, name) not in hows:
                raise KscaleError(f'{how_path}: no line for {d.name} series '
                                  f'{name!r} ({path})')
            line, how = hows[(d.name, name)]
            s = Series(d.name, name, how, f'{how_path}:{line}')
            for label, stat, points, unit in found:
                metric = how['metric']
                if stat:    # a fairness table's class (singular), statistic
                    metric = metric.replace(
                        '{class}', stat[0].removesuffix('s')).replace(
                        '{stat}', stat[1])
                s.curves.append(Curve(label, metric, points, unit))
            if how['anchor'] != '-' and (len(s.curves) != 1 or
                                         1 not in s.curves[0].points):
                raise KscaleError(f'{s.where}: anchor {how["anchor"]} needs '
                                  f'one curve with a 1-thread point ({path})')
            d.series.append(s)
        for (ds, name), (line, _) in hows.items():
            if ds == d.name and not any(s.name == name for s in d.series):
                raise KscaleError(f'{how_path}:{line}: {d.name} has no '
                                  f'series {name!r} ({path})')
        datasets.append(d)
    known = {ds for ds, _ in hows}
    for name in only or ():
        if not any(d.name == name for d in datasets):
            raise KscaleError(f'--only: no data set {name!r} in {index}')
    for d in datasets:
        known.discard(d.name)
    if not only and known:
        raise KscaleError(f'{how_path}: data set {sorted(known)[0]!r} is not '
                          f'in {index}')
    return datasets


def cores_first(machine):
    """will-it-scale's placement (its default, a task a core): the first
    thread of each core in core order, then each core's next."""
    tpc = machine.threads_per_core
    return [core * tpc + t for t in range(tpc)
            for core in range(machine.cpus // tpc)]


def bench_list(binary):
    """({workloads}, {variants}) that `binary --list` prints."""
    p = subprocess.run([binary, '--list'], capture_output=True, text=True)
    if p.returncode:
        raise KscaleError(f'{binary} --list failed (exit {p.returncode})', 1)
    seen = {'workload': set(), 'variant': set()}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in seen:
            seen[parts[0]].add(parts[1])
    return seen['workload'], seen['variant']


def runnable(build, datasets):
    """Series that can run here, and a line for each that cannot."""
    lists, runs, skipped = {}, [], []
    for d in datasets:
        for s in d.series:
            how = s.how
            if how['bench'] == '-':
                skipped.append(f'{d.name}/{s.name}: not run: {how["why"]}')
                continue
            binary = os.path.join(build, 'bench', how['bench'])
            if not os.access(binary, os.X_OK):
                raise KscaleError(f'no bench binary {binary} (build first)',
                                  1)
            if binary not in lists:
                lists[binary] = bench_list(binary)
            workloads, variants = lists[binary]
            if how['workload'] not in workloads:
                skipped.append(f'{d.name}/{s.name}: not run: workload '
                               f'{how["workload"]} unknown to {binary}')
            elif how['variant'] not in variants:
                skipped.append(f'{d.name}/{s.name}: not run: variant '
                               f'{how["variant"]} unknown to {binary}')
            else:
                runs.append((d, s, binary))
    return runs, skipped


def command(d, s, binary, threads, seed, out, knob=None, cal=None):
    """The bench's command line for series s at threads, one seed; every
    run of a data set shares its --calibration file, `cal` or its own
    beside out (host_figures())."""
    how = s.how
    machine = read_machine(d.machine)
    placement = how['placement']
    if placement == 'cores':
        placement = 'list:' + ','.join(map(str, cores_first(machine)))
    args = [] if how['args'] == '-' else how['args'].split()
    if knob:
        args.append(f'--{knob[0].replace("_", "-")}={knob[1]}')
    return [binary, f'--workloads={how["workload"]}',
            f'--variants={how["variant"]}', *args,
            f'--placement={placement}', f'--sim={d.machine}',
            f'--sim-seed={seed}',
            '--cpus=' + ','.join(map(str, sorted(threads))),
            f'--duration={how["duration"]}', f'--warmup={how["warmup"]}',
            '--calibration=' + (cal or os.path.join(os.path.dirname(out),
                                                    f'{d.name}.cal')),
            f'--benchmark_out={out}']


def simulated(paths, metric, scale):
    """{threads: [value in the published unit]} over results files."""
    table = rates(paths, metric)
    if len(table) != 1:
        raise KscaleError(f'{paths[0]}: {len(table)} points, expected one', 1)
    by_threads = next(iter(table.values()))
    return {n: [v * scale for v in values] for n, values in
            by_threads.items()}


HOST_PROBES = 3


def host_figures(d, s, binary, work, log):
    """The data set's --calibration file: the host figures --sim measures
    (a copy's ns a KiB, which a clear_page() or memcpy() costs; the
    clocks' reads), the fastest copy of HOST_PROBES probes, since another
    job on the host only ever slows one (here: 95-556 ns a KiB over
    three runs on a busy host)."""
    probes = []
    for i in range(HOST_PROBES):
        cal = os.path.join(work, f'{d.name}.probe{i}.cal')
        out = os.path.join(work, f'{d.name}.probe{i}.json')
        run(command(d, s, binary, [1], 1, out, cal=cal)[:-3] +
            ['--duration=0.0001', '--warmup=0', f'--calibration={cal}',
             f'--benchmark_out={out}'], log)
        with open(cal) as f:
            copy = [float(line.split()[1]) for line in f
                    if line.startswith('sim.host.copy_ns_per_kib ')]
        if len(copy) != 1:
            raise KscaleError(f'{cal}: no sim.host.copy_ns_per_kib', 1)
        probes.append((copy[0], cal))
    os.replace(min(probes)[1], os.path.join(work, f'{d.name}.cal'))


def anchor(d, s, binary, out, log):
    """The anchor knob's ns that puts the 1-thread point on the published
    one: two probes (0 and ANCHOR_PROBE_NS), a line through them."""
    knob, scale = s.how['anchor'], float(s.how['scale'])
    curve = s.curves[0]
    times = []
    for ns in (0, ANCHOR_PROBE_NS):
        path = os.path.join(out, f'{d.name}.{s.name}.anchor{ns}.json')
        run(command(d, s, binary, [1], 1, path, (knob, ns)), log)
        rate = statistics.median(simulated([path], curve.metric, scale)[1])
        times.append(1 / rate)
    per_ns = (times[1] - times[0]) / ANCHOR_PROBE_NS
    ns = round((1 / curve.points[1] - times[0]) / per_ns) if per_ns > 0 \
        else -1
    if ns < 0:
        print(f'sim-validate: {d.name}/{s.name}: the model alone is slower '
              f'at 1 thread ({1 / times[0]:.4g} {curve.unit}) than '
              f'published ({curve.points[1]:.4g}): {knob}=0, the 1-thread '
              'point a miss (see the host figures in '
              f'{os.path.join(out, d.name)}.cal)', file=sys.stderr)
        ns = 0
    return knob, ns


def knee(curve):
    """The thread count of the curve's peak ({threads: value}): where it
    only falls, its first point."""
    return max(sorted(curve), key=lambda n: curve[n])


def run_all(args, build, datasets):
    """[(data set, series, anchor or None, [(curve, {threads: [values]})])]
    of the series that ran, and a line for each that did not."""
    runs, skipped = runnable(build, datasets)
    for line in skipped:
        print(f'sim-validate: {line}', file=sys.stderr)
    work = os.path.join(args.out, 'published')
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, 'commands.log')
    open(log, 'w').close()
    results, probed = [], set()
    for d, s, binary in runs:
        if d.name not in probed:
            print(f'sim-validate: {d.name}: the host figures',
                  file=sys.stderr)
            host_figures(d, s, binary, work, log)
            probed.add(d.name)
        knob = None
        if s.how['anchor'] != '-':
            print(f'sim-validate: {d.name}/{s.name}: anchoring '
                  f'{s.how["anchor"]} at 1 thread', file=sys.stderr)
            knob = anchor(d, s, binary, work, log)
        threads = {n for c in s.curves for n in c.points}
        files = []
        for seed in range(1, args.seeds + 1):
            print(f'sim-validate: {d.name}/{s.name}: seed {seed}',
                  file=sys.stderr)
            path = os.path.join(work, f'{d.name}.{s.name}.sim{seed}.json')
            run(command(d, s, binary, threads, seed, path, knob), log)
            files.append(path)
        scale = float(s.how['scale'])
        results.append((d, s, knob, [(c, simulated(files, c.metric, scale))
                                     for c in s.curves]))
    return results, skipped


def rows_of(results):
    rows = []
    for d, s, knob, curves in results:
        for c, sim in curves:
            for n in sorted(c.points):
                values = sim.get(n)
                if not values:
                    raise KscaleError(f'{d.name}/{c.label}: no simulated '
                                      f'point at {n} threads', 1)
                med = stats.median(values)
                rows.append({
                    'dataset': d.name, 'series': c.label, 'threads': n,
                    'published': c.points[n], 'simulated': med,
                    'simulated_min': min(values),
                    'simulated_max': max(values), 'seeds': len(values),
                    'error_pct': 100 * (med / c.points[n] - 1),
                    'unit': c.unit,
                    'anchor': f'{knob[0]}={knob[1]}' if knob else None})
    return rows


def rows_for(rows, d, c):
    return [r for r in rows if (r['dataset'], r['series']) ==
            (d.name, c.label)]


def table(results, rows):
    lines = []
    for d, s, knob, curves in results:
        how = s.how
        lines += ['', f'## {d.name} / {s.name} ({curves[0][0].unit}; '
                  f'{read_machine(d.machine).name}, kernel {d.kernel})', '',
                  f'{how["bench"]} --workloads={how["workload"]} '
                  f'--variants={how["variant"]}'
                  f'{"" if how["args"] == "-" else " " + how["args"]}'
                  + (f' --{knob[0].replace("_", "-")}={knob[1]} (from the '
                     '1-thread point)' if knob else '') +
                  f'; placement {how["placement"]}; {rows[0]["seeds"]} '
                  f'seeds of {how["duration"]} virtual s after '
                  f'{how["warmup"]}', '',
                  '| series | threads | published | simulated | '
                  'min..max | error |', '|---|---|---|---|---|---|']
        knees = []
        for c, _ in curves:
            mine = rows_for(rows, d, c)
            for r in mine:
                lines.append(f'| {c.label} | {r["threads"]} | '
                             f'{stats.fmt_value(r["published"])} | '
                             f'{stats.fmt_value(r["simulated"])} | '
                             f'{stats.fmt_value(r["simulated_min"])}..'
                             f'{stats.fmt_value(r["simulated_max"])} | '
                             f'{r["error_pct"]:+.1f}% |')
            if len(mine) > 1:
                sim = {r['threads']: r['simulated'] for r in mine}
                knees.append(f'{c.label} knee: published '
                             f'{knee(c.points)}, simulated {knee(sim)}')
        lines += [''] + knees
    return '\n'.join(lines) + '\n'


def plots(results, rows, plot_dir):
    """One plot per data set: each curve's published points, simulated
    median and band; the paths printed."""
    figures = {}
    for d, s, _, curves in results:
        fig = figures.setdefault(d.name, plot.Plot(
            os.path.join(plot_dir, f'published-{plot.safe(d.name)}'),
            f'{d.name}: published (points), simulated (line: the median '
            f'of {rows[0]["seeds"]} seeds; band: min..max)',
            curves[0][0].unit, []))
        for c, _ in curves:
            mine = rows_for(rows, d, c)
            fig.series.append(plot.Band(
                c.label, [(r['threads'], r['published']) for r in mine],
                [(r['threads'], r['simulated'], r['simulated_min'],
                  r['simulated_max']) for r in mine]))
    plot.write(plot.find_gnuplot(), figures.values(), data=plot.band_data_text,
               script=plot.band_script_text)


def published_command(args, build, root):
    """Everything refused (the data, the flags) before the first run."""
    only = args.only.split(',') if args.only else None
    datasets = load(args.data, root, only)
    plot.find_gnuplot()
    results, skipped = run_all(args, build, datasets)
    rows = rows_of(results)
    print(table(results, rows), end='')
    if results:
        plots(results, rows, args.plot_dir)
    path = os.path.join(args.out, 'published.json')
    write_atomic(path, json.dumps({'seeds': args.seeds, 'rows': rows,
                                   'not_run': skipped}, indent=1) + '\n')
    print(path)
