"""lkp/jobs/kscale-seed-NAME.yaml against configs/seed-NAME.conf: each
job part (a '---' document) is a run line of the seed config on lkp's
terms (docs/lkp.md), so that the two cannot drift apart."""

import glob
import os
import unittest

from . import REPO  # (the package puts scripts/ on sys.path)

from kscale_analysis.config import Configs  # noqa: E402

# run line options that are not knobs of a job part
NOT_KNOBS = ("--variants", "--workloads", "--cpus", "--oversubscribe", "--duration",
             "--warmup", "--target-ci", "--max-repetitions")
DEFAULT_THREADS = ["1", "50%", "100%"]


def job_parts(path):
    """[{nr_threads: [...], bench: ..., knobs: ...}, ...]: each part with
    what it does not set from the first (lkp's defaults)."""
    parts, defaults = [], {}
    with open(path, encoding="utf-8") as f:
        documents = f.read().split("\n---\n")
    for document in documents:
        part, key = dict(defaults), None
        for line in document.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            if not line.startswith(" "):
                key, _, value = line.partition(":")
                if value.strip():
                    part[key] = [value.strip()] if key == "nr_threads" else value.strip()
                elif key == "nr_threads":
                    part[key] = []
            elif key == "nr_threads":
                part[key].append(line.strip().lstrip("- "))
            else:
                name, _, value = line.strip().partition(": ")
                part[name] = value
        defaults = defaults or {k: v for k, v in part.items() if k == "nr_threads"}
        parts.append(part)
    return parts


def knob_options(args):
    """{knob: values} of a run line's arguments: --mounts=1,2 -> mounts: 1,2,
    a flag (--migrate) 1."""
    knobs = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if key.startswith("--benchmark_") or key in NOT_KNOBS or key.startswith("--sim"):
            continue
        knobs[key[2:].replace("-", "_")] = value if sep else "1"
    return knobs


def threads(args):
    """A run line's --cpus as lkp's nr_threads: all*16 -> 1600%."""
    cpus = dict(a.split("=", 1) for a in args if "=" in a).get("--cpus")
    if cpus is None:
        return DEFAULT_THREADS
    return [f"{int(c[4:]) * 100}%" if c.startswith("all*") else c for c in cpus.split(",")]


def matches(part, args):
    """Whether the job part is the run line BINARY ARGS... on lkp's terms."""
    binary, *args = args
    options = dict(a.split("=", 1) for a in args if "=" in a)
    knobs = knob_options(args)
    part_knobs = dict(k.split(":", 1) for k in part.get("knobs", "").split())
    variants = options.get("--variants")
    return (part["bench"] == binary and part["duration"] == options["--duration"] and
            part["warmup"] == options["--warmup"] and
            part["repetitions"] == options["--benchmark_repetitions"] and
            part["nr_threads"] == threads(args) and
            options.get("--workloads") in (None, part.get("workload")) and
            (variants is None) == ("variants" not in part) and
            set(part.get("variants", "").split(",")) <= set((variants or "").split(",")) and
            set(part_knobs) == set(knobs))


class LkpJobsTest(unittest.TestCase):
    def test_a_job_per_seed_config(self):
        configs = glob.glob(os.path.join(REPO, "configs", "seed-*.conf"))
        jobs = glob.glob(os.path.join(REPO, "lkp", "jobs", "kscale-seed-*.yaml"))
        self.assertEqual(sorted(os.path.basename(c)[:-5] for c in configs),
                         sorted(os.path.basename(j)[len("kscale-"):-5] for j in jobs))

    def test_each_part_is_a_run_line(self):
        for path in glob.glob(os.path.join(REPO, "lkp", "jobs", "kscale-seed-*.yaml")):
            name = os.path.basename(path)[len("kscale-"):-len(".yaml")]
            configs = Configs(REPO)
            configs.load(os.path.join(REPO, "configs", f"{name}.conf"))
            runs = [configs.run_args[name, label] for c, label in configs.run_args if c == name]
            # a knob's values: those of the config's run lines
            values = {}
            for args in runs:
                for knob, value in knob_options(args[1:]).items():
                    values.setdefault(knob, set()).update(value.split(","))
            for i, part in enumerate(job_parts(path)):
                with self.subTest(job=name, part=i):
                    self.assertTrue(any(matches(part, args) for args in runs), part)
                    for knob in part.get("knobs", "").split():
                        key, value = knob.split(":", 1)
                        self.assertLessEqual(set(value.split(",")), values[key], knob)
