"""kscale compare: changelog-style before/after tables of benchmark results."""

import re
import sys
from dataclasses import dataclass

from . import cli, stats
from .results import (KscaleError, finite, group_runs, knob_text, load, simulated,
                      unit)

PROG = "kscale compare"
DEFAULT_METRICS = ["ops_per_sec"]
OPTIONS = "[--metric=NAME[,NAME...]] [--min-effect=PCT] [--format=text|markdown]"
USAGE = (f"{PROG} RESULTS.json --before=SELECTOR --after=SELECTOR {OPTIONS}\n"
         f"       {PROG} A.json B.json {OPTIONS}")
DESCRIPTION = """\
Compare two variants of one results file, or the same benchmarks in two
results files (A = before, B = after, paired by benchmark name).
A SELECTOR is a variant, optionally with knob values to compare across a
knob: --before=percpu/mounts:1 --after=percpu/mounts:2, or a thread count
(N, all, all*K: the allowed CPUs times K) to compare across counts:
--before=percpu/threads:all --after=percpu/threads:all*4.
Values are medians over repetitions, ± a robust spread (the median absolute
deviation x 1.4826 as % of the median); every row has a bootstrap 95%
confidence interval of its change; "~" marks a change that is not
significant (Mann-Whitney U, p adjusted across the table's rows by
Benjamini-Hochberg at a 5% false discovery rate, or smaller than
--min-effect), "?" a row with fewer than 4 repetitions a side (no verdict).
A simulated side whose seeds split in two shows their range ("bistable:
LO..HI over N seeds"), not a median; "[starved ...]" marks repetitions
where a thread did under 10% of the threads' mean.
The default metric is the model's primary one (kscale_primary_metric),
ops_per_sec where the runs have none of it (rwsem's locktest)."""


@dataclass
class Row:
    test: str
    before: object  # results.Run
    after: object


@dataclass
class Table:
    model: str
    sections: list  # [[Row, ...], ...], one section per (workload, knobs)


def build_parser():
    parser = cli.ArgumentParser(prog=PROG, usage=USAGE, description=DESCRIPTION,
                                allow_abbrev=False)
    parser.add_argument("results", nargs="+", metavar="RESULTS.json",
                        help="one results file (with --before/--after) or two (A B)")
    parser.add_argument("--before", metavar="SELECTOR",
                        help="baseline: VARIANT[/KNOB:VALUE...] (one file)")
    parser.add_argument("--after", metavar="SELECTOR",
                        help="new: VARIANT[/KNOB:VALUE...] (one file)")
    parser.add_argument("--metric", action="append", metavar="NAME[,NAME...]",
                        help="metric(s) to compare, repeatable (default: the model's "
                             "primary metric, else ops_per_sec)")
    parser.add_argument("--min-effect", type=float, default=stats.MIN_EFFECT_PCT,
                        metavar="PCT",
                        help="changes smaller than PCT %% of before are never "
                             f"significant (default {stats.MIN_EFFECT_PCT:g})")
    parser.add_argument("--format", choices=("text", "markdown"), default="text",
                        help="output format (default: text)")
    return parser


def row_label(run, with_variant=False, free=()):
    parts = [run.workload] + ([run.variant] if with_variant else [])
    knobs = tuple((k, v) for k, v in run.knobs if k not in free)
    parts += [knob_text(knobs)]
    if "threads" not in free:
        parts.append(f"threads:{run.threads}")
    return " ".join(p for p in parts if p)


def tables_from_sections(sections):
    """Group sections of rows into one Table per model."""
    tables = {}
    for section in sections:
        model = section[0].before.model
        tables.setdefault(model, Table(model, [])).sections.append(section)
    return list(tables.values())


def parse_selector(text):
    """'percpu' or 'percpu/mounts:2': a variant and knob values to match."""
    variant, *pairs = text.split("/")
    knobs = dict(pair.split(":", 1) for pair in pairs if ":" in pair)
    if not variant or len(knobs) != len(pairs):
        raise KscaleError(f"bad selector {text!r}: expected VARIANT or "
                          "VARIANT/KNOB:VALUE[/KNOB:VALUE...]")
    return variant, knobs


