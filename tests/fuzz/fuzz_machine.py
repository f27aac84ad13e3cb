#!/usr/bin/python3
"""fuzz machine: a machine file (configs/machines/*.conf, 'key = value'
lines) as kscale predict reads it: read_machine(), the compact
placement and line latencies at each CPU count of the table, then
kscale predict --machine=FILE on a profiled corpus file (gnuplot not
run).

Property: read_machine() returns a consistent Machine (whole cpus,
nodes and threads a core >= 1, cpus a multiple of nodes x threads a
core, latencies and clock finite and > 0 or none) or raises KscaleError
with a one-line message; the placement of n CPUs has n(n-1) ordered
pairs; kscale predict exits 0 or 2 within pyfuzz.EXEC_TIMEOUT, one
'kscale predict: ...' line on failure.  See pyfuzz.py for the options."""

import math
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfuzz  # noqa: E402
from pyfuzz import require, run_main  # noqa: E402


import fuzz_predict  # noqa: E402  (its gnuplot stand-ins)
from kscale_analysis import predict  # noqa: E402
from kscale_analysis.predict import machine, network  # noqa: E402
from kscale_analysis.results import KscaleError  # noqa: E402

NAME = "machine"
work = pyfuzz.Workdir()
PROFILED = os.path.join(pyfuzz.CORPUS, "predict", "mnt.json")


def consistent(m):
    require(all(type(x) is int and x >= 1 for x in (m.cpus, m.nodes, m.threads_per_core)),
            f"counts {m.cpus} {m.nodes} {m.threads_per_core}")
    require(m.cpus % (m.nodes * m.threads_per_core) == 0, "cpus not a multiple")
    for kind, ns in m.line_ns.items():
        require(ns is None or (math.isfinite(ns) and ns > 0), f"line_ns_{kind} {ns!r}")
    require(m.ghz is None or (math.isfinite(m.ghz) and m.ghz > 0), f"ghz {m.ghz!r}")
    require("\n" not in m.describe(), "describe() is two lines")
    for n in network.table_counts(m):
        pairs = machine.placement(m, n)
        used = min(n, m.cpus)
        require(all(v >= 0 for v in pairs.values()) and sum(pairs.values()) == used * (used - 1),
                f"placement of {n}: {pairs}")
        latency = machine.line_latency(m, n)
        # 1e308 ns a transfer, times the pairs, is inf: no crash, a 0 rate
        require(latency >= 0, f"line latency at {n}: {latency}")


def check(data):
    with fuzz_predict.stand_ins():
        machine_file(data)


def machine_file(data):
    work.reset()
    path = work.write("m.conf", data)
    try:
        m = machine.read_machine(path)
    except KscaleError as e:
        require("\n" not in str(e), "two-line error")
    else:
        consistent(m)
    results = os.path.join(work.path, "results", "fz.json")
    os.makedirs(os.path.dirname(results))
    shutil.copyfile(PROFILED, results)
    run_main(predict.PROG, predict.main,
             [results, f"--machine={path}", f"--seed-scale={fuzz_predict.SEED_SCALE}",
              f"--out-dir={os.path.join(work.path, 'plots')}"])
    pyfuzz.no_temp_files(work)


DICTIONARY = [b"cpus", b"nodes", b"threads_per_core", b"line_ns_smt", b"line_ns_node",
              b"line_ns_remote", b"ghz", b"name", b"source.cpus", b"=", b"==", b"none",
              b"None", b"none (nodes emulated)", b"0", b"1", b"2", b"3", b"-1", b"4096",
              b"65536", b"1000000", b"1e9", b"1e400", b"nan", b"inf", b"-inf", b"0.0",
              b"5e-324", b"1e308", b"9" * 30, b"9" * 5000, b"\xc2\xb2", b"\xd9\xa3", b"#",
              b"\r", b"\t", b"\x00", b"\xff", b"a b", b"cpus = 4", b"nodes = 2"]


def inputs():
    return pyfuzz.mutated(pyfuzz.corpus("machine"), DICTIONARY)


if __name__ == "__main__":
    sys.exit(pyfuzz.main(NAME, check, inputs(), ext=".conf"))
