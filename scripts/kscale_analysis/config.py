"""kscale run's configs (configs/*.conf, format: configs/default.conf):
loaded, includes followed, into a list of steps, every line checked as it
loads, so that a run finds its problems before anything runs."""

import os
import re
import subprocess
from dataclasses import dataclass, field

from . import compare, plot
from .compare import parse_selector
from .predict import command as predict
from .results import KscaleError
from .summary import HEADLINE_SYNTAX, read_claims, read_unknowns

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
ALL_TIMES = re.compile(r"all\*[0-9]+")
MAX_LINE = 4096
DIRECTIVES = "include, run, compare, plot, predict or headline"
# the runner's own options of a run line (the others are the binary's)
RUNNER_OPTIONS = ("--target-ci=", "--max-repetitions=")


def rel(path):
    """path relative to the current directory when it is below it."""
    prefix = pwd() + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


def pwd():
    """The current directory as the shell that started us names it."""
    shell = os.environ.get("PWD", "")
    try:
        if shell.startswith("/") and os.path.samefile(shell, "."):
            return shell
    except OSError:
        pass
    return os.getcwd()


def config_path(root, spec, directory):
    """A NAME is configs/NAME.conf, anything with a '/' or ending in .conf
    a path, relative to directory."""
    if "/" not in spec and not spec.endswith(".conf"):
        return f"{root}/configs/{spec}.conf"
    return spec if spec.startswith("/") else f"{directory}/{spec}"


def selector_file_name(selector):
    """A selector in a file name: percpu/mounts:2 -> percpu_mounts-2,
    percpu/threads:all*4 -> percpu_threads-allx4."""
    return selector.replace("/", "_").replace("*", "x").replace(":", "-")


def positive(text):
    return re.fullmatch(r"[1-9][0-9]*", text) is not None


@dataclass
class Step:
    where: str  # "file:line"
    config: str  # the name of the config holding it
    directive: str  # run, compare, plot or predict
    args: list