def thread_count(text, cpus):
    """threads:N, or threads:all / all*K: the run's allowed CPUs (times K)."""
    base, _, times = text.partition("*")
    try:
        count = cpus if base == "all" else int(base)
        return count * (int(times) if times else 1)
    except (TypeError, ValueError):
        raise KscaleError(f"threads:{text}: expected N, all or all*K "
                          "(all needs kscale_allowed_cpus in the context)") from None


def allowed_cpus(results):
    """The CPUs the run could use (context kscale_allowed_cpus), or None."""
    cpus = str(results.context.get("kscale_allowed_cpus"))
    return int(cpus) if re.fullmatch(r"[0-9]{1,9}", cpus) else None


def selected(run, selector, free, cpus=None):
    """The point of `run` with the selector's knobs left out, if it matches.

    `threads` selects a thread count (N, all, all*K), to compare one
    variant across counts: --before=percpu/threads:all --after=percpu/threads:all*4."""
    variant, knobs = selector
    knobs = dict(knobs)
    threads = knobs.pop("threads", None)
    if run.variant != variant or any(dict(run.knobs).get(k) != v for k, v in knobs.items()):
        return None
    if threads is not None and run.threads != thread_count(threads, cpus):
        return None
    return (run.model, run.workload,
            tuple((k, v) for k, v in run.knobs if k not in free),
            0 if "threads" in free else run.threads)


def variant_tables(results, before, after):
    """Rows pairing selector `before` with `after` at every common point.

    A selector is a variant, optionally with knob values
    (`percpu/mounts:1` against `percpu/mounts:2`); knobs named in either
    selector are matched, the others must be equal on both sides."""
    sides = [parse_selector(before), parse_selector(after)]
    for variant, _ in sides:
        if variant not in results.variants():
            raise KscaleError(f"{results.label}: no variant {variant!r} "
                              f"(variants: {', '.join(results.variants())})")
    free = set(sides[0][1]) | set(sides[1][1])
    cpus = allowed_cpus(results)
    points = [{}, {}]
    for run in results.runs.values():
        for side, selector in enumerate(sides):
            point = selected(run, selector, free, cpus)
            if point:
                points[side][point] = run
    dropped = [f"dropped: {len(only)} point{'s' * (len(only) != 1)} of "
               f"{name} with no {other} to pair"
               for only, name, other in ((set(points[0]) - set(points[1]), before, after),
                                         (set(points[1]) - set(points[0]), after, before))
               if only]
    # registration order (family_index), whatever order the runs ran in
    common = sorted(set(points[0]) & set(points[1]),
                    key=lambda p: (points[0][p].order, p[3]))
    sections = {}
    for point in common:
        before_run, after_run = points[0][point], points[1][point]
        label = row_label(before_run, free=free)
        if "threads" in free:
            label += f" threads:{before_run.threads}->{after_run.threads}"
        row = Row(label.strip(), before_run, after_run)
        sections.setdefault(point[:3], []).append(row)
    if not sections:
        raise KscaleError(f"{results.label}: {before!r} and {after!r} "
                          "share no benchmark point")
    return tables_from_sections(list(sections.values())), dropped


def one_point(results, before, after, metric, what):
    """The metric (None: the model's primary one) and the one row where
    BEFORE and AFTER pair up (a headline's point); a KscaleError starting
    with `what` where there is not exactly one."""
    metric = metric or default_metrics([results])[0]
    results.require_metric(metric)
    tables, _ = variant_tables(results, before, after)
    rows = [row for table in tables for section in table.sections for row in section]
    if len(rows) != 1:
        raise KscaleError(f"{what}: {len(rows)} points pair up "
                          f"({'; '.join(row.test for row in rows)}); a headline "
                          "needs one: run one, or pin knobs or threads in the "
                          f"selectors (e.g. {before}/threads:all)")
    return metric, rows[0]


