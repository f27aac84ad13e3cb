"""kscale run: execute experiment configs (config.py): bench runs into
results files, then their compare tables, plots, predictions,
sensitivities and summary tables."""

import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from . import cli
from .config import (Configs, bench_args, config_path, pwd, rel, run_options,
                     selector_file_name)
from .results import KscaleError

PROG = "kscale"
USAGE = """\
usage: kscale run [--check] [--sensitivity] [CONFIG...] [-- BENCH ARGS...]

Set up, then execute each CONFIG: a NAME for configs/NAME.conf, or a path
(with a '/' or ending in .conf).  The default, configs/default.conf (whose
header describes the format), is the quick tour: each seed's headline
measured here and simulated on the seed's machine at its scale in about
a minute on 2 CPUs, ending with one summary table and one plot; 'kscale
run seeds' is the full reproduction of the four seeds (53 minutes on 2
CPUs), 'kscale run predict' what kscale predict reads.  For a config NAME.conf, results go to results/NAME/ (LABEL.json,
LABEL.log with the command line, compare tables as .txt and .md, the
summary table as summary.txt and .md) and plots to plots/NAME/ (see
KSCALE_RESULTS, KSCALE_PLOTS in kscale --help).  Compare tables, a list
of the files written and the summary table are printed on stdout,
progress (a line per run line, with the time left) on stderr.  BENCH
ARGS are appended to every run line, e.g.
  kscale run seed-mnt-openbench -- --cpus=1 --duration=0.1
With --check, only check the CONFIGs as a run does first (each line,
include, label, variant and seed, the runner's --target-ci,
--max-repetitions and --benchmark_repetitions, the options of compare,
plot and predict lines) and, where BUILD has bench binaries, each run
line's binary with its ARGS and the BENCH ARGS asked with --dry-run (its
flags, variants, knobs, machine), and each compare and headline variant
against what its run line runs: nothing is set up, built, run or
written; a run does the same before it runs anything.  One line, 'kscale: CONFIG...: OK: ...' (exit status 0) or the
first problem found (2).  With --sensitivity, each headline marked
--sensitivity is re-run with every estimated figure of its machine moved
(kscale sim-sensitivity) and the summary says how its ratio moved;
without it the summary says it was not run (seeds-at-scale: some 27
minutes more on 2 CPUs).
"""
# a bench's progress lines, "kscale: [k/N] ...": on a terminal only
PROGRESS_TTY = re.compile(rb"kscale: \[[0-9]+/[0-9]+\] ")
PROGRESS = re.compile(rb"kscale: \[[0-9]*/[0-9]*\] ")


def out(text):
    """stdout, flushed: the tools run beside it write there too."""
    sys.stdout.write(text)
    sys.stdout.flush()


def err(text):
    sys.stdout.flush()
    sys.stderr.write(text)
    sys.stderr.flush()


def status_of(returncode):
    """A child's exit status as the shell gives it: 128+N for signal N."""
    return 128 - returncode if returncode < 0 else returncode


def fmt_seconds(seconds):
    """SECONDS as "1m10s", "0m45s", as the bench binaries' progress lines."""
    return f"{seconds // 60}m{seconds % 60:02d}s"


def environment_dir(variable, default):
    return os.path.realpath(os.environ.get(variable) or default)


def labels_options(args):
    """A plot or predict line's words: (labels, options)."""
    return ([a for a in args if not a.startswith("-")],
            [a for a in args if a.startswith("-")])


