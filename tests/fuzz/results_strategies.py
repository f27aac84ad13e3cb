"""Hypothesis strategies for kscale results files (Google Benchmark JSON
with kscale's fields), shared by the fuzz targets that read them."""

import json

from hypothesis import strategies as st

import pyfuzz

# Small alphabets, so names collide and variants pair up.
SEGMENT = st.sampled_from(["m", "mnt_writers", "w", "openbench", "atomic", "percpu", "v",
                           "", "a b", "é", "x\ny", "-", "."])
KNOB = st.one_of(
    st.tuples(st.sampled_from(["mounts", "fs_io_us", "path_work_ns", "k", "threads",
                               "iterations", "repeats", ""]),
              st.sampled_from(["1", "2", "0", "100", "auto", "", "all", "²", "-1",
                               "99999999999999999999", "1:2"]))
    .map(lambda kv: f"{kv[0]}:{kv[1]}"),
    st.sampled_from(["manual_time", "real_time", "process_time", "noval", "::"]))
METRICS = ["ops_per_sec", "ops_per_sec_per_cpu", "faults_per_sec_per_cpu",
           "lookups_per_sec", "total_MBps", "busy_pct", "real_time", "cpu_time"]
RES_FIELDS = ["visits", "hold_ns", "wait_ns", "lines", "instances", "sleeps", "scope",
              "read_visits", "read_hold_ns"]


def names():
    """Benchmark names: model/workload/variant[/knob:value...][/suffixes],
    mostly well-formed, from small pools so that names repeat."""
    valid = st.builds(
        lambda head, knobs, threads: "/".join(list(head) + knobs + threads),
        st.tuples(st.sampled_from(["mnt_writers", "m"]), st.sampled_from(["openbench", "w"]),
                  st.sampled_from(["atomic", "percpu", "v"])),
        st.lists(st.sampled_from(["mounts:1", "mounts:2", "fs_io_us:100", "k:auto",
                                  "manual_time", "iterations:1"]), max_size=3),
        st.lists(st.sampled_from(["threads:1", "threads:2", "threads:4", "threads:32"]),
                 max_size=1))
    odd = st.builds(
        lambda head, knobs, threads: "/".join(head + knobs + threads),
        st.lists(SEGMENT, min_size=1, max_size=4),
        st.lists(KNOB, max_size=3),
        st.lists(st.sampled_from(["threads:1", "threads:2", "threads:4", "threads:0",
                                  "threads:x", "threads:100000", "threads:٣"]),
                 max_size=1))
    return st.one_of(valid, valid, valid, odd)


def numbers():
    """Mostly plausible measurements, sometimes absurd ones."""
    return st.one_of(st.floats(min_value=0, max_value=1e9), st.integers(0, 10 ** 6),
                     st.floats(min_value=0, max_value=1e9), pyfuzz.odd_values())


@st.composite
def rows(draw, name_pool):
    row = {"name": draw(st.sampled_from(name_pool) if draw(st.integers(0, 9))
                        else names() | pyfuzz.odd_values())}
    row["run_type"] = draw(st.sampled_from(["iteration"] * 6 + ["aggregate", "x", None]))
    if draw(st.integers(0, 9)) == 0:
        row["error_occurred"] = draw(st.sampled_from([True, 1, "yes", False]))
        row["error_message"] = draw(st.text(max_size=10) | pyfuzz.odd_values())
    for key in ("threads", "family_index", "repetitions", "time_unit", "iterations"):
        if draw(st.integers(0, 3)) == 0:
            row[key] = draw(st.integers(0, 4) | pyfuzz.odd_values())
    for metric in draw(st.lists(st.sampled_from(METRICS), max_size=4, unique=True)):
        row[metric] = draw(numbers())
    for key in ("steal_pct", "snapshot_late_us", "dcache_hit_ratio", "icache_hit_ratio",
                "io_sleep_ns_per_op", "io_read_ns"):
        if draw(st.integers(0, 3)) == 0:
            row[key] = draw(numbers())
    for res in draw(st.lists(st.sampled_from(["lock", "count", "x_read", "i"]), max_size=2,
                             unique=True)):
        for f in draw(st.lists(st.sampled_from(RES_FIELDS), max_size=6, unique=True)):
            row[f"res_{res}_{f}"] = draw(numbers())
    return row


CONTEXT_KEYS = ["kscale_allowed_cpus", "kscale_nodes", "kscale_threads_per_core",
                "kscale_line_ns_smt", "kscale_line_ns_node", "kscale_line_ns_remote",
                "kscale_primary_metric", "kscale_cpu_model", "kscale_kernel_release",
                "host_name", "mhz_per_cpu", "kscale_duration_s", "kscale_x_auto"]


def context_values():
    return st.one_of(st.sampled_from(["2", "1", "0", "none", "60", "56.8", "1.2.3", "",
                                      "none (nodes emulated)", "ops_per_sec",
                                      "faults_per_sec_per_cpu", "²", "4096", "1e400"]),
                     pyfuzz.odd_values())


