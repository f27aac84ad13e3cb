"""kscale predict's report: the validation, prediction and seed tables as
text and markdown."""

from .. import compare, stats, summary
from .network import slowdown
from .validate import summary_checks


def fmt_pct(value):
    return "n/a" if value is None else f"{value:+.1f}%"


def fmt_x(ratio):
    """An after/before ratio as the summary prints one: 1.92x, 23.3x, 150x."""
    return summary.fmt_ratio((ratio - 1) * 100)


def fmt_threads(threads, cpus):
    return str(threads) if threads <= cpus else f"{threads} on {cpus} CPUs"


def labels(variants):
    """Row labels: the variant, with the workload and the knobs that
    differ between the rows of its model."""
    out = {}
    for model in {v.params.key[0] for v in variants}:
        keys = [v.params.key for v in variants if v.params.key[0] == model]
        workloads = len({k[1] for k in keys}) > 1
        varying = {name for k in keys for name, value in k[3]
                   if any(dict(o[3]).get(name) != value for o in keys)}
        for k in keys:
            parts = [k[1]] * workloads + [k[2]]
            parts += [f"{n}:{v}" for n, v in k[3] if n in varying]
            out[k] = " ".join(parts)
    return out


def check_text(checks, cpus):
    return ", ".join(f"{fmt_pct(c.error)} at {fmt_threads(c.threads, cpus)}"
                     for c in checks) or "none measured"


PER_VISIT_SHOWN = 2  # classes a validation line shows: the most waited for


def per_visit_text(check):
    """'i_mutex wait 148.0k/192.6k hold 149.9k/141.4k': ns per visit, the
    model's and the measured (profiled rows; the wait beyond the 1-thread
    one), of the classes waited for most."""
    p = check.prediction

    def ns(value):
        return "-" if value is None else f"{value:.0f}" if abs(value) < 1000 else \
            stats.fmt_value(value)

    def pair(model, measured):
        return f"{ns(model)}/{ns(measured)}"

    shown = sorted((name for name in check.per_visit if name in p.waits),
                   key=lambda name: -max(p.waits[name], check.per_visit[name][0] or 0))
    return "; ".join(f"{name} wait {pair(p.waits[name], check.per_visit[name][0])} "
                     f"hold {pair(p.holds[name], check.per_visit[name][1])}"
                     for name in shown[:PER_VISIT_SHOWN])


def model_parts(model, variants, label, here, target, counts):
    metric = variants[0].params.metric
    per_cpu = metric if metric.endswith("_per_cpu") else f"{metric} per CPU"
    rows = []
    for v in variants:
        for c in v.checks:
            rows.append([label[v.params.key], fmt_threads(c.threads, here.cpus),
                         f"{len(c.measured)} {c.source}", c.timed, stats.fmt_cell(c.measured),
                         stats.fmt_value(c.prediction.value), fmt_pct(c.error),
                         per_visit_text(c)])
    parts = []
    title = f"{model}: validation on {here.name}, {metric} predicted from 1 thread"
    if rows:
        parts.append(("table", title, ["Variant", "Threads", "Runs", "T1", "Measured",
                                       "Predicted", "Error",
                                       "ns a visit, most waited (model/measured)"],
                      rows, 4))
    else:
        parts.append(("para", [f"{title}: no count other than 1 measured"]))
    rows = [[label[v.params.key], check_text(summary_checks(v), here.cpus)]
            + [stats.fmt_value(p.per_cpu) + "*" * p.spinning for p in v.table]
            for v in variants]
    parts.append(("table", f"{model}: predicted {per_cpu} on {target.name}",
                  ["Variant", "Validation"] + [str(n) for n in counts], rows, 2))
    fits = [(label[v.params.key], v.fit) for v in variants]
    refusals = {f for _, f in fits if isinstance(f, str)}
    lines = []
    if len(refusals) == 1 and all(isinstance(f, str) for _, f in fits):
        lines.append(refusals.pop() + usl_note(variants, here))
    else:
        for name, f in fits:
            lines.append(f"{f}" if isinstance(f, str) else
                         f"USL {name}: lambda {stats.fmt_value(f.lam)} ops/s, sigma "
                         f"{f.sigma:.4g}, kappa {f.kappa:.3g}, peak "
                         + (f"at {f.peak:.0f} CPUs" if f.peak else "none"))
    parts.append(("para", lines))
    return parts


def usl_note(variants, here):
    """' (32 tasks on 2 CPUs left out: ...)' when oversubscribed counts were."""
    over = sorted({n for v in variants for n in set(v.series.plain) | set(v.series.profiled)
                   if n > here.cpus})
    if not over:
        return ""
    return (f" ({', '.join(map(str, over))} tasks on {here.cpus} CPUs left out: "
            "more threads than CPUs)")