@dataclass
class Configs:
    """The steps of configs loaded in order, each config once."""
    root: str
    steps: list = field(default_factory=list)
    loaded: set = field(default_factory=set)
    stack: list = field(default_factory=list)  # the include chain being loaded
    labels: dict = field(default_factory=dict)  # (config, label) -> where it runs
    run_args: dict = field(default_factory=dict)  # (config, label) -> BINARY ARGS...
    headlines: dict = field(default_factory=dict)  # config -> its headline lines
    headline_wheres: dict = field(default_factory=dict)  # config -> their "file:line"s
    claims_path: str = ""
    unknowns_path: str = ""

    def __post_init__(self):
        self.claims_path = f"{self.root}/configs/seed-claims.tsv"
        self.unknowns_path = f"{self.root}/configs/seed-unknowns.tsv"

    def load(self, path, origin=""):
        """Append the steps of the config at path; origin ("file:line: "
        or "") says who asked."""
        if not os.path.isfile(path):
            raise KscaleError(f"{origin}unknown config {rel(path)}")
        path = os.path.realpath(path)
        if path in self.stack:
            chain = " -> ".join(rel(f) for f in self.stack + [path])
            raise KscaleError(f"{origin}include loop: {chain}")
        if path in self.loaded:
            return
        self.loaded.add(path)
        self.stack.append(path)
        name = os.path.basename(path)
        if name.endswith(".conf") and name != ".conf":
            name = name[:-len(".conf")]
        with open(path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        nr_steps = 0  # None once a line is read
        for lineno, raw in enumerate(lines, start=1):
            where = f"{rel(path)}:{lineno}"
            line = raw.replace(b"\0", b"").decode("utf-8", "surrogateescape")
            if len(line) > MAX_LINE:
                raise KscaleError(f"{where}: a line of over {MAX_LINE} characters")
            line = line.partition("#")[0]
            line = line[:-1] if line.endswith("\r") else line
            words = re.split(r"[ \t]+", line.strip(" \t"))
            if words != [""]:
                self.line(path, name, where, words[0], words[1:])
                nr_steps = None
        if nr_steps is not None:
            raise KscaleError(f"{origin}{rel(path)}: an empty config (no include, "
                              "run, compare, plot, predict or headline line)")
        self.stack.pop()

    def line(self, path, name, where, directive, args):
        if directive == "include":
            if len(args) != 1:
                raise KscaleError(f"{where}: expected: include CONFIG")
            self.load(config_path(self.root, args[0], os.path.dirname(path)), f"{where}: ")
            return
        if directive == "run":
            if len(args) < 2:
                raise KscaleError(f"{where}: expected: run LABEL BINARY [ARGS...]")
            label = args[0]
            check_name(where, "label", label)
            check_name(where, "binary", args[1])
            check_run_options(where, label, args[2:])
            if (name, label) in self.labels:
                raise KscaleError(f"{where}: label '{label}' already run at "
                                  f"{self.labels[name, label]}")
            self.labels[name, label] = where
            self.run_args[name, label] = args[1:]
        elif directive == "compare":
            if len(args) < 3:
                raise KscaleError(f"{where}: expected: compare LABEL BEFORE AFTER "
                                  "[COMPARE ARGS...]")
            self.check_label_run(where, name, args[0])
            check_selector(where, args[1])
            check_selector(where, args[2])
            check_tool_args(where, compare, ["x.json", f"--before={args[1]}",
                                             f"--after={args[2]}", *args[3:]])
        elif directive == "plot":
            if not args or args[0].startswith("-"):
                raise KscaleError(f"{where}: expected: plot LABEL... [PLOT ARGS...]")
            for arg in args:
                if not arg.startswith("-"):
                    self.check_label_run(where, name, arg)
            check_tool_args(where, plot, ["x.json", *(a for a in args if a.startswith("-"))])
        elif directive == "predict":
            if not args or args[0].startswith("-"):
                raise KscaleError(f"{where}: expected: predict LABEL... [PREDICT ARGS...]")
            for arg in args:
                if not arg.startswith("-"):
                    self.check_label_run(where, name, arg)
            check_tool_args(where, predict, args)
        elif directive == "headline":
            if len(args) < 3:
                raise KscaleError(f"{where}: expected: headline {HEADLINE_SYNTAX}")
            self.check_label_run(where, name, args[0])
            check_selector(where, args[1])
            check_selector(where, args[2])
            self.check_headline_options(where, name, args[0], args[3:])
            self.headlines.setdefault(name, []).append(args)
            self.headline_wheres.setdefault(name, []).append(where)
            return
        else:
            raise KscaleError(f"{where}: unknown directive '{directive}' "
                              f"(expected {DIRECTIVES})")
        self.steps.append(Step(where, name, directive, args))

    def check_label_run(self, where, name, label):
        """compare, plot... use the results of an earlier run line of the same config."""
        check_name(where, "label", label)
        if (name, label) not in self.labels:
            raise KscaleError(f"{where}: no earlier 'run {label}' in config {name}")

    def check_headline_options(self, where, name, label, options):
        """--seed=SEED with a line in the claims, --here=HERE an earlier
        run line; --sensitivity needs LABEL simulated on a machine file."""
        seed = None
        for arg in options:
            key, sep, value = arg.partition("=")
            if key == "--seed" and sep and value:
                seed = value
            elif key in ("--metric", "--mechanism") and sep and value:
                for metric in value.split(",") if key == "--mechanism" else (value,):
                    check_name(where, "metric", metric)
            elif key == "--here" and sep and value:
                self.check_label_run(where, name, value)
            elif arg == "--sensitivity":
                sims = [a[len("--sim="):] for a in self.run_args[name, label]
                        if a.startswith("--sim=")]
                if not any(sims) or "here" in sims:
                    raise KscaleError(f"{where}: headline --sensitivity: run {label} is not "
                                      "simulated on a machine file (--sim=MACHINE)")
            else:
                raise KscaleError(f"{where}: headline: unexpected '{arg}' "
                                  f"(expected {HEADLINE_SYNTAX})")
        claims = rel(self.claims_path)
        if seed is None:
            raise KscaleError(f"{where}: headline needs --seed=SEED (a seed of {claims})")
        if seed not in read_claims(self.claims_path):
            raise KscaleError(f"{where}: headline: no seed '{seed}' in {claims}")
        read_unknowns(self.unknowns_path)

    def names(self):
        """The configs with steps, in the order they run."""
        return list(dict.fromkeys(step.config for step in self.steps))

    def check_binaries(self, build):
        """Every run line's binary must exist (checked after the build)."""
        for step in self.steps:
            path = f"{build}/bench/{step.args[1]}" if step.directive == "run" else None
            if path and not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise KscaleError(f"{step.where}: no bench binary {rel(path)}")

    def check_dry_runs(self, build, extra_args):
        """Every run line's binary asked with --dry-run (its flags, knobs,
        variants, machine, the extra BENCH ARGS), then each compare and
        headline selector against the variants and knob values that run
        line plans: what the run would refuse, before anything runs."""
        planned = {}
        for step in self.steps:
            if step.directive != "run":
                continue
            label, binary, *args = step.args
            cmd = [f"{build}/bench/{binary}", *bench_args(args), *extra_args, "--dry-run"]
            try:
                p = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL)
            except OSError as e:
                raise KscaleError(f"{step.where}: run {label}: cannot run {rel(cmd[0])}: "
                                  f"{e.strerror}") from None
            if p.returncode:
                why = os.fsdecode(p.stderr).strip().splitlines() or \
                    [f"exit status {p.returncode}"]
                raise KscaleError(f"{step.where}: run {label}: {why[0]}")
            planned[step.config, label] = dry_run_plan(os.fsdecode(p.stdout))
        for step in self.steps:
            if step.directive == "compare":
                for side in step.args[1:3]:
                    check_planned(step.where, step.args[0], side,
                                  planned[step.config, step.args[0]])
        for name, headlines in self.headlines.items():
            for where, (label, before, after, *_) in zip(self.headline_wheres[name], headlines):
                for side in (before, after):
                    check_planned(where, label, side, planned[name, label])

    def counts(self):
        """'N run, N compare, N plot, N predict, N headline lines'."""
        counts = {d: 0 for d in ("run", "compare", "plot", "predict")}
        for step in self.steps:
            counts[step.directive] += 1
        counts["headline"] = sum(map(len, self.headlines.values()))
        return ", ".join(f"{n} {d}" for d, n in counts.items()) + " lines"