@st.composite
def documents(draw):
    """A results document, as JSON bytes: a context and benchmark rows
    whose names are drawn from a small pool, so repetitions group."""
    pool = draw(st.lists(names(), min_size=1, max_size=4))
    doc = {}
    if draw(st.integers(0, 9)):
        doc["context"] = draw(st.dictionaries(st.sampled_from(CONTEXT_KEYS), context_values(),
                                              max_size=8) | pyfuzz.odd_values())
    if draw(st.integers(0, 19)):
        doc["benchmarks"] = draw(st.lists(rows(pool), max_size=12) if draw(st.integers(0, 9))
                                 else pyfuzz.odd_values())
    if draw(st.integers(0, 19)) == 0:
        doc = draw(pyfuzz.odd_values())
    text = json.dumps(doc, allow_nan=True, ensure_ascii=draw(st.booleans()))
    return text.encode("utf-8", "surrogatepass")


JSON_DICTIONARY = [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"-0", b"0",
                   b"1", b"-1", b"2", b"1e308", b"5e-324", b"9" * 30, b"9" * 5000, b"true",
                   b"false", b"null", b"[]", b"{}", b'""', b'"x"', b'"\\u0000"',
                   b'"\\ud800"', b'"a/b/c"', b'"a/b/c/threads:0"', b'"m/w/v/k:1"',
                   b'"none"', b'"2"', b'"\xc2\xb2"', b'"aggregate"', b'"iteration"',
                   b'"ops_per_sec"', b'"res_lock_visits"', b'"kscale_allowed_cpus"',
                   b'"threads"', b'"name"', b'"benchmarks"', b'"context"',
                   b'"error_occurred"', b'"a\\nb"', b"\xff\xfe", b'{"a":1,"a":2}']


KNOB_VALUES = st.sampled_from(["", "0", "-1", "auto", "all", "1e9", "1.5", "²", "٣", " ",
                               "99999999999999999999", "9" * 5000, "x:y", "\n"])


def knob_mutation(name):
    """A benchmark name with one knob's value replaced."""
    parts = name.split("/")
    knobs = [i for i, p in enumerate(parts) if i >= 3 and ":" in p]
    if not knobs:
        return st.just(name)
    return st.builds(lambda i, value: "/".join(
        parts[:i] + [parts[i].split(":", 1)[0] + ":" + value] + parts[i + 1:]),
        st.sampled_from(knobs), KNOB_VALUES)


def name_mutation(name):
    """A benchmark name with one segment replaced, added or dropped."""
    return st.builds(lambda i, seg, op: "/".join(
        (lambda parts: parts[:i % len(parts)] + ([seg] if op != "drop" else [])
         + parts[i % len(parts) + (op != "add"):])(name.split("/"))),
        st.integers(0, 12), SEGMENT | KNOB | st.sampled_from(["threads:3", "threads:0"]),
        st.sampled_from(["replace", "add", "drop"]))


@st.composite
def edited_documents(draw, seeds):
    """A corpus document with 1-4 of its fields given odd values: a
    context key, a row's counter, name, thread count or run type, rows
    dropped or repeated.  Unlike byte mutations, the rest stays valid."""
    doc = json.loads(draw(st.sampled_from(seeds)))
    rows = doc["benchmarks"]
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["context", "field", "field", "name", "knob", "drop",
                                   "repeat"]))
        row = rows[draw(st.integers(0, len(rows) - 1))] if rows else None
        if op == "context":
            key = draw(st.sampled_from(CONTEXT_KEYS + sorted(doc["context"])))
            doc["context"][key] = draw(context_values())
        elif op == "field" and row is not None:
            key = draw(st.sampled_from(sorted(row) + METRICS + ["threads", "family_index",
                                                                "run_type", "error_occurred"]))
            if draw(st.integers(0, 4)) == 0:
                row.pop(key, None)
            else:
                row[key] = draw(numbers())
        elif op in ("name", "knob") and row is not None:
            new = draw((name_mutation if op == "name" else knob_mutation)(row["name"]))
            for r in rows:  # every repetition of it
                if r["name"] == row["name"] and r is not row:
                    r["name"] = new
            row["name"] = new
        elif op == "drop" and rows:
            del rows[draw(st.integers(0, len(rows) - 1)):][:draw(st.integers(1, 8))]
        elif op == "repeat" and row is not None:
            rows.insert(draw(st.integers(0, len(rows))), dict(row))
    return json.dumps(doc, allow_nan=True).encode()


def results_inputs(*corpus_names):
    """Mutated corpus files, corpus documents with odd fields, generated
    documents."""
    seeds = pyfuzz.corpus(*corpus_names)
    return st.one_of(pyfuzz.mutated(seeds, JSON_DICTIONARY), edited_documents(seeds),
                     edited_documents(seeds), documents())