def seed_parts(lines, here):
    rows, notes = [], []
    for line in lines:
        s = line.scale
        valid = "; ".join(f"{v.params.key[2]} {check_text(summary_checks(v), here.cpus)}"
                          for v in (line.before, line.after) if v)
        figure = s.figure + ("" if s.figure.endswith("x") else "x")
        if line.simulated is not None and line.model != "sim":
            notes.append(f"{s.seed}: simulated {fmt_x(line.simulated)} on {s.machine.name}, "
                         f"not the figure: {line.sim_unused}")
        if line.model == "sim" and line.mva is not None:
            notes.append(f"{s.seed}: the MVA gave {fmt_x(line.mva)}")
        if line.predicted is None:
            rows.append([s.seed, f"{s.before} -> {s.after}", s.machine.name,
                         str(s.threads), "n/a", "-", figure, "n/a", valid or "n/a",
                         "no prediction"])
            notes.append(f"{s.seed}: {line.problem}")
            continue
        q = line.quotient
        off = max(q, 1 / q)
        rows.append([s.seed, f"{s.before} -> {s.after}", s.machine.name, str(s.threads),
                     fmt_x(line.predicted), line.model, figure,
                     f"{q:.2f}", valid, "within 2x" if off <= 2 else f"off by {off:.1f}x"])
    for line in lines:
        if line.scale.note:
            notes.append(f"{line.scale.seed}: {line.scale.note}")
    title = "seeds: predicted after/before on the seed's machine at its thread count"
    header = ["Seed", "Before -> after", "Machine", "Threads", "Predicted", "Model", "Seed",
              "Quotient", "Validation", "Verdict"]
    return [("table", title, header, rows, 4)], notes


def machine_lines(here, target, seeds, measured):
    lines = [f"{here.describe()} (line transfers: the median of the profiled files'; "
             "each variant is validated on its own file's)"]
    lines += [f"  {name}: line transfer ns {latencies}" for name, latencies in measured]
    lines.append(f"table machine: {target.describe()}")
    for m in {s.scale.machine.name: s.scale.machine for s in seeds}.values():
        lines.append(f"seed machine {m.describe()}; CPU work x{slowdown(here, m):.2f} "
                     "(clock here / there)" if here.ghz and m.ghz else
                     f"seed machine {m.describe()}; CPU work as here (no clock to scale by)")
    return lines


FOOTNOTES = [
    "Predicted: exact mean value analysis of a closed network per variant, from the "
    "medians of its 1-thread profiled rows: threads as customers; the private time "
    "(1-thread time per operation less every hold) and sleeping I/O as a delay; each "
    "instance of a shared class a FIFO centre with demand visits x (hold + lines x "
    "L(N) x (m-1)/m) / instances, L(N) the mean line transfer latency between the m "
    "CPUs of N compactly placed threads; the CPU a load-dependent centre of C servers "
    "above C threads (docs/predict.md)",
    "Error: predicted against the measured median at that count on this machine, "
    "predicted from the 1-thread rows alone; Measured: median ± robust spread "
    "(median absolute deviation x 1.4826 as % of the median); Runs: repetitions, "
    "plain or profiled; T1: the 1-thread rows timing the operation (plain ones "
    "where there are any: the profile's counting slows a loop); Validation: "
    "the rows like T1's where measured",
    "* spinning waiters, more threads than CPUs: the model gives the CPU they spin on "
    "to others (optimistic)",
    "Model: MVA, or sim where a simulated run (bench --sim) on the seed's machine "
    "has the seed's point and kscale sim-validate reproduced that seed's ratio on "
    "this machine (its validation.json); the figure is then the simulated ratio of the "
    "medians; Validation stays the MVA's",
    "Quotient: predicted over the seed's figure (1.00 inside a range); within 2x when "
    "0.5 <= quotient <= 2",
]


def report_parts(model_tables, seed_lines, label, here, target, counts, notes, files,
                 measured):
    parts = [("para", [f"kscale predict: {len(sum(model_tables.values(), []))} variants "
                       f"from the 1-thread profiles in {', '.join(files)}"]
              + machine_lines(here, target, seed_lines, measured))]
    for model, variants in model_tables.items():
        parts += model_parts(model, variants, label, here, target, counts)
    seed_notes = []
    if seed_lines:
        tables, seed_notes = seed_parts(seed_lines, here)
        parts += tables
    parts.append(("para", FOOTNOTES + notes + seed_notes))
    return parts


def render(parts, markdown):
    out = []
    for part in parts:
        if part[0] == "para":
            out += compare.block(part[1], markdown)
            continue
        _, title, header, rows, left = part
        if markdown:
            out += [f"**{title}**", "", compare.markdown_row(header),
                    "|" + "|".join(":---" if i < left else "---:"
                                   for i in range(len(header))) + "|"]
            out += [compare.markdown_row(r) for r in rows] + [""]
        else:
            widths = compare.column_widths([header] + rows)
            out += [title, "", compare.aligned(header, widths, left), compare.rule(widths)]
            out += [compare.aligned(r, widths, left) for r in rows] + [""]
    return "\n".join(out).rstrip("\n") + "\n"