def file_tables(a, b):
    """Rows pairing identically named benchmarks of two files; plus only-in notes."""
    common = [run for name, run in a.runs.items() if name in b.runs]
    if not common:
        raise KscaleError(f"{a.label} and {b.label} have no benchmark name in common")
    variant_order = {}
    for run in common:
        variant_order.setdefault(run.variant, len(variant_order))
    sections = []
    for runs in group_runs(common).values():
        runs.sort(key=lambda r: (variant_order[r.variant], r.threads))
        sections.append([Row(row_label(r, with_variant=True), r, b.runs[r.name])
                         for r in runs])
    notes = [f"only in {res.label}: {count} benchmark{'s' * (count != 1)}"
             for res, other in ((a, b), (b, a))
             if (count := sum(name not in other.runs for name in res.runs))]
    return tables_from_sections(sections), notes


def header(metric):
    """Column titles: bandwidths and profile shares as in the seed's tables."""
    sides = ["BW before", "BW after"] if metric.endswith("_MBps") else ["before", "after"]
    return (["Test"] + sides + ["pp change" if metric.endswith("_pct") else "% change"]
            + ["95% CI"])


# A repetition the machine disturbed: the hypervisor stole its CPUs, the
# host slept inside a model task's section (a page migrated under it), or
# the controller closed the window late.
STEAL_PCT_MAX = 1.0
SNAPSHOT_LATE_US_MAX = 1000.0


def disturbed_rep(r):
    """True if the machine disturbed repetition r's window."""
    return ((finite(r.get("steal_pct")) or 0) >= STEAL_PCT_MAX or
            (finite(r.get("host_sleeps")) or 0) > 0 or
            (finite(r.get("snapshot_late_us")) or 0) >= SNAPSHOT_LATE_US_MAX)


def disturbed(row):
    """'' or ' [disturbed k/n]': repetitions of either side over the limits."""
    reps = row.before.rows + row.after.rows
    k = sum(1 for r in reps if disturbed_rep(r))
    return f" [disturbed {k}/{len(reps)}]" if k else ""


# A thread that did under this share of the threads' mean is starved:
# its lock, or its CPU, went to the others.
STARVED_SHARE = 0.1


# A workload's thread classes (readers, writers) have their own spread.
CLASS_MIN = re.compile(r"(?!thread_)([a-z0-9_]+)_ops_per_sec_min")


def starved_classes(r):
    """The classes of repetition r with a thread under STARVED_SHARE of
    all threads' mean ({""} for a starved thread of a workload without
    classes); empty if none was starved."""
    mean = finite(r.get("thread_ops_per_sec_mean"))
    if not mean:
        return set()
    lows = {m.group(1): finite(v) for k, v in r.items()
            if (m := CLASS_MIN.fullmatch(k))}
    lows = lows or {"": finite(r.get("thread_ops_per_sec_min"))}
    return {c for c, low in lows.items() if low is not None and low < STARVED_SHARE * mean}


def starved_rep(r):
    """True if a thread of repetition r did under STARVED_SHARE of the mean."""
    return bool(starved_classes(r))


def starved(row):
    """'' or ' [starved before k/n, after k/n]': the repetitions of each
    side where a thread was starved (the sides with none left out), each
    followed by the starved classes where the workload has them:
    ' [starved before 3/3 (reader)]'."""
    sides = []
    for side, run in (("before", row.before), ("after", row.after)):
        per_rep = [starved_classes(r) for r in run.rows]
        if k := sum(1 for c in per_rep if c):
            classes = sorted(set().union(*per_rep) - {""})
            sides.append(f"{side} {k}/{len(run.rows)}"
                         + (f" ({', '.join(classes)})" if classes else ""))
    return f" [starved {', '.join(sides)}]" if sides else ""


def marks(row):
    """A row's marks after its label: [disturbed k/n], [starved ...]."""
    return disturbed(row) + starved(row)


def table_cells(sections, metric, min_effect, seeds=(False, False)):
    """Each section's rows as cells, the table's rows judged together;
    seeds: whether each side's repetitions are seeds (simulated)."""
    points = metric.endswith("_pct")
    rows = [row for section in sections for row in section]
    assessed = iter(stats.assess_table(
        [(r.before.values(metric), r.after.values(metric)) for r in rows],
        points, min_effect))
    body = []
    for section in sections:
        body.append([])
        for row in section:
            a = next(assessed)
            body[-1].append([row.test + marks(row),
                             stats.fmt_cell(row.before.values(metric), seeds[0]),
                             stats.fmt_cell(row.after.values(metric), seeds[1]),
                             stats.fmt_change(a, points), stats.fmt_ci(a, points)])
    return body