def check_name(where, what, value):
    """A label, binary or metric name: used in file names."""
    if not NAME.fullmatch(value):
        raise KscaleError(f"{where}: bad {what} '{value}' (letters, digits and ._+- only)")


def check_selector(where, text):
    """A compare side (compare.parse_selector) of names: VARIANT or
    VARIANT/KNOB:VALUE..., e.g. percpu/mounts:2 or percpu/threads:all*4."""
    try:
        variant, knobs = parse_selector(text)
        ok = NAME.fullmatch(variant) and all(
            NAME.fullmatch(k) and (NAME.fullmatch(v) or ALL_TIMES.fullmatch(v))
            for k, v in knobs.items())
    except KscaleError:
        ok = False
    if not ok:
        raise KscaleError(f"{where}: bad variant '{text}' "
                          "(expected VARIANT or VARIANT/KNOB:VALUE...)")


def dry_run_plan(text):
    """A bench's --dry-run: (allowed CPUs, thread counts, variants,
    {knob: values})."""
    cpus, counts, variants, knobs = None, [], [], {}
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        if key.startswith("thread counts"):
            counts = [int(n) for n in value.split(",")]
        elif key == "variants":
            variants = value.split(",")
        elif key.startswith("knob "):
            knobs[key[len("knob "):]] = value.split(",")
        elif cpus is None and " CPUs allowed" in value:
            cpus = int(value.split()[0])
            knobs["placement"] = [value.rpartition("; placement ")[2]]
    return cpus, counts, variants, knobs


def check_planned(where, label, text, plan):
    """A selector of run LABEL names a variant and knob values it runs."""
    cpus, counts, variants, knobs = plan
    variant, selector_knobs = parse_selector(text)
    if variant not in variants:
        raise KscaleError(f"{where}: '{text}': run {label} has no variant {variant} "
                          f"(it runs {', '.join(variants) or 'none'})")
    for knob, value in selector_knobs.items():
        if knob == "threads":
            if compare.thread_count(value, cpus) not in counts:
                raise KscaleError(f"{where}: '{text}': run {label} runs no "
                                  f"{value} threads (--cpus: {', '.join(map(str, counts))})")
        elif knob not in knobs:
            raise KscaleError(f"{where}: '{text}': run {label} has no knob {knob} "
                              f"(its knobs: {', '.join(knobs) or 'none'})")
        elif value not in knobs[knob]:
            raise KscaleError(f"{where}: '{text}': run {label} runs {knob} "
                              f"{', '.join(knobs[knob])}, not {value}")


def check_tool_args(where, tool, argv):
    """A compare, plot or predict line's options as the tool will parse
    them (its build_parser()), before anything runs."""
    try:
        tool.build_parser().parse_intermixed_args(argv)
    except KscaleError as e:
        raise KscaleError(f"{where}: {tool.PROG.removeprefix('kscale ')}: {e}") from None


def bench_args(args):
    """A run line's ARGS less the runner's own options: the binary's."""
    return [a for a in args if not a.startswith(RUNNER_OPTIONS)]


def run_options(args):
    """{--OPTION: VALUE} of a run line's ARGS, the last of each."""
    return dict(arg.split("=", 1) for arg in args if "=" in arg)


def check_run_options(where, label, args):
    """run LABEL BINARY ARGS...: the runner's --target-ci=PCT
    [--max-repetitions=N], and the --benchmark_repetitions=N it counts
    batches by."""
    options = run_options(args)
    for arg in args:
        key, sep, value = arg.partition("=")
        if key == "--target-ci" and sep and not (
                re.fullmatch(r"([0-9]*\.)?[0-9]+%?", value) and re.search("[1-9]", value)):
            raise KscaleError(f"{where}: run {label}: {arg}: expected a percentage "
                              "above 0, e.g. 2%")
        if key in ("--max-repetitions", "--benchmark_repetitions") and sep and \
                not positive(value):
            raise KscaleError(f"{where}: run {label}: {arg}: expected a positive number")
    if "--max-repetitions" in options and "--target-ci" not in options:
        raise KscaleError(f"{where}: run {label}: --max-repetitions needs --target-ci")
