"""kscale summary: each seed's headline figure beside this machine's.

`scripts/kscale run` calls it for a config with `headline` lines (the
tour, configs/default.conf).  A headline is one benchmark point of a
results file, a before and an after variant there, and a metric: its
table line shows what the seed reported (configs/seed-claims.tsv), the
after/before ratio of the medians here, the bootstrap 95% confidence
interval of that ratio and the verdict, as `kscale compare` judges a row;
the lines are judged together, as the rows of one table.  A simulated
results file (bench --sim) makes the column "Simulated", and --here=LABEL
adds the same ratio measured on this machine (configs/seeds-at-scale.conf);
--sensitivity adds, under the table, how the simulated ratio moved with
each estimated figure of the machine (`kscale sim-sensitivity`).  A
simulated figure's line says whether `kscale sim-validate` reproduced the
seed's ratio on this machine (--sim-validation): one figure a claim, its
source and its validation side by side.  --mechanism=METRIC shows the
counter of the claim's mechanism beside the ratio, before -> after.

Below the table, one line a claim simulated: the range of its simulated
ratio over what the seed left unsaid (--unknowns, configs/seed-unknowns.tsv:
each headline's knobs named there unpinned, every point of its results
inside the knobs' plausible ranges), the settings at its two ends with
their mechanism counters, and where the seed's own figure lies.
"""

import csv
import math
import os
import sys
from dataclasses import dataclass

from . import cli, compare, plot, sensitivity, stats
from .predict.seeds import parse_figure, validated
from .results import KscaleError, load, simulated

PROG = "kscale summary"
HEADLINE_SYNTAX = ("LABEL BEFORE AFTER --seed=SEED [--metric=NAME] [--here=LABEL] "
                   "[--sensitivity] [--mechanism=METRIC,...]")
USAGE = (f"{PROG} --claims=FILE [--unknowns=FILE] [--sim-validation=FILE] [--out=BASE] "
         f"[--plots=DIR] [--sensitivity-not-run] RESULTS_DIR '{HEADLINE_SYNTAX}'...")
CLAIM_COLUMNS = ("seed", "title", "reported", "machine")
UNKNOWN_COLUMNS = ("seed", "knob", "low", "high", "swept", "source")
CLAIM_HEADER = ["Claim", "Seed reported", "Simulated range", "Seed's figure",
                "Lowest at", "Highest at", "This machine"]
HEADER = ["Seed", "Bottleneck", "Before -> after", "Seed reported", "On",
          "Here", "95% CI", "Verdict"]
VERDICTS = {"": "significant", "~": "~ not significant", "?": "? no verdict"}
DESCRIPTION = """\
Print one table line per HEADLINE (a config's headline line): the point
of RESULTS_DIR/LABEL.json where BEFORE and AFTER pair up (exactly one),
what the seed reported (its line of the --claims file, a tab-separated
table with the columns seed, title, reported and machine), and here the
after/before ratio of the medians of the metric (default: the model's
primary one), its bootstrap 95% confidence interval and the verdict of
`kscale compare`. Where LABEL.json was simulated (bench --sim) the
column is "Simulated" and the ratio the simulated machine's; --here=HERE
adds a column "This machine": the same ratio at HERE.json's one point
where BEFORE and AFTER pair up at its most tasks (their threads:N
replaced), measured here;
--sensitivity adds a note of LABEL's ratio with each estimated machine
figure 30% lower and higher (LABEL.sensitivity.*.json, written by
`kscale sim-sensitivity`; --sensitivity-not-run: a note that it was not
run, `kscale run` without --sensitivity); --mechanism=METRIC,... a column of each
metric's medians before -> after at the point. A table with simulated lines has a column
"Validated": whether `kscale sim-validate`'s --sim-validation file (its
validation.json; none: not validated) reproduced the seed's ratio on this
machine, and by how much. With --unknowns=FILE (a tab-separated table with
the columns seed, knob, low, high, swept and source: each seed's knobs it
did not give, threads among them, and their plausible ranges) a second
table has a line per simulated claim: the lowest and highest simulated
ratio over the points of its headlines' results where the unknowns lie in
their ranges (a headline's selectors unpinned of them), the settings
that differ at those two ends, and whether the seed's figure (the first
word of its reported column) lies inside; with --plots=DIR, a claim
whose points span thread counts gets a plot of its ratio against them
beside the seed's figure (DIR/claim-SEED-METRIC.png, .svg, their names
printed). With --out=BASE the table is written to BASE.txt and,
in markdown, to BASE.md instead (temp files renamed into place), and
their names are printed."""


