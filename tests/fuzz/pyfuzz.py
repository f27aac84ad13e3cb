"""The driver of the Python fuzz targets, tests/fuzz/fuzz_*.py.

A target is a module with a check(data) that feeds one input (bytes:
a results file, a machine file, a config...) to the readers and
commands it covers and raises on anything but a well-formed result or
the project's own one-line error, and a strategy of inputs; main() runs
it under hypothesis until --seconds pass.  Hypothesis generates inputs
and shrinks a failing one; it is not coverage-guided (there is no
atheris or python-afl in Debian 12): inputs come from structured
strategies and from mutations of the seed corpus, tests/fuzz/corpus/.

    fuzz_NAME.py [--seconds=N] [--out-dir=DIR]    fuzz for N seconds (10)
    fuzz_NAME.py FILE...                          replay inputs

Fuzzing prints one line, 'fuzz NAME: E execs in S s, N crashes', then
one line per crash: the file its (shrunk) input went to, in DIR
(default $KSCALE_BUILD/fuzz/NAME, else /tmp/kscale-fuzz/NAME), and what
went wrong.  A crash already seen (same exception, same place) is not
counted again.  Exit status 1 when there was a crash.
"""

import atexit
import contextlib
import hashlib
import io
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, "scripts")
CORPUS = os.path.join(HERE, "corpus")
REGRESS = os.path.join(HERE, "regress")
if SCRIPTS not in sys.path:
    sys.path.append(SCRIPTS)  # after any other kscale_analysis put first
# hypothesis keeps a cache (and, unless told not to, an example database)
# under .hypothesis/ of the current directory: not in the tree, and not
# left in /tmp either when there is a build directory to keep it in
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(
    os.environ["KSCALE_BUILD"], "fuzz", "hypothesis") if os.environ.get("KSCALE_BUILD")
    else os.path.join(tempfile.gettempdir(), f"kscale-fuzz-hypothesis-{os.getuid()}"))

from hypothesis import HealthCheck, Phase, Verbosity, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXEC_TIMEOUT = 120  # seconds an input may take before it counts as a hang


class Failure(Exception):
    """A broken property: the message says which."""


class Hang(Exception):
    """An input that took longer than EXEC_TIMEOUT."""


def require(condition, message):
    if not condition:
        raise Failure(message)


# ---------------------------------------------------------------- inputs

def corpus(*names):
    """The seed files of tests/fuzz/corpus/NAME/ (for each NAME), as bytes."""
    seeds = []
    for name in names:
        directory = os.path.join(CORPUS, name)
        for f in sorted(os.listdir(directory)):
            with open(os.path.join(directory, f), "rb") as fh:
                seeds.append(fh.read())
    return seeds


# A token of a text input a mutation may replace: a JSON number, string
# or literal, or a run of non-blank characters.
TOKEN = re.compile(rb'-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|"(?:[^"\\\n]|\\.)*"'
                   rb'|true|false|null|[^\s"]+')