def column_widths(rows):
    """The width of each column of rows of cells."""
    return [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]


def aligned(cells, widths, left=1):
    """A text table line: the first `left` columns left-aligned, the rest
    right-aligned, two blanks apart."""
    cols = [c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths))]
    return "  ".join(cols).rstrip()


def rule(widths):
    """The dashes under a text table's header."""
    return "  ".join("-" * w for w in widths)


def markdown_row(cells):
    return "| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |"


def render_text(title, body, metric):
    header_row = header(metric)
    for section in body:
        for line in section:  # keep the digits of marked/unmarked changes aligned
            line[3] = line[3] if line[3].endswith(("~", "?")) else line[3] + "  "
    widths = column_widths([header_row] + sum(body, []))
    lines = [title, "", aligned(header_row, widths), rule(widths)]
    for i, section in enumerate(body):
        lines += [""] * (i > 0) + [aligned(c, widths) for c in section]
    return lines


def render_markdown(title, body, metric):
    lines = [f"**{title}**", "", markdown_row(header(metric)),
             "|:-----|-------:|------:|---------:|-------:|"]
    lines += [markdown_row(line) for section in body for line in section]
    return lines


def describe(results):
    """'file (kernel X, host Y)' from the run context, for two-file headers."""
    ctx = results.context
    extra = ", ".join(f"{what} {ctx[key]}" for what, key in
                      (("kernel", "kscale_kernel_release"), ("host", "host_name"))
                      if ctx.get(key))
    return f"{results.label} ({extra})" if extra else results.label


def rep_counts(tables, metrics):
    counts = set()
    for table in tables:
        for row in (r for s in table.sections for r in s):
            for metric in metrics:
                counts.update(n for n in (len(row.before.values(metric)),
                                          len(row.after.values(metric))) if n)
    return counts


def footnotes(tables, metrics, notes, min_effect):
    n = stats.span(rep_counts(tables, metrics))
    return [f"n = {n} repetitions per side; values are medians, ± is the median "
            "absolute deviation x 1.4826 as % of the median"] + legend(min_effect) + notes


def legend(min_effect):
    """What a row's 95% CI, its marks and [disturbed k/n] mean."""
    return [f"95% CI: the change of the medians over {stats.BOOTSTRAP_RESAMPLES} "
            "bootstrap resamples of each side's repetitions (percentile, seed "
            f"{stats.BOOTSTRAP_SEED}); n/a below {stats.MIN_REPS_FOR_TEST} repetitions",
            "~ = not significant: two-sided Mann-Whitney U p adjusted across each "
            "table's rows by Benjamini-Hochberg, q >= 0.05 (false discovery rate "
            f"5%), or a change under {min_effect:g}% of before (pp rows from 0: "
            f"{min_effect:g} pp); ? = no verdict: fewer than "
            f"{stats.MIN_REPS_FOR_TEST} repetitions on a side",
            f"[disturbed k/n]: k of the row's n repetitions (both sides) had "
            f"steal_pct >= {STEAL_PCT_MAX:g}%, host_sleeps > 0 or the window "
            f"closed >= {SNAPSHOT_LATE_US_MAX:g} us late (snapshot_late_us)",
            f"[starved before k/n, after k/n]: in k of a side's n repetitions a "
            f"thread did under {STARVED_SHARE:.0%} of the threads' mean "
            "(thread_ops_per_sec_min against _mean; --metric=thread_ops_per_sec_min "
            "shows it); (CLASS, ...): the classes it was of, where the threads have "
            "classes (CLASS_ops_per_sec_min against the threads' mean; "
            "--metric=CLASS_ops_per_sec_min shows it)",
            "bistable: LO..HI over n seeds: a simulated side whose seeds split in "
            "two at the widest gap between neighbours, the gap at least "
            f"{stats.BISTABLE_GAP_PCT:g}% of the median and {stats.BISTABLE_GAP_RATIO:g}x "
            "the range within either part: its range, not a median that is one "
            "state or between the two"]