@dataclass
class Headline:
    label: str
    before: str  # selectors, as `kscale compare --before/--after` takes them
    after: str
    seed: str
    metric: object = None  # None: the model's primary metric
    here: object = None  # label of the same ratio measured on this machine
    sensitivity: bool = False  # a note of kscale sim-sensitivity's ratios
    mechanism: object = None  # the claim's mechanism counter, a metric


@dataclass
class Claim:
    seed: str
    title: str
    reported: str  # the seed's headline figure, as an after/before ratio
    machine: str


@dataclass
class Line:
    headline: Headline
    claim: Claim
    results: object  # results.Results
    row: object  # compare.Row: the one point
    metric: str
    here: object = None  # the same ratio's Line on this machine, or None
    sensitivity: object = None  # kscale sim-sensitivity's document, or None
    sensitivity_not_run: bool = False  # asked for, and kscale run was told not to
    points: list = None  # compare.Rows over the seed's unknowns (simulated)


@dataclass
class Unknown:
    """A line of configs/seed-unknowns.tsv: a knob the seed did not give."""
    knob: str
    low: str
    high: str

    def admits(self, value):
        """Whether a point's value lies in the plausible range: LOW..HIGH
        for numbers, one of the two otherwise."""
        try:
            return float(self.low) <= float(value) <= float(self.high)
        except ValueError:
            return value in (self.low, self.high)


def build_parser():
    parser = cli.ArgumentParser(prog=PROG, usage=USAGE, description=DESCRIPTION,
                                allow_abbrev=False)
    parser.add_argument("results_dir", metavar="RESULTS_DIR",
                        help="where the config's LABEL.json files are")
    parser.add_argument("headlines", nargs="+", metavar="HEADLINE",
                        help=f"'{HEADLINE_SYNTAX}', one argument each")
    parser.add_argument("--claims", required=True, metavar="FILE",
                        help="what each seed reported (configs/seed-claims.tsv)")
    parser.add_argument("--unknowns", metavar="FILE",
                        help="each seed's unknown knobs and their ranges "
                             "(configs/seed-unknowns.tsv)")
    parser.add_argument("--sim-validation", metavar="FILE",
                        help="kscale sim-validate's validation.json (default: "
                             "none, the simulated figures not validated)")
    parser.add_argument("--plots", metavar="DIR",
                        help="a plot a claim whose range spans thread counts: "
                             "DIR/claim-SEED-METRIC.png and .svg")
    parser.add_argument("--sensitivity-not-run", action="store_true",
                        help="the headlines' --sensitivity re-runs were not "
                             "made (kscale run without --sensitivity): say "
                             "so under the table, read none")
    parser.add_argument("--out", metavar="BASE",
                        help="write BASE.txt and BASE.md instead of printing")
    return parser