class Runner:
    """The steps of loaded configs executed into each config's staging
    directories (RESULTS/.NAME.new, PLOTS/.NAME.new), renamed into place
    once every step is done: a run's results change all at once or not
    at all.  SIGINT, SIGTERM or SIGHUP stop the bench running, remove the
    staging directories and keep the earlier results."""

    def __init__(self, root, extra_args, sensitivity=False):
        self.configs = Configs(root)
        self.extra_args = extra_args
        self.sensitivity = sensitivity  # run --sensitivity: the re-runs made
        self.scripts = f"{root}/scripts"
        self.build = environment_dir("KSCALE_BUILD", f"{root}/build")
        self.results = environment_dir("KSCALE_RESULTS", f"{root}/results")
        self.plots = environment_dir("KSCALE_PLOTS", f"{root}/plots")
        self.staged = []  # (staging, final) directories, renamed at the end
        self.written = []  # files written, for the list at the end
        self.summaries = []  # summary tables (.txt), printed last
        self.child = None  # what runs now
        self.bench = False  # ...is a bench binary (stopped by a signal)
        self.locks = []  # the results directories' locks, held to the end

    def tool(self, name):
        return f"{self.scripts}/kscale-{name}"

    def spawn(self, cmd, bench=False, **popen):
        """Popen of cmd, known to the signal handler until waited for."""
        sys.stdout.flush()
        self.child = subprocess.Popen(cmd, **popen)
        self.bench = bench
        return self.child

    def call(self, cmd, **popen):
        """Run cmd; its exit status and stdout (when captured)."""
        proc = self.spawn(cmd, **popen)
        stdout, _ = proc.communicate()
        self.child = None
        return status_of(proc.returncode), stdout

    def interrupted(self, sig, _frame):
        """SIGTERM to a bench running, wait for what runs, finish a commit,
        remove the temp files and die of the signal (exit status 128+N)."""
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if self.child:
            if self.bench:
                self.child.send_signal(signal.SIGTERM)
            try:
                os.waitpid(self.child.pid, 0)
            except ChildProcessError:
                pass
        self.unstage()
        name = signal.Signals(sig).name
        try:
            err(f"kscale: interrupted by {name}; earlier results kept\n")
        except OSError:
            pass
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    def run(self):
        self.configs.check_binaries(self.build)
        self.configs.check_dry_runs(self.build, self.extra_args)
        self.lock_results()
        self.stage()
        self.run_steps()
        self.install()
        self.summarize_written()

    def results_of(self, name):
        return f"{self.results}/.{name}.new"

    def plots_of(self, name):
        return f"{self.plots}/.{name}.new"

    def stage(self):
        """Empty staging directories for each config (a dead run's removed:
        the lock is ours), its plots' only where it plots (a headline's
        claim may)."""
        for name in self.configs.names():
            pairs = [(self.results_of(name), f"{self.results}/{name}")]
            if name in self.configs.headlines or any(
                    step.config == name and step.directive in ("plot", "predict")
                    for step in self.configs.steps):
                pairs.append((self.plots_of(name), f"{self.plots}/{name}"))
            for new, final in pairs:
                shutil.rmtree(new, ignore_errors=True)
                shutil.rmtree(old_of(final), ignore_errors=True)
                os.makedirs(new)
                self.staged.append((new, final))

    def unstage(self):
        for new, _ in self.staged:
            shutil.rmtree(new, ignore_errors=True)

    def install(self):
        """Each staging directory renamed over its final one (which goes)."""
        for new, final in self.staged:
            if os.path.isdir(final):
                os.rename(final, old_of(final))
            os.rename(new, final)
            shutil.rmtree(old_of(final), ignore_errors=True)

    def final(self, path):
        """A staged file's path once installed."""
        for new, final in self.staged:
            if path.startswith(new + "/"):
                return final + path[len(new):]
        return path

    def lock_results(self):
        """Each config's results directory for this run alone (flock on
        RESULTS/.NAME.lock, held until exit): two runs there would each
        measure under the other's load and mix their files."""
        for name in self.configs.names():
            os.makedirs(self.results, exist_ok=True)
            fd = os.open(f"{self.results}/.{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                         0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
                raise KscaleError(f"{rel(self.results)}/{name}: another kscale run "
                                  f"(pid {holder or '?'}) is writing there") from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self.locks.append(fd)

    def run_steps(self):
        """Each run's progress line estimates the time left from the time so far."""
        nr_runs = sum(step.directive == "run" for step in self.configs.steps)
        runs, start = 0, int(time.time())
        for step in self.configs.steps:
            if step.directive == "run":
                eta = ""
                if runs:
                    left = (int(time.time()) - start) * (nr_runs - runs) // runs
                    eta = f" (ETA {fmt_seconds(left)})"
                runs += 1
                err(f"[{step.config}] run {runs}/{nr_runs}: {step.args[0]}{eta}\n")
                self.step_run(step.config, f"{runs}/{nr_runs}", *step.args)
            else:
                getattr(self, f"step_{step.directive}")(step.config, *step.args)
        self.step_sensitivities()
        self.step_summaries()

    def console(self, line, progress):
        """A bench's stderr line on the console: its progress lines
        overwrite each other on a terminal and are left out elsewhere."""
        line = line.rstrip(b"\n")
        stderr = sys.stderr.buffer
        if sys.stderr.isatty():
            if PROGRESS_TTY.match(line):
                stderr.write(b"\r\033[K" + line)
            else:
                stderr.write((b"\r\033[K" if progress else b"") + line + b"\n")
            progress = PROGRESS_TTY.match(line) is not None
        elif not PROGRESS.match(line):
            stderr.write(line + b"\n")
        stderr.flush()
        return progress

    def run_bench(self, cmd, out_file, log):
        """cmd's stdout to log, its stderr to log and the console as it
        comes; its exit status."""
        os.write(log, f"$ {show_cmd(cmd)}\n".encode("utf-8", "surrogateescape"))
        sys.stderr.flush()
        proc = self.spawn(cmd, bench=True, stdout=log, stderr=subprocess.PIPE)
        progress = False
        for line in proc.stderr:
            os.write(log, line)
            progress = self.console(line, progress)
        if progress:
            sys.stderr.buffer.write(b"\r\033[K")
            sys.stderr.flush()
        proc.wait()
        self.child = None
        return status_of(proc.returncode)

    def step_run(self, name, progress, label, binary, *args):
        """run LABEL BINARY ARGS...: Google Benchmark's table and the stderr
        lines to LABEL.log, the results to LABEL.json.  With --target-ci=PCT
        [--max-repetitions=N] among ARGS (the runner's, not the binary's),
        the binary runs again, a batch of its own repetitions at a time,
        until every point's median has a 95% CI within PCT % (kscale
        adaptive) or N repetitions (default 3 batches) are in."""
        directory = self.results_of(name)
        json_dest, log_dest = f"{directory}/{label}.json", f"{directory}/{label}.log"
        options = run_options(args)
        target = options.get("--target-ci")
        reps = int(options.get("--benchmark_repetitions", 1))
        most = int(options.get("--max-repetitions", 3 * reps))
        args = bench_args(args)
        log = os.open(log_dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o666)

        def fail(message, status=2):
            os.close(log)
            raise KscaleError(f"{message}; see {rel(log_dest)} (this run's results "
                              "are not installed)", status)

        batches, done = [], 0
        while True:
            out_file = json_dest
            if target:
                out_file = f"{directory}/.{label}.batch{len(batches) + 1}.json"
                batches.append(out_file)
            cmd = [f"{self.build}/bench/{binary}", *args, *self.extra_args,
                   f"--benchmark_out={out_file}", "--benchmark_out_format=json"]
            status = self.run_bench(cmd, out_file, log)
            if status:
                fail(f"[{name}] run {label} failed with exit status {status}", status)
            if not target:
                break
            done += reps
            status, verdict = self.call([self.tool("adaptive"), "check",
                                         f"--target-ci={target}", *batches],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            verdict = verdict.rstrip(b"\n") + b"\n"
            os.write(log, verdict)
            sys.stderr.buffer.write(verdict)
            sys.stderr.flush()
            if status > 1:
                fail(f"[{name}] run {label}: kscale adaptive failed", status)
            if status != 1 or done + reps > most:
                break
            err(f"[{name}] run {progress}: {label}: {done} repetitions, {reps} more\n")
        if target:
            status, _ = self.call([self.tool("adaptive"), "merge", json_dest, *batches])
            if status:
                fail(f"[{name}] run {label}: cannot merge its batches")
            for batch in batches:
                os.unlink(batch)
        os.close(log)
        self.written += [json_dest, log_dest]

    def write_atomic(self, what, dest, cmd):
        """cmd's stdout to dest through a temp file."""
        tmp = f"{os.path.dirname(dest)}/.{os.path.basename(dest)}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            status, _ = self.call(cmd, stdout=f)
        if status:
            raise KscaleError(f"{what} failed with exit status {status}", status)
        os.replace(tmp, dest)
        self.written.append(dest)

    def step_compare(self, name, label, before, after, *args):
        """compare LABEL BEFORE AFTER ARGS...: the text table to stdout and
        .txt, the markdown table to .md; ".METRIC" (the first one named)
        when it picks metrics, so two compares of a pair write two files."""
        what = f"[{name}] compare {label} {before} {after}"
        base = f"{self.results_of(name)}/{label}.{selector_file_name(before)}-" \
               f"{selector_file_name(after)}"
        metrics = [a[len("--metric="):] for a in args if a.startswith("--metric=")]
        if metrics:
            base += "." + metrics[0].split(",")[0]
        cmd = [self.tool("compare"), f"{self.results_of(name)}/{label}.json",
               f"--before={before}", f"--after={after}", *args]
        out(f"\n=== {what} ===\n")
        self.write_atomic(what, f"{base}.txt", cmd)
        with open(f"{base}.txt", "rb") as f:
            sys.stdout.buffer.write(f.read())
        self.write_atomic(f"{what} --format=markdown", f"{base}.md",
                          cmd + ["--format=markdown"])

    def step_plot(self, name, *args):
        """plot LABEL... ARGS...: PNG and SVG files under PLOTS/<config-name>/,
        the labels' results in one plot a point."""
        labels, options = labels_options(args)
        directory = self.plots_of(name)
        err(f"[{name}] plot {' '.join(labels)} -> {rel(self.final(directory + '/'))}\n")
        status, files = self.call([self.tool("plot"),
                                   *(f"{self.results_of(name)}/{a}.json" for a in labels),
                                   f"--out-dir={directory}", *options],
                                  stdout=subprocess.PIPE)
        if status:
            raise KscaleError(f"[{name}] plot {' '.join(labels)} failed with exit "
                              f"status {status}", status)
        self.written += output_lines(files)

    def step_predict(self, name, *args):
        """predict LABEL... ARGS...: kscale predict of those results files
        (the first one's directory gets predict.txt and .md), plots under
        PLOTS/<config-name>/."""
        labels, options = labels_options(args)
        files = [f"{self.results_of(name)}/{a}.json" for a in labels]
        out(f"\n=== [{name}] predict {' '.join(args)} ===\n")
        status, _ = self.call([self.tool("predict"), *files,
                               f"--out-dir={self.plots_of(name)}", *options])
        if status:
            raise KscaleError(f"[{name}] predict failed with exit status {status}", status)
        self.written += [f"{self.results_of(name)}/predict.txt",
                         f"{self.results_of(name)}/predict.md"]

    def step_sensitivities(self):
        """headline LABEL BEFORE AFTER ... --sensitivity: LABEL's run line
        again at the headline's point, with each estimated machine figure
        moved (kscale sim-sensitivity), into LABEL.sensitivity.*.json;
        with run --sensitivity only."""
        if not self.sensitivity:
            return
        for name, headlines in self.configs.headlines.items():
            for label, before, after, *options in headlines:
                if "--sensitivity" not in options:
                    continue
                metric = [a for a in options if a.startswith("--metric=")][-1:]
                binary, *args = self.configs.run_args[name, label]
                args = bench_args(args)
                what = f"{label} {before} {after}"
                err(f"[{name}] sensitivity {what}\n")
                status, files = self.call(
                    [self.tool("sim-sensitivity"), f"--results-dir={self.results_of(name)}",
                     f"--label={label}", f"--before={before}", f"--after={after}", *metric,
                     "--", f"{self.build}/bench/{binary}", *args, *self.extra_args],
                    stdout=subprocess.PIPE)
                if status:
                    raise KscaleError(f"[{name}] sensitivity {what} failed with exit "
                                      f"status {status}", status)
                self.written.append(os.fsdecode(files).rstrip("\n"))

    def step_summaries(self):
        """The summary table of each config with headline lines (kscale
        summary): RESULTS/NAME/summary.txt, printed after the list of
        files written, and .md."""
        for name, headlines in self.configs.headlines.items():
            base = f"{self.results_of(name)}/summary"
            err(f"[{name}] summary -> {rel(self.final(base))}.txt, .md\n")
            status, files = self.call(
                [self.tool("summary"), f"--claims={self.configs.claims_path}",
                 f"--unknowns={self.configs.unknowns_path}",
                 f"--plots={self.plots_of(name)}",
                 f"--sim-validation={self.results}/sim-validate/validation.json",
                 *([] if self.sensitivity else ["--sensitivity-not-run"]),
                 f"--out={base}", self.results_of(name), *map(" ".join, headlines)],
                stdout=subprocess.PIPE)
            if status:
                raise KscaleError(f"[{name}] summary failed with exit status {status}", status)
            self.written += output_lines(files) or [""]
            self.summaries.append(self.final(f"{base}.txt"))

    def summarize_written(self):
        out(f"\nkscale: {len(self.written)} files written:\n")
        out("".join(f"  {rel(self.final(f))}\n" for f in self.written))
        for path in self.summaries:
            out("\n")
            with open(path, "rb") as f:
                sys.stdout.buffer.write(f.read())
            sys.stdout.flush()


def old_of(final):
    """Where install() moves a final directory before it goes."""
    head, tail = os.path.split(final)
    return f"{head}/.{tail}.old"


def output_lines(data):
    """The lines a tool printed, as the shell's $(...) and mapfile read them."""
    text = os.fsdecode(data).rstrip("\n")
    return text.split("\n") if text else []


def show_cmd(cmd):
    """A command line for display: paths under the current directory shortened."""
    return " ".join(arg.replace(pwd() + "/", "") for arg in cmd)


def check_only(configs, specs, build, extra_args):
    """The configs are loaded; the binaries where the build has some,
    then one line: what would run."""
    shown = " ".join(rel(config_path(configs.root, spec, pwd())) for spec in specs)
    bench = f"{build}/bench"
    if any(not f.startswith(".") for f in listdir(bench)):
        configs.check_binaries(build)
        configs.check_dry_runs(build, extra_args)
        binaries = "binaries checked with --dry-run"
    else:
        binaries = f"binaries not checked (none in {rel(bench)})"
    out(f"kscale: {shown}: OK: {configs.counts()}; {binaries}\n")


def listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def run_command(argv):
    specs, extra_args, check, sensitivity = [], [], False, False
    for i, arg in enumerate(argv):
        if arg in ("-h", "--help"):
            out(USAGE)
            return
        if arg == "--check":
            check = True
        elif arg == "--sensitivity":
            sensitivity = True
        elif arg == "--":
            extra_args = argv[i + 1:]
            break
        elif arg.startswith("-"):
            raise KscaleError(f"run: unknown option '{arg}' (see kscale run --help)")
        else:
            specs.append(arg)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    runner = Runner(root, extra_args, sensitivity)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, runner.interrupted)
    specs = specs or ["default"]
    for spec in specs:
        runner.configs.load(config_path(root, spec, pwd()))
    if check:
        check_only(runner.configs, specs, runner.build, extra_args)
        return
    if os.environ.get("KSCALE_NO_SETUP") != "1":
        status, _ = runner.call([f"{root}/scripts/kscale", "setup", "run"])
        if status:
            sys.exit(status)
    runner.run()


def main(argv):
    return cli.run(PROG, run_command, argv)
