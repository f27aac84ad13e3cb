#!/usr/bin/python3
"""fuzz seed_tables: a tab-separated seed table read as both
configs/seed-scale.tsv (kscale predict --seed-scale: each seed's
machine, thread count, figure, metric, variants, knobs; its machines
are machines/NAME.conf beside it, here the real ones) and
configs/seed-claims.tsv (kscale summary --claims) and
configs/seed-unknowns.tsv (kscale summary --unknowns), then each command
run with it on a corpus results file (gnuplot not run).

Property: read_seed_scale(), read_claims() and read_unknowns() return
well-formed lines
or raise KscaleError with a one-line message; kscale predict and kscale
summary exit 0 or 2 within pyfuzz.EXEC_TIMEOUT, one 'kscale CMD: ...'
line on failure, summary's files complete or absent.  See pyfuzz.py
for the options."""

import math
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfuzz  # noqa: E402
from pyfuzz import require, run_main  # noqa: E402


import fuzz_predict  # noqa: E402  (its gnuplot stand-ins)
from kscale_analysis import predict, summary  # noqa: E402
from kscale_analysis.predict import seeds  # noqa: E402
from kscale_analysis.results import KscaleError  # noqa: E402

NAME = "seed_tables"
work = pyfuzz.Workdir()
PROFILED = os.path.join(pyfuzz.CORPUS, "predict", "mnt.json")
MACHINES = os.path.join(pyfuzz.ROOT, "configs", "machines")


def read(reader, path):
    """reader(path), or None where it raised KscaleError in one line."""
    try:
        return reader(path)
    except KscaleError as e:
        require("\n" not in str(e), "two-line error")
        return None


def check_scale(path):
    for s in read(seeds.read_seed_scale, path) or []:
        require(type(s.threads) is int and s.threads >= 1, f"threads {s.threads!r}")
        require(math.isfinite(s.low) and 0 < s.low <= s.high and math.isfinite(s.high),
                f"figure {s.low!r}..{s.high!r}")
        require(all(isinstance(x, str) for x in (s.seed, s.metric, s.before, s.after, s.note)),
                "fields")
        require(all(isinstance(k, str) and isinstance(v, str) for k, v in s.knobs.items()),
                "knobs")


def check_claims(path):
    claims = read(summary.read_claims, path)
    for seed, claim in (claims or {}).items():
        require(claim.seed == seed and all(isinstance(x, str) and x for x in
                                           (claim.title, claim.reported, claim.machine)),
                f"claim {claim!r}")
    return claims


def check_unknowns(path):
    for seed, knobs in (read(summary.read_unknowns, path) or {}).items():
        require(knobs and len({u.knob for u in knobs}) == len(knobs), f"knobs of {seed}")
        for u in knobs:
            require(u.admits(u.low) and u.admits(u.high), f"range {u!r}")


def check(data):
    with fuzz_predict.stand_ins():
        tables(data)


def tables(data):
    work.reset()
    table = work.write("configs/seed.tsv", data)
    shutil.copytree(MACHINES, os.path.join(work.path, "configs", "machines"))
    results = os.path.join(work.path, "results", "fz.json")
    os.makedirs(os.path.dirname(results))
    shutil.copyfile(PROFILED, results)
    check_scale(table)
    run_main(predict.PROG, predict.main,
             [results, f"--seed-scale={table}", f"--out-dir={os.path.join(work.path, 'p')}"])
    check_unknowns(table)
    claims = check_claims(table)
    seed = next(iter(claims), "000") if claims else "000"
    out = os.path.join(work.path, "summary")
    status, _ = run_main(summary.PROG, summary.main,
                         [f"--claims={table}", f"--out={out}", os.path.dirname(results),
                          f"fz atomic/threads:1 percpu/threads:1 --seed={seed}"])
    made = {f for f in work.files() if f.startswith("summary")}
    require(made == (set() if status else {"summary.txt", "summary.md"}),
            f"summary exit status {status}, wrote {made}")
    pyfuzz.no_temp_files(work)


DICTIONARY = [b"\t", b"\t\t", b"\n", b"\r\n", b"#", b"-", b"all", b"0", b"1", b"-1", b"4",
              b"256", b"512", b"100000", b"9" * 30, b"9" * 5000, b"nan", b"inf", b"1e400",
              b"~4", b"5-10", b"5..10", b"10-5", b"1.21x", b"x", b"0x", b".", b"..", b"~",
              b"ops_per_sec", b"total_MBps", b"atomic", b"percpu", b"mounts=1", b"mounts:1",
              b"a=b=c", b"=", b":", b"ibm-4way-xeon-smp-2007", b"sgi-altix3700-512p",
              b"no-such-machine", b"../machines/ibm-4way-xeon-smp-2007.conf", b"/etc/passwd",
              b"/dev/null", b"machines", b"seed", b"\"", b"'", b"\x00", b"\xff", b"\xc2\xb2"]


def inputs():
    return pyfuzz.mutated(pyfuzz.corpus("seed_tables"), DICTIONARY)


if __name__ == "__main__":
    sys.exit(pyfuzz.main(NAME, check, inputs(), ext=".tsv"))