def parse_headline(text):
    """A headline from a config line's words after `headline`."""
    words, options = [], {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if key in ("--seed", "--metric", "--here", "--mechanism") and sep and value:
            options[key[2:]] = value
        elif word == "--sensitivity":
            options["sensitivity"] = True
        elif word.startswith("-"):
            raise KscaleError(f"headline {text!r}: unknown option {word!r} "
                              f"(expected {HEADLINE_SYNTAX})")
        else:
            words.append(word)
    if len(words) != 3 or "seed" not in options:
        raise KscaleError(f"headline {text!r}: expected {HEADLINE_SYNTAX}")
    return Headline(*words, **options)


def read_table(path, columns):
    """The (line number, row) of a tab-separated file after its header
    line, which must name `columns`; each row of that many non-empty
    fields."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise KscaleError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    if not rows or tuple(rows[0]) != columns:
        raise KscaleError(f"{path}: expected a header line of the tab-separated "
                          f"columns {', '.join(columns)}")
    for lineno, row in enumerate(rows[1:], start=2):
        if len(row) != len(columns) or not all(row):
            raise KscaleError(f"{path}:{lineno}: expected {len(columns)} "
                              "non-empty tab-separated fields")
        yield lineno, row


def read_claims(path):
    """{seed: Claim} from a tab-separated file with a header line."""
    return {row[0]: Claim(*row) for _, row in read_table(path, CLAIM_COLUMNS)}


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def read_unknowns(path):
    """{seed: [Unknown, ...]} from a tab-separated file with a header line."""
    unknowns = {}
    for lineno, row in read_table(path, UNKNOWN_COLUMNS):
        seed, knob, low, high = row[:4]
        lo, hi = number(low), number(high)
        if not all(math.isfinite(x) for x in (lo, hi) if x is not None) or \
                (lo is None) != (hi is None) or (lo is not None and not lo <= hi):
            raise KscaleError(f"{path}:{lineno}: low {low!r} and high {high!r}: "
                              "expected two numbers, low <= high, or two values")
        if any(u.knob == knob for u in unknowns.get(seed, ())):
            raise KscaleError(f"{path}:{lineno}: seed {seed}'s knob {knob} twice")
        unknowns.setdefault(seed, []).append(Unknown(knob, low, high))
    return unknowns


def setting(run):
    """A point's knob values, its thread count among them."""
    return dict(run.knobs, threads=str(run.threads))


def unknown_points(line, unknowns):
    """The rows of the line's results over its seed's unknowns: the
    selectors unpinned of the unknown knobs, the points where each lies
    in its range."""
    h = line.headline
    names = {u.knob for u in unknowns}
    before, after = ("/".join(part for part in side.split("/")
                              if part.partition(":")[0] not in names)
                     for side in (h.before, h.after))
    tables, _ = compare.variant_tables(line.results, before, after)
    rows = [row for table in tables for section in table.sections for row in section]
    return [row for row in rows
            if all(u.admits(setting(row.before).get(u.knob, u.low)) for u in unknowns)]


def headline_line(results_dir, headline, claims, here=False, unknowns=None,
                  sensitivity_run=True):
    """The headline's table line: its one point of LABEL.json (of its
    --here's with here)."""
    label = headline.here if here else headline.label
    what = f"headline {label} {headline.before} {headline.after}"
    claim = claims.get(headline.seed)
    if claim is None:
        raise KscaleError(f"{what}: no seed {headline.seed!r} in the claims "
                          f"(seeds: {', '.join(claims)})")
    results = load(os.path.join(results_dir, f"{label}.json"))
    before, after = headline.before, headline.after
    if here:
        # the seed's scale pinned in the selectors is not this machine's:
        # here's is its most tasks
        most = max(run.threads for run in results.runs.values())
        before, after = unpinned(before, most), unpinned(after, most)
    metric, row = compare.one_point(results, before, after, headline.metric, what)
    line = Line(headline, claim, results, row, metric)
    if headline.mechanism and not here:
        for metric in filter(None, headline.mechanism.split(",")):
            results.require_metric(metric)
    if simulated(results) and not here:
        seed_unknowns = (unknowns or {}).get(headline.seed)
        line.points = unknown_points(line, seed_unknowns) if seed_unknowns else [row]
    if headline.sensitivity and not here:
        if not simulated(results):
            raise KscaleError(f"{what}: --sensitivity: {label}.json was not "
                              "simulated")
        if not sensitivity_run:
            line.sensitivity_not_run = True
        else:
            line.sensitivity = sensitivity.read(results_dir, label, before, after)
            if line.sensitivity is None:
                raise KscaleError(f"{what}: --sensitivity: none written (kscale "
                                  "sim-sensitivity, run by `kscale run`)")
    if headline.here and not here:
        line.here = headline_line(results_dir, headline, claims, here=True)
        if simulated(line.here.results):
            raise KscaleError(f"{what}: --here={headline.here}: "
                              f"{headline.here}.json was simulated; --here "
                              "is this machine's measurement")
    return line


def unpinned(selector, threads):
    """The selector with threads:THREADS for its threads:N."""
    return "/".join([part for part in selector.split("/")
                     if not part.startswith("threads:")] + [f"threads:{threads}"])


def fmt_ratio(change):
    """A % change as the after/before ratio: +91.6 -> '1.92x', +2234 -> '23.3x'."""
    ratio = 1 + change / 100
    return f"{ratio:.{2 if ratio < 10 else 1 if ratio < 100 else 0}f}x"


def fmt_ratio_ci(assessment):
    """'1.44x..2.03x', or 'n/a' where there is no interval."""
    if assessment.ci is None:
        return "n/a"
    lo, hi = assessment.ci
    return f"{fmt_ratio(lo)}..{fmt_ratio(hi)}"


def where(line):
    """'2 CPUs', or '32 tasks on 2 CPUs' when the tasks outnumber the CPUs."""
    cpus = compare.allowed_cpus(line.results)
    if simulated(line.results):
        cpus = int(line.results.context.get("kscale_sim_cpus", 0)) or None
    before, after = line.row.before.threads, line.row.after.threads
    tasks = str(before) if before == after else f"{before}->{after}"
    if cpus is None or max(before, after) <= cpus:
        return f"{tasks} CPU{'s' * (tasks != '1')}"
    return f"{tasks} tasks on {cpus} CPUs"


def assess(lines):
    """Each line's stats.Assessment, the lines judged together."""
    return stats.assess_table(
        [(line.row.before.values(line.metric), line.row.after.values(line.metric))
         for line in lines])


def bistable_ratio(line):
    """'bistable: 1.01x..1.33x over 5 seeds' where a simulated side's seeds
    split in two (stats.bistable): the ratio between each side's states
    (its two parts' medians, or its median); None otherwise."""
    before, after = (line.row.before.values(line.metric),
                     line.row.after.values(line.metric))
    if not simulated(line.results) or not (stats.bistable(before) or
                                           stats.bistable(after)):
        return None
    ratios = [a / b for b in stats.states(before) for a in stats.states(after) if b]
    if not ratios:
        return None
    return (f"bistable: {fmt_plain_ratio(min(ratios))}..{fmt_plain_ratio(max(ratios))} "
            f"over {stats.span({len(before), len(after)})} seeds")


def ratio_at(line, a):
    """'1.92x at 2 CPUs' and the point's marks; a bistable point's range."""
    if a.change is None:
        return "n/a"
    ratio = bistable_ratio(line) or fmt_ratio(a.change)
    return f"{ratio} at {where(line)}" + compare.marks(line.row)


def result_column(lines):
    """'Here', 'Simulated', or 'Result' for a table of both."""
    sims = {bool(simulated(line.results)) for line in lines}
    return "Result" if len(sims) > 1 else "Simulated" if sims == {True} else "Here"


def header(lines):
    cells = list(HEADER)
    cells[HEADER.index("Here")] = result_column(lines)
    if any(line.headline.mechanism for line in lines):
        cells.append("Mechanism")
    if any(line.here for line in lines):
        cells.append("This machine")
    if any(simulated(line.results) for line in lines):
        cells.append("Validated")
    return cells


def validation_cell(line, validation):
    """Whether kscale sim-validate reproduced the seed's ratio here: 'yes,
    +2.8% here at 2 threads', 'no: ...'; '-' for a line measured here."""
    if not simulated(line.results):
        return "-"
    ok, why = validated(line.headline.seed, validation)
    if not ok:
        return f"no: {why}"
    entry = (validation["seeds"].get(line.headline.seed) or
             validation["seeds"][line.headline.seed.split("-")[0]])
    return f"yes, {entry['error_pct']:+.1f}% here at {entry['threads']} threads"


def table_cells(lines, validation):
    """A row of cells per line, the lines judged together."""
    mixed = result_column(lines) == "Result"
    heres = [line.here for line in lines if line.here]
    here_of = dict(zip(map(id, heres), assess(heres)))
    body = []
    for line, a in zip(lines, assess(lines)):
        h = line.headline
        result = ratio_at(line, a)
        if mixed and simulated(line.results):
            result += " (sim)"
        cells = [h.seed, line.claim.title, f"{h.before} -> {h.after}",
                 line.claim.reported, line.claim.machine, result,
                 fmt_ratio_ci(a), VERDICTS[a.mark]]
        if "Mechanism" in header(lines):
            cells.append(mechanism_cell(line, line.row))
        if heres:
            cells.append(ratio_at(line.here, here_of[id(line.here)])
                         if line.here else "-")
        if "Validated" in header(lines):
            cells.append(validation_cell(line, validation))
        body.append(cells)
    return body


def medians(row, metric):
    return [stats.median(side.values(metric)) for side in (row.before, row.after)]


def ratio_of(row, metric):
    """The after/before ratio of a row's medians; None without one."""
    before, after = medians(row, metric)
    return after / before if after is not None and before else None


def mechanism_cell(line, row):
    """'stat_lock_wait_pct 85.2 -> 0.1' at a row, each metric of
    --mechanism; '-' without."""
    if not line.headline.mechanism:
        return "-"
    cells = []
    for metric in line.headline.mechanism.split(","):
        before, after = ("n/a" if v is None else stats.fmt_value(v)
                         for v in medians(row, metric))
        cells.append(f"{metric} {before} -> {after}")
    return ", ".join(cells)


def claim_points(lines):
    """{seed: [(line, row, ratio), ...]}: each simulated claim's points
    over its unknowns, the seeds in the order they first appear."""
    claims = {}
    for line in lines:
        if line.points is not None:
            claims.setdefault(line.headline.seed, []).extend(
                (line, row, ratio) for row in line.points
                if (ratio := ratio_of(row, line.metric)) is not None)
    return claims


def differing(points):
    """Each point's settings and what tells the claim's points apart: its
    results file where they come from several, the knobs that differ."""
    settings = [dict(setting(row.before), run=line.headline.label)
                for line, row, _ in points]
    keys = [k for k in dict.fromkeys(k for s in settings for k in s)
            if len({s.get(k) for s in settings}) > 1]
    return settings, keys


def named(settings, keys):
    return ", ".join(f"{k} {settings.get(k, '-')}" for k in keys)


def describe(points):
    """A function naming a point by what tells the claim's points apart."""
    settings, keys = differing(points)
    return lambda i: named(settings[i], keys) or "the one setting"


def seed_figure(reported):
    """The seed's figure (its reported column's first word) as (low,
    high); None where it is not a ratio."""
    try:
        return parse_figure(reported.split()[0])
    except (ValueError, IndexError):
        return None


def claim_plots(lines, directory):
    """A plot.Plot a claim whose points differ in thread count: its
    simulated ratio against the threads, a line a setting of its other
    unknowns (the bootstrap 95% CI as error bars), and the seed's figure
    across (its range as error bars)."""
    plots = []
    for seed, points in claim_points(lines).items():
        settings, keys = differing(points)
        if "threads" not in keys:
            continue
        others = [k for k in keys if k != "threads"]
        series = {}
        for (line, row, ratio), s in zip(points, settings):
            lo, hi = ratio_ci(line, row) or (ratio, ratio)
            series.setdefault(named(s, others) or "simulated", []).append(
                (int(s["threads"]), ratio, lo, hi))
        curves = [(name, sorted(pts)) for name, pts in sorted(series.items())]
        claim = points[0][0].claim
        figure = seed_figure(claim.reported)
        if figure:
            low, high = figure
            xs = sorted({t for _, pts in curves for t, *_ in pts})
            curves.append((f"the seed's {claim.reported.split()[0]}",
                           [(t, (low + high) / 2, low, high) for t in xs]))
        h, metric = points[0][0].headline, points[0][0].metric
        plots.append(plot.Plot(
            os.path.join(directory, f"claim-{plot.safe(seed)}-{metric}"),
            f"{seed}, simulated over the seed's unknowns\n"
            f"{h.before.split('/')[0]} -> {h.after.split('/')[0]}, {metric}\n"
            "error bars: 95% CI; the seed's range",
            "after/before ratio", curves))
    return plots


def ratio_ci(line, row):
    """The bootstrap 95% interval of a row's after/before ratio, or None."""
    ci = stats.bootstrap_ci(*(side.values(line.metric) for side in (row.before, row.after)))
    return ci and tuple(1 + c / 100 for c in ci)


def placement(reported, points):
    """Where the seed's figure (its reported column's first word) lies
    against the points' ratios: 'inside' their range, 'inside the CIs'
    of its ends (the range widened by each point's 95% interval), or
    'below: 0.31x the lowest' CI."""
    figure = seed_figure(reported)
    if figure is None:
        return "- (not a ratio)"
    seed_low, seed_high = figure
    ratios = [ratio for _, _, ratio in points]
    if seed_high >= min(ratios) and seed_low <= max(ratios):
        return "inside"
    cis = [ratio_ci(line, row) or (ratio, ratio) for line, row, ratio in points]
    low, high = min(ci[0] for ci in cis), max(ci[1] for ci in cis)
    if seed_high < low:
        return f"below: {fmt_plain_ratio(seed_high / low)} the lowest CI"
    if seed_low > high:
        return f"above: {fmt_plain_ratio(seed_low / high)} the highest CI"
    return "inside the CIs"


def fmt_end(points, i, name):
    line, row, ratio = points[i]
    mechanism = mechanism_cell(line, row)
    return (f"{fmt_plain_ratio(ratio)} at {name(i)}" +
            ("" if mechanism == "-" else f"; {mechanism}"))


def claims_table(lines):
    """A row of cells a simulated claim."""
    body = []
    for seed, points in claim_points(lines).items():
        claim = next(line.claim for line in lines if line.headline.seed == seed)
        here = next((line.here for line in lines
                     if line.headline.seed == seed and line.here), None)
        here_cell = "-" if here is None else \
            f"{fmt_plain_ratio(ratio_of(here.row, here.metric))} at {where(here)}"
        if not points:
            body.append([seed, claim.reported, "no point in the unknowns' ranges",
                         "-", "-", "-", here_cell])
            continue
        name = describe(points)
        lo = min(range(len(points)), key=lambda i: points[i][2])
        hi = max(range(len(points)), key=lambda i: points[i][2])
        low, high = points[lo][2], points[hi][2]
        count = f"{len(points)} setting{'s' * (len(points) != 1)}"
        body.append([seed, claim.reported,
                     f"{fmt_plain_ratio(low)}..{fmt_plain_ratio(high)} over {count}",
                     placement(claim.reported, points),
                     fmt_end(points, lo, name), fmt_end(points, hi, name), here_cell])
    return body


def machine(results):
    """'Intel(R) Xeon(R) Processor, 2 CPUs, kernel 6.18.44' from a context."""
    ctx = results.context
    parts = [ctx.get("kscale_cpu_model"),
             ctx.get("kscale_allowed_cpus") and f"{ctx['kscale_allowed_cpus']} CPUs",
             ctx.get("kscale_kernel_release") and f"kernel {ctx['kscale_kernel_release']}"]
    return ", ".join(p for p in parts if p) or "this machine"


def repetitions(lines):
    return stats.span({n for line in lines
                       for n in (len(line.row.before.values(line.metric)),
                                 len(line.row.after.values(line.metric)))})


def footnotes(lines):
    metrics = ", ".join(f"{line.headline.seed} {line.metric} of {line.headline.label}.json"
                        for line in lines)
    every = lines + [line.here for line in lines if line.here]
    notes = compare.error_notes({line.results.label: line.results
                                 for line in every}.values())
    out = [f"{result_column(lines)}: the after/before ratio of the medians of "
           f"n = {repetitions(lines)} repetitions per side: {metrics}"]
    sims = sorted({f"{line.headline.label}.json on {simulated(line.results)}"
                   for line in lines if simulated(line.results)})
    if sims:
        out.append("Simulated: in virtual time on configs/machines/ (docs/sim.md), "
                   "each repetition its own seed: " + ", ".join(sims))
        out.append("Validated: whether `kscale sim-validate` (this machine measured "
                   "and simulated as `here`, at 1-2 CPUs) reproduced the seed's ratio "
                   "within its tolerance: a check of the simulator on this machine, "
                   "not of the seed's machine at the seed's scale")
        out.append("Simulated bistable: LOx..HIx: a side's seeds split in two "
                   "(bistable, below): the after/before ratios between the sides' "
                   "states, the medians of a bistable side's two parts and the "
                   "other side's median")
    heres = [line.here for line in lines if line.here]
    if heres:
        out.append(f"This machine: the same ratio measured on {machine(heres[0].results)}, "
                   f"n = {repetitions(heres)} repetitions per side: "
                   + ", ".join(sorted({f"{line.headline.here}.json" for line in lines
                                       if line.here})))
    if claim_points(lines):
        out.append("Per claim: the simulated after/before ratio of the medians at "
                   "every point of the claim's headlines where the knobs the seed "
                   "left unsaid lie in their plausible ranges (--unknowns; a claim "
                   "without: its headlines' points), its lowest and highest with "
                   "what differs between the points, and where the seed's figure "
                   "lies: inside the range, or above or below it")
    out += [sensitivity_note(line) for line in lines
            if line.sensitivity or line.sensitivity_not_run]
    return out + ["Seed reported: the seed's own figure, as the same after/before ratio, "
                  "and the machine it was measured on"] + \
        compare.legend(stats.MIN_EFFECT_PCT) + notes


def fmt_plain_ratio(value):
    return "n/a" if value is None else fmt_ratio(100 * (value - 1))


def sensitivity_note(line):
    """'Sensitivity of 004 ...: wake_ns 8000 0.93x/0.97x, ...' from the
    document kscale sim-sensitivity wrote, or that it was not run."""
    if line.sensitivity_not_run:
        return (f"Sensitivity of {line.headline.seed}: not run (`kscale run "
                "--sensitivity` re-runs its simulated ratio with each estimated "
                f"figure of the machine {sensitivity.FACTOR:.0%} lower and "
                "higher)")
    doc = line.sensitivity
    base, factor, figures = doc["base"], doc["factor"], doc["figures"]

    def move(figure):
        return max((abs(r - base) for r in (figure["low"], figure["high"])
                    if r is not None and base is not None), default=0)

    if figures:
        moves = ", ".join(f"{f['figure']} {f['value']:g} {fmt_plain_ratio(f['low'])}/"
                          f"{fmt_plain_ratio(f['high'])}" for f in figures)
        top = max(figures, key=move)
        if move(top) > 0:
            moves += f"; it moves most with {top['figure']}"
    else:
        moves = "none of its figures is an estimate"
    ci = doc.get("base_ci")
    within = (f", 95% CI {fmt_plain_ratio(ci[0])}..{fmt_plain_ratio(ci[1])}: a move "
              "inside it is the seeds'" if ci else "")
    return (f"Sensitivity of {line.headline.seed}: its simulated ratio re-run "
            f"({fmt_plain_ratio(base)}{within}) with each estimated figure of "
            f"{doc['machine']} x{1 - factor:g} / x{1 + factor:g}: {moves}")


def render(head, body, markdown):
    """A table's lines, and a blank one."""
    if markdown:
        out = [compare.markdown_row(head), "|" + "|".join(":---" for _ in head) + "|"]
        return out + [compare.markdown_row(cells) for cells in body] + [""]
    widths = compare.column_widths([head] + body)
    out = [compare.aligned(head, widths, left=len(head)), compare.rule(widths)]
    return out + [compare.aligned(cells, widths, left=len(head)) for cells in body] + [""]


def report(lines, markdown, validation):
    if result_column(lines) == "Simulated":
        title = "kscale summary: each seed's headline simulated on its machine"
    else:
        title = f"kscale summary: each seed's headline on {machine(lines[0].results)}"
    out = [f"**{title}**" if markdown else title, ""]
    out += render(header(lines), table_cells(lines, validation), markdown)
    claims = claims_table(lines)
    if claims:
        title = "Per claim: the simulated range over what the seed left unsaid"
        out += [f"**{title}**" if markdown else title, ""]
        out += render(CLAIM_HEADER, claims, markdown)
    out += compare.block(footnotes(lines), markdown)
    return "\n".join(out).rstrip("\n") + "\n"


def summary_command(argv):
    args = build_parser().parse_intermixed_args(argv)
    claims = read_claims(args.claims)
    unknowns = read_unknowns(args.unknowns) if args.unknowns else None
    lines = [headline_line(args.results_dir, parse_headline(text), claims,
                           unknowns=unknowns,
                           sensitivity_run=not args.sensitivity_not_run)
             for text in args.headlines]
    validation = args.sim_validation and cli.read_json_if_any(args.sim_validation)
    plots = claim_plots(lines, args.plots) if args.plots else []
    if not args.out:
        sys.stdout.write(report(lines, False, validation))
    else:
        for ext, markdown in ((".txt", False), (".md", True)):
            try:
                cli.write_atomic(args.out + ext, report(lines, markdown, validation))
            except OSError as e:
                raise KscaleError(f"cannot write {args.out}{ext}: "
                                  f"{e.strerror or e}") from None
            print(args.out + ext)
    if plots:
        plot.write(plot.find_gnuplot(), plots, args.plots)


def main(argv):
    return cli.run(PROG, summary_command, argv)