@st.composite
def mutated(draw, seeds, dictionary=()):
    """A seed, mutated 1-4 times: truncated, bytes flipped, inserted,
    deleted or duplicated, spliced with another seed, a token replaced
    by one of the dictionary's (or random text), a line dropped or
    repeated."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(("token", "token", "token", "line", "flip", "insert",
                                   "delete", "duplicate", "splice", "truncate")))
        at = draw(st.integers(0, len(data)))
        if op == "token":
            tokens = list(TOKEN.finditer(data))
            if not tokens:
                continue
            m = tokens[draw(st.integers(0, len(tokens) - 1))]
            new = draw(st.one_of(st.sampled_from(dictionary or [b""]),
                                 st.text(max_size=12).map(lambda s: s.encode()),
                                 deep_nesting()))
            data[m.start():m.end()] = new
        elif op == "line":
            lines = data.split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            if draw(st.booleans()):
                del lines[i]
            else:
                lines.insert(i, lines[draw(st.integers(0, len(lines) - 1))])
            data = bytearray(b"\n".join(lines))
        elif op == "flip" and data:
            at = min(at, len(data) - 1)
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 64))]
        elif op == "duplicate":
            size = draw(st.integers(1, 256))
            data[at:at] = data[at:at + size]
        elif op == "splice":
            other = draw(st.sampled_from(seeds))
            data = data[:at] + other[draw(st.integers(0, len(other))):]
        elif op == "truncate":
            data = data[:at]
    return bytes(data)


def deep_nesting():
    """'[[[...1...]]]', deep enough to exhaust a recursive parser."""
    return st.integers(1, 100000).map(lambda n: b"[" * n + b"1" + b"]" * n)


# JSON values that break readers which trust a field's type or range.
def odd_values():
    return st.one_of(
        st.none(), st.booleans(), st.integers(-2, 3),
        st.integers(min_value=-(10 ** 400), max_value=10 ** 400),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([1e308, -1e308, 5e-324, -0.0, 0.0]),
        st.text(max_size=8), st.sampled_from(["", "none", "2", "²", "1e9", "nan", "a\nb"]),
        st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3),
                                                            st.integers(), max_size=2))


# ---------------------------------------------------------------- checks

class Workdir:
    """A scratch directory for a target's files, emptied per input."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="kscale-fuzz.")
        # gone with the process: each run left one in /tmp before
        atexit.register(shutil.rmtree, self.path, True)

    def reset(self):
        for name in os.listdir(self.path):
            full = os.path.join(self.path, name)
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.unlink(full)
        return self.path

    def write(self, name, data):
        path = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def files(self):
        """Every file under it, relative paths."""
        out = set()
        for directory, _, names in os.walk(self.path):
            out.update(os.path.relpath(os.path.join(directory, n), self.path) for n in names)
        return out


def one_line_error(prog, err):
    """stderr of a failed command: one 'PROG: ...' line."""
    lines = err.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    require(len(lines) == 1 and lines[0].startswith(f"{prog}: "),
            f"{prog}: stderr is not one '{prog}: ...' line: {err[:500]!r}")


def run_main(prog, main, argv, statuses=(0, 2), verdicts=()):
    """Call a command's main(argv) as its script would, stdout and stderr
    captured: its status must be one of `statuses`; a failure prints one
    line on stderr and nothing on stdout (but a status of `verdicts`, a
    verdict rather than an error, may), a success only 'PROG: ...'
    lines (warnings) on stderr.  Returns (status, stdout)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("always")  # what a fresh process would print
        status = main(argv)
    require(status in statuses, f"{prog} {argv}: exit status {status}")
    if status:
        one_line_error(prog, err.getvalue())
        require(status in verdicts or not out.getvalue(), f"{prog}: stdout on failure: {out.getvalue()[:200]!r}")
    else:
        for line in err.getvalue().splitlines():
            require(line.startswith(f"{prog}: "), f"{prog}: stray stderr line {line!r}")
    return status, out.getvalue()


@contextlib.contextmanager
def patched(module, **attrs):
    """module's attributes replaced for the duration (gnuplot stand-ins)."""
    saved = {name: getattr(module, name) for name in attrs}
    for name, value in attrs.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def no_temp_files(workdir):
    left = [f for f in workdir.files() if f.endswith(".tmp") or ".tmp." in f]
    require(not left, f"temp files left behind: {left}")


# ---------------------------------------------------------------- the runner

def _alarm(signum, frame):
    raise Hang(f"input took over {EXEC_TIMEOUT} s")


def signature(e):
    """(exception type, innermost frame in kscale's code) of a crash."""
    if isinstance(e, Failure):
        return ("Failure", re.sub(r"[0-9]+", "N", str(e))[:120])
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if "kscale_analysis" in f.filename] or frames[-1:]
    where = f"{os.path.basename(ours[-1].filename)}:{ours[-1].lineno}" if ours else "?"
    return (type(e).__name__, where)


