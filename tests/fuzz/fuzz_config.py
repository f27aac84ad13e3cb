#!/usr/bin/python3
"""fuzz config: `kscale run --check CONFIG` on a config file (the
format of configs/default.conf, read by scripts/kscale_analysis/config.py
through the bash wrapper scripts/kscale), beside a valid config it may
include and a build of stand-in bench binaries.  Each input is one run
of the wrapper (tens of ms).

Property: it exits 0 with one 'kscale: ...: OK: ...' line on stdout, or
2 with one 'kscale: ...' line on stderr, and nothing else: no bash error
(unbound variable, syntax error, command not found, bad substitution,
a warning), no traceback; it writes nothing (no results, no plots, no
file anywhere in its directory).  See pyfuzz.py for the options."""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfuzz  # noqa: E402
from pyfuzz import require  # noqa: E402

from kscale_analysis.models import MODELS  # noqa: E402

from hypothesis import strategies as st  # noqa: E402

NAME = "config"
KSCALE = os.path.join(pyfuzz.ROOT, "scripts", "kscale")
BINARIES = (*MODELS, "primitives", "sched")
INCLUDED = b"run inc mnt_writers --cpus=1\ncompare inc atomic percpu\n"
BASH_TROUBLE = re.compile(r"unbound variable|syntax error|command not found|bad substitution|"
                          r"bad array subscript|unexpected EOF|No such file|warning:|"
                          r"Traceback|line [0-9]+:|integer expression|invalid arithmetic|"
                          r"ambiguous redirect|too many arguments")
work = pyfuzz.Workdir()


def setup():
    """A fresh work dir: cfg/ (the input, an includable config), build/
    with stand-in binaries; results/ and plots/ must stay absent."""
    work.reset()
    for name in BINARIES:
        path = work.write(f"build/bench/{name}", b"#!/bin/sh\nexit 1\n")
        os.chmod(path, 0o755)
    work.write("cfg/other.conf", INCLUDED)
    return work.files()


def check(data):
    before = setup()
    path = work.write("cfg/fz.conf", data)
    env = dict(os.environ, KSCALE_NO_SETUP="1", KSCALE_BUILD=os.path.join(work.path, "build"),
               KSCALE_RESULTS=os.path.join(work.path, "results"),
               KSCALE_PLOTS=os.path.join(work.path, "plots"), LC_ALL="C.UTF-8")
    proc = subprocess.run(["bash", KSCALE, "run", "--check", path], cwd=work.path, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    for line in (out + err).splitlines():  # its own lines may quote the input
        trouble = not line.startswith("kscale: ") and BASH_TROUBLE.search(line)
        require(not trouble, f"bash trouble {trouble and trouble.group()!r}: {line[:300]!r}")
    require(proc.returncode in (0, 2), f"exit status {proc.returncode}: {err[:300]!r}")
    if proc.returncode == 0:
        require(not err, f"stderr on success: {err[:300]!r}")
        require(re.fullmatch(r"kscale: [^\n]*: OK: [^\n]*\n", out), f"stdout {out[:300]!r}")
    else:
        require(not out, f"stdout on failure: {out[:300]!r}")
        pyfuzz.one_line_error("kscale", err)
    require(work.files() == before | {"cfg/fz.conf"},
            f"wrote {sorted(work.files() - before - {'cfg/fz.conf'})}")


WORDS = [b"run", b"include", b"compare", b"plot", b"headline", b"mnt", b"inc", b"x",
         b"mnt_writers", b"rwsem", b"no_such_bench", b"atomic", b"percpu", b"percpu/mounts:2",
         b"a/threads:all*4", b"a/threads:all*", b"a//b", b"a/k:", b"--seed=000",
         b"--seed=999", b"--seed=", b"--seed=\\", b"--seed=0\\t0", b"--metric=ops_per_sec",
         b"--metric=", b"--target-ci=2%", b"--target-ci=0", b"--target-ci=1e3",
         b"--target-ci=", b"--max-repetitions=27", b"--max-repetitions=0",
         b"--benchmark_repetitions=abc", b"--benchmark_repetitions=09",
         b"--benchmark_repetitions=3", b"other.conf", b"fz.conf", b"other", b"seeds",
         b"smoke", b"../cfg/other.conf", b"/etc/passwd", b"/dev/null", b"/", b".", b"..",
         b"$x", b"$(id)", b"`id`", b"${x", b"${x[", b"*", b"?", b"[a]", b"\\", b"'", b'"',
         b"#", b"\r", b"\t", b"{a,b}", b"~", b"!", b"-", b"--", b"%s", b"%n", b"\xc3\xa9",
         b"\x00", b"\x1b[31m", b"\xff", b"a]", b"a[0]", b"-e", b"-n", b"--check", b"--help",
         b"a=b", b"IFS=x", b"\v", b"\f", b"$'\\n'"]


@st.composite
def configs(draw):
    """Lines of a directive and words, mostly from WORDS, blanks between."""
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        words = draw(st.lists(st.sampled_from(WORDS) | st.binary(max_size=4), max_size=6))
        blank = draw(st.sampled_from([b" ", b"\t", b"  ", b" \t "]))
        lines.append(blank.join(words))
    end = draw(st.sampled_from([b"\n", b"\r\n", b""]))
    return end.join(lines) + draw(st.sampled_from([b"", b"\n"]))


def inputs():
    return st.one_of(pyfuzz.mutated(pyfuzz.corpus("config"), WORDS), configs())


if __name__ == "__main__":
    sys.exit(pyfuzz.main(NAME, check, inputs(), ext=".conf"))