def block(lines, markdown):
    """Lines followed by a blank one; markdown needs a blank line after each."""
    if not lines:
        return []
    return [x for line in lines for x in (line, "")] if markdown else list(lines) + [""]


def report(results, tables, metrics, markdown, min_effect, sides="", preamble=(),
           notes=(), seeds=(False, False)):
    """The whole output: preamble, one table per (metric, model), footnotes;
    seeds: whether each side's repetitions are seeds (simulated)."""
    render = render_markdown if markdown else render_text
    out = block(preamble, markdown)
    for metric in metrics:
        metric_unit = unit(metric, results)
        label = f"{metric} ({metric_unit})" if metric_unit else metric
        for table in tables:
            title = f"{table.model}: {label}" + (f", {sides}" if sides else "")
            body = table_cells(table.sections, metric, min_effect, seeds)
            out += render(title, body, metric) + [""]
    out += block(footnotes(tables, metrics, list(notes), min_effect), markdown)
    return "\n".join(out).rstrip("\n") + "\n"


def check_mode(args):
    if len(args.results) > 2:
        raise KscaleError("expected one or two results files (see --help)")
    if len(args.results) == 1 and not (args.before and args.after):
        raise KscaleError("one results file needs --before=VARIANT and --after=VARIANT")
    if len(args.results) == 2 and (args.before or args.after):
        raise KscaleError("--before/--after apply to one results file, not two")


# Context that changes what a number means: two files that differ here
# are not comparing like with like (keys ending in _auto are calibrations).
CONTEXT_KEYS = ("kscale_kernel_release", "kscale_cpu_model", "kscale_tsc_per_ns",
                "kscale_duration_s", "kscale_warmup_s",
                "kscale_window_until_counted_s", "kscale_cflags",
                "kscale_allowed_cpus", "kscale_preempt", "kscale_slice_us")


def context_warnings(a, b):
    """One line per context value that differs between two results files."""
    keys = [k for k in CONTEXT_KEYS if k in a.context or k in b.context]
    keys += sorted(k for k in set(a.context) | set(b.context)
                   if k.endswith("_auto") and k not in keys)
    return [f"warning: context differs: {k}: {a.context.get(k, 'absent')!s} "
            f"(before) vs {b.context.get(k, 'absent')!s} (after)"
            for k in keys if a.context.get(k) != b.context.get(k)]


def error_notes(loaded):
    """The failed runs a results file holds, which no table shows."""
    notes = []
    for res in loaded:
        for name, message in res.errors:
            notes.append(f"dropped: failed run in {res.label}: {name}: {message}")
    return notes


def default_metrics(loaded):
    """The model's primary metric, if every file records the same one and
    has it (a workload may not count it: rwsem's locktest has no MB/s)."""
    primary = {res.context.get("kscale_primary_metric") for res in loaded}
    if len(primary) != 1 or None in primary:
        return DEFAULT_METRICS
    metric = primary.pop()
    return [metric] if all(metric in res.metrics() for res in loaded) else DEFAULT_METRICS


def compare_command(argv):
    args = build_parser().parse_intermixed_args(argv)
    check_mode(args)
    loaded = [load(path) for path in args.results]
    metrics = cli.metric_list(args.metric, default_metrics(loaded))
    if args.min_effect < 0:
        raise KscaleError("--min-effect must be >= 0")
    for results in loaded:
        for metric in metrics:
            results.require_metric(metric)
    markdown = args.format == "markdown"
    notes = error_notes(loaded)
    if len(loaded) == 1:
        tables, dropped = variant_tables(loaded[0], args.before, args.after)
        text = report(loaded[0], tables, metrics, markdown, args.min_effect,
                      sides=f"before={args.before} after={args.after}",
                      notes=dropped + notes, seeds=[bool(simulated(loaded[0]))] * 2)
    else:
        tables, only = file_tables(*loaded)
        text = report(loaded[0], tables, metrics, markdown, args.min_effect,
                      preamble=[f"before: {describe(loaded[0])}",
                                f"after: {describe(loaded[1])}"]
                      + context_warnings(*loaded),
                      notes=only + notes,
                      seeds=[bool(simulated(res)) for res in loaded])
    sys.stdout.write(text)


def main(argv):
    return cli.run(PROG, compare_command, argv)