def describe(e):
    sig = signature(e)
    text = str(e).split("\n")[0][:160]
    return f"{sig[0]} at {sig[1]}: {text}" if sig[0] != "Failure" else f"{text}"


def checked(check, data):
    """check(data) under the hang alarm."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(EXEC_TIMEOUT)
    try:
        check(data)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def out_dir(name, given_dir):
    if given_dir:
        return given_dir
    build = os.environ.get("KSCALE_BUILD")
    if build:
        return os.path.join(build, "fuzz", name)
    return os.path.join(tempfile.gettempdir(), "kscale-fuzz", name)


def save(directory, data, ext):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"crash-{hashlib.sha1(data).hexdigest()[:16]}{ext}")
    with open(path, "wb") as f:
        f.write(data)
    return path


def fuzz(name, check, strategy, seconds, directory, ext):
    """Run hypothesis batches until `seconds` pass; (execs, [crash lines])."""
    start = time.monotonic()
    deadline = start + seconds
    known = {}
    execs = 0
    failing = [None]

    def body(data):
        nonlocal execs
        if failing[0] is None and time.monotonic() > deadline:
            return  # the batch's other examples: time is up (not while shrinking)
        execs += 1
        try:
            checked(check, data)
        except Exception as e:  # noqa: BLE001: every escape is the finding
            if signature(e) in known:
                return
            failing[0] = (data, e)
            raise

    idle = 0
    while time.monotonic() < deadline and idle < 3:
        left = deadline - time.monotonic()
        per_exec = (time.monotonic() - start) / execs if execs else left
        batch = max(1, min(500, int(left / max(per_exec, 1e-4))))
        test = settings(max_examples=batch, deadline=None, database=None,
                        suppress_health_check=list(HealthCheck),
                        phases=(Phase.generate, Phase.shrink), verbosity=Verbosity.quiet,
                        report_multiple_bugs=False)(given(strategy)(body))
        before = execs
        try:
            test()
        except Exception:  # noqa: BLE001: hypothesis re-raises the shrunk failure
            if failing[0] is not None:
                data, e = failing[0]
                known[signature(e)] = f"{save(directory, data, ext)}: {describe(e)}"
                failing[0] = None
        idle = idle + 1 if execs == before else 0
    return execs, time.monotonic() - start, list(known.values())


def replay(check, paths):
    status = 0
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        try:
            checked(check, data)
        except Exception as e:  # noqa: BLE001
            status = 1
            print(f"{path}: {describe(e)}")
            traceback.print_exc()
        else:
            print(f"{path}: ok")
    return status


def main(name, check, strategy, ext=".bin", argv=None):
    argv = sys.argv[1:] if argv is None else argv
    seconds, directory, paths = 10.0, None, []
    for arg in argv:
        if arg.startswith("--seconds="):
            seconds = float(arg.split("=", 1)[1])
        elif arg.startswith("--out-dir="):
            directory = arg.split("=", 1)[1]
        elif arg in ("-h", "--help"):
            print(__doc__.replace("NAME", name))
            return 0
        elif arg.startswith("-"):
            print(f"fuzz {name}: unknown option {arg!r} (see --help)", file=sys.stderr)
            return 2
        else:
            paths.append(arg)
    if paths:
        return replay(check, paths)
    execs, elapsed, crashes = fuzz(name, check, strategy, seconds,
                                   out_dir(name, directory), ext)
    print(f"fuzz {name}: {execs} execs in {elapsed:.1f} s, {len(crashes)} crashes")
    for line in crashes:
        print(f"  {line}")
    return 1 if crashes else 0


def regress_inputs(name):
    """The regression inputs of a target: tests/fuzz/regress/NAME/*."""
    directory = os.path.join(REGRESS, name)
    if not os.path.isdir(directory):
        return []
    return [os.path.join(directory, f) for f in sorted(os.listdir(directory))]
