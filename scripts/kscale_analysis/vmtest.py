"""kscale vm-test: the bench, torture and validation binaries on a many-CPU,
many-node guest under qemu (software emulation), checked item by item.

The host builds an initramfs (busybox-static, the binaries and the shared
libraries they load, scripts/vm/init), boots Debian's cloud kernel, taken
from its package with dpkg-deb -x, on the topology the flags give, and
reads the guest's outputs back (a gzipped tar in base64 between two
markers on a second serial port: a serial port needs no guest driver, and
the outputs are a few MB at most).  The guest only runs commands, with
the lists and counts written here into its /kscale/args; every judgement
is made here, against what qemu was told.  Guest timings under
emulation are meaningless, so nothing timed is judged.
"""

import base64
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass

from . import cli
from .models import MODELS
from .results import KscaleError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
BENCHES = MODELS + ["primitives"]
# test_sched is left out: its checks time host sleeps and wake-ups, which
# emulation stretches past its limits (it ran over 240 s on 16 vCPUs)
UNITS = ["test_topology", "test_percpu"]
KERNEL_META = "linux-image-cloud-amd64"
BEGIN, END = "KSCALE-OUT-BEGIN", "KSCALE-OUT-END"
# Multi-threaded TCG hung 64-vCPU guests of the 6.1 kernel in late init
# in 8 boots of 13: right after "sched_clock: Marking stable", whose
# static key is patched into every CPU (text_poke_bp(), an IPI to each).
# Single-threaded TCG has not (6 boots of 6; Machine.tcg_threads), and
# should a boot hang before /init, where no kscale code has run yet, it
# is booted again, saying so (the console is not quiet: the line names
# where).
BOOTS = 3

# A window goes on until every thread counted: the bound costs a run
# nothing unless a thread is starved, so it is one the host's turns and
# load cannot reach (the load average is a minute's, read at the start).
UNTIL_COUNTED_MIN = 60.0


@dataclass
class Machine:
    """What qemu is told: CPUs numbered thread, core, socket; a socket a node."""
    cpus: int
    nodes: int
    threads_per_core: int
    mem_per_node: int	# MiB

    @property
    def plan_counts(self):
        """1, 8, 9 and all threads where they fit; else a node, a node and
        one, all (16 CPUs of 4 nodes: 1, 4, 5, 8, 9, 16)."""
        per = self.cpus_per_node
        return sorted({n for n in (1, 8, 9, per, per + 1, self.cpus) if n <= self.cpus})

    @property
    def bench_counts(self):
        """1, 8, all, and 4x all on the model scheduler."""
        return (1, 8, self.cpus, 4 * self.cpus)

    @property
    def hole_counts(self):
        """With CPU 1 offline: 1, all the others, and 4x them."""
        return (1, self.cpus - 1, 4 * (self.cpus - 1))

    def until_counted(self, host_threads, window, load):
        """How long a window may go on for every thread to count
        (--window-until-counted): the window, stretched by what all the
        vCPUs overcommit the host_threads qemu runs them on and by the
        host's load (runnable tasks a host CPU, at least 1) that shares
        those, so that each thread may have had window's worth of a host
        CPU; and never under UNTIL_COUNTED_MIN.  Without the load,
        beside two busy loops and five builds (load 28 on 2 CPUs) a
        real_lookup and a primitives row ended with a thread at 0;
        without the floor, CI's 0.5 s (0.1 s, stretched to 0.4 s) ended
        rwsem's fio/v5.3 at 16 tasks on 4 vCPUs with one at 0."""
        return max(UNTIL_COUNTED_MIN,
                   window * max(1, -(-self.cpus // host_threads)) * max(1.0, load))

    @property
    def profile_counts(self):
        """Three counts or more for predict's validation and USL fit."""
        return sorted({1, 2, max(self.cpus // 2, 1), self.cpus})

    @property
    def cpus_per_node(self):
        return self.cpus // self.nodes

    def node_of(self, cpu):
        return cpu // self.cpus_per_node

    def siblings(self, cpu):
        first = cpu - cpu % self.threads_per_core
        return list(range(first, first + self.threads_per_core))

    def order(self, placement):
        """The documented plan (docs/cli.md): compact fills node 0 first,
        spread takes one CPU of each node in turn, each node's in order."""
        by_node = [[c for c in range(self.cpus) if self.node_of(c) == n]
                   for n in range(self.nodes)]
        if placement == "compact":
            return [c for cpus in by_node for c in cpus]
        return [cpus[i] for i in range(self.cpus_per_node) for cpus in by_node]

    def sweep(self, placement):
        """--cpus=sweep: the powers of two below all, each node boundary
        of the placement (spread: the node count), all."""
        counts = {n for n in (2 ** k for k in range(16)) if n < self.cpus}
        if placement == "compact":
            counts |= {k * self.cpus_per_node for k in range(1, self.nodes)}
        else:
            counts.add(self.nodes)
        return sorted(counts | {self.cpus})

    def tcg_threads(self, host_cpus):
        """A host thread a vCPU where each has a host CPU of its own, up
        to 16 vCPUs; otherwise one thread for all.  Multi-threaded TCG
        hung 64-vCPU boots 8 times in 13 (BOOTS), and its threads
        contending qemu's lock reached /init later (60-100 s, against
        20-57 s single-threaded); single-threaded, a spinning vCPU holds
        the one thread for its turn, so lock handoffs take a round of
        every vCPU: torture on 12 vCPUs ran over 13 min (27 s on 4
        multi-threaded).  But vCPU threads beyond the host's CPUs are
        preempted by the host inside the model's spinlock sections: on 2
        host CPUs, 4 vCPUs ran real_lookup's sharded, immutable and
        parallel rows at 113-12,000 ops/s against 78,000-350,000
        single-threaded, and left a thread at 0 in 1 run of 3."""
        return "multi" if self.cpus <= min(16, host_cpus) else "single"

    def qemu_args(self):
        sockets, per = self.nodes, self.cpus_per_node
        args = ["-smp", f"{self.cpus},sockets={sockets},cores="
                f"{per // self.threads_per_core},threads={self.threads_per_core}",
                "-m", f"{self.mem_per_node * self.nodes}M"]
        for n in range(self.nodes):
            args += ["-object", f"memory-backend-ram,id=m{n},size={self.mem_per_node}M",
                     "-numa", f"node,nodeid={n},cpus={n * per}-{n * per + per - 1},"
                     f"memdev=m{n}"]
        return args


def parse_args(argv):
    p = cli.ArgumentParser(
        prog="kscale vm-test",
        description="Boot a many-CPU, many-node guest under qemu (TCG), run "
        "the checklist (docs/vm-test.md) on the bench, torture and validation "
        "binaries there and judge it here; exit 1 naming each item that "
        "failed, 2 on bad input.")
    p.add_argument("--cpus", type=int, default=64, metavar="N",
                   help="guest CPUs (default 64)")
    p.add_argument("--nodes", type=int, default=8, metavar="N",
                   help="guest NUMA nodes, a socket each (default 8)")
    p.add_argument("--threads-per-core", type=int, default=2, metavar="N",
                   help="SMT threads a core (default 2)")
    p.add_argument("--mem-per-node", type=int, default=512, metavar="MIB",
                   help="memory a node, MiB (default 512)")
    p.add_argument("--duration", type=float, default=0.4, metavar="S",
                   help="the benches' window in the guest, warm-up half of it, "
                   "going on until every thread counted for at most S times "
                   "the vCPUs a host thread runs (default 0.4; docs/vm-test.md)")
    p.add_argument("--torture-seconds", type=float, default=1.0, metavar="S",
                   help="torture's seconds a variant in the guest (default 1)")
    p.add_argument("--item-timeout", type=float, default=1800, metavar="S",
                   help="kill a guest item after S seconds (default 1800)")
    p.add_argument("--timeout", type=float, default=7200, metavar="S",
                   help="give up on the guest after S seconds (default 7200)")
    p.add_argument("--boot-timeout", type=float, metavar="S",
                   help="boot again if /init has not started in S seconds "
                   "(default 300, or 5 s a CPU past 60 CPUs), at most 3 boots")
    p.add_argument("--tcg-threads", choices=("auto", "single", "multi"),
                   default="auto",
                   help="qemu's TCG threads: one a vCPU (multi) or one for "
                   "all (single); auto: multi up to 16 CPUs where each has a "
                   "host CPU, else single "
                   "(docs/vm-test.md, \"How\")")
    p.add_argument("--only", metavar="ITEM,...",
                   help="run and judge only these items of the checklist: "
                   + ", ".join(i.key for i in ITEMS) + " (default all)")
    p.add_argument("--keep", metavar="DIR",
                   help="keep the guest's outputs and serial log in DIR")
    p.add_argument("--judge", metavar="DIR",
                   help="judge the outputs a --keep=DIR run kept, without a guest")
    p.add_argument("--build", default=os.path.join(ROOT, "build"), metavar="DIR",
                   help="the build directory (default <repo>/build)")
    a = p.parse_args(argv)
    a.items = selected(a.only)
    for name in ("cpus", "nodes", "threads_per_core", "mem_per_node"):
        if getattr(a, name) < 1:
            raise KscaleError(f"--{name.replace('_', '-')}={getattr(a, name)}: "
                              "expected a positive number")
    if a.cpus % a.nodes or (a.cpus // a.nodes) % a.threads_per_core:
        raise KscaleError(f"--cpus={a.cpus} must be a multiple of --nodes={a.nodes} "
                          f"times --threads-per-core={a.threads_per_core}")
    if a.mem_per_node < 128:
        raise KscaleError(f"--mem-per-node={a.mem_per_node}: at least 128 MiB")
    host_cpus = len(os.sched_getaffinity(0))
    if a.tcg_threads == "auto":
        a.tcg_threads = Machine(a.cpus, a.nodes, a.threads_per_core,
                                a.mem_per_node).tcg_threads(host_cpus)
    # the host threads the vCPUs share, and their load (Machine.until_counted)
    a.host_threads = 1 if a.tcg_threads == "single" else min(a.cpus, host_cpus)
    a.host_load = os.getloadavg()[0] / host_cpus
    if a.boot_timeout is None:
        a.boot_timeout = max(300, 5 * a.cpus)
    if min(a.duration, a.torture_seconds, a.item_timeout, a.timeout,
           a.boot_timeout) <= 0:
        raise KscaleError("--duration, --torture-seconds, --item-timeout, "
                          "--timeout and --boot-timeout must be positive")
    return a


def run_quiet(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if r.returncode:
        raise KscaleError(f"{' '.join(cmd)}: {r.stdout.strip() or r.returncode}", 1)
    return r.stdout


def kernel(cache):
    """Debian's cloud kernel, extracted (not installed) once into cache."""
    deps = run_quiet(["apt-cache", "depends", KERNEL_META])
    m = re.search(r"Depends: (linux-image-\S+)", deps)
    if not m:
        raise KscaleError(f"apt-cache depends {KERNEL_META}: no kernel image", 1)
    image = os.path.join(cache, m.group(1))
    vmlinuz = [f for f in os.listdir(os.path.join(image, "boot"))
               if f.startswith("vmlinuz-")] if os.path.isdir(image) else []
    if vmlinuz:
        return os.path.join(image, "boot", vmlinuz[0])
    os.makedirs(cache, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        run_quiet(["apt-get", "download", m.group(1)], cwd=tmp)
        deb = [f for f in os.listdir(tmp) if f.endswith(".deb")][0]
        run_quiet(["dpkg-deb", "-x", os.path.join(tmp, deb), os.path.join(tmp, "x")])
        os.replace(os.path.join(tmp, "x"), image)
    return kernel(cache)


def libraries(binary):
    """The shared libraries binary loads, as ldd resolves them."""
    out = run_quiet(["ldd", binary])
    return re.findall(r"(/\S+) \(0x", out)


def initramfs(build, machine, args, path):
    """An initramfs of busybox, the binaries, their libraries and the init."""
    with tempfile.TemporaryDirectory() as tree:
        binaries = [os.path.join(build, "bench", b) for b in BENCHES]
        binaries.append(os.path.join(build, "torture", "torture"))
        # rwsem's fio variant runs the real fio on the guest's tmpfs
        if shutil.which("fio"):
            binaries.append(shutil.which("fio"))
        units = [os.path.join(build, "tests", u) for u in UNITS]
        for d in ("bin", "kscale/bin", "kscale/tests"):
            os.makedirs(os.path.join(tree, d))
        shutil.copy("/bin/busybox", os.path.join(tree, "bin"))
        for applet in run_quiet(["/bin/busybox", "--list"]).split():
            if applet != "busybox":
                os.symlink("busybox", os.path.join(tree, "bin", applet))
        libs = set()
        for b in binaries + units:
            if not os.access(b, os.X_OK):
                raise KscaleError(f"{os.path.relpath(b)}: not built (kscale setup)")
            sub = "tests" if b in units else "bin"
            shutil.copy(b, os.path.join(tree, "kscale", sub))
            libs.update(libraries(b))
        for lib in libs:
            dest = os.path.join(tree, lib.lstrip("/"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy(os.path.realpath(lib), dest)
        shutil.copy(os.path.join(ROOT, "scripts", "vm", "init"), os.path.join(tree, "init"))
        with open(os.path.join(tree, "kscale", "args"), "w") as f:
            f.write(f"CPUS={machine.cpus}\nBENCHES='{' '.join(BENCHES)}'\n"
                    f"UNITS='{' '.join(UNITS)}'\n"
                    f"BENCH_COUNTS={','.join(map(str, machine.bench_counts))}\n"
                    f"PLAN_COUNTS={','.join(map(str, machine.plan_counts))}\n"
                    f"PROFILE_COUNTS={','.join(map(str, machine.profile_counts))}\n"
                    f"HOLE_COUNTS={','.join(map(str, machine.hole_counts))}\n"
                    f"TORTURE_SECONDS={args.torture_seconds:g}\n"
                    f"ITEM_TIMEOUT={args.item_timeout:g}\n"
                    f"DURATION={args.duration:g}\nWARMUP={args.duration / 2:g}\n"
                    f"UNTIL_COUNTED={machine.until_counted(args.host_threads, args.duration, args.host_load):g}\n"
                    f"RUNS='{' '.join(r for i in args.items for r in i.runs)}'\n")
        files = subprocess.run(["find", "."], cwd=tree, stdout=subprocess.PIPE,
                               check=True).stdout
        with open(path, "wb") as out:
            cpio = subprocess.Popen(["/bin/busybox", "cpio", "-o", "-H", "newc"],
                                    cwd=tree, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            gz = subprocess.Popen(["gzip", "-1"], stdin=cpio.stdout, stdout=out)
            cpio.stdout.close()
            cpio.stdin.write(files)
            cpio.stdin.close()
            if cpio.wait() or gz.wait():
                raise KscaleError("building the initramfs failed", 1)


class BootHung(Exception):
    """The guest kernel never ran /init's first item."""


class Guest:
    """qemu in its own session: killed with its group on every exit."""

    def __init__(self, cmd, serial):
        self.serial, self.items = serial, 0
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)

    def wait(self, timeout, boot_timeout):
        """qemu's exit status; the guest's items on stderr as they start.
        BootHung if /init has not started its first item in boot_timeout."""
        start, seen = time.monotonic(), 0
        while self.proc.poll() is None:
            elapsed = time.monotonic() - start
            if elapsed > timeout:
                self.kill()
                raise KscaleError(f"the guest did not finish in {timeout:g} s "
                                  f"(last console line: {last_line(self.serial)!r})", 1)
            if not self.items and elapsed > boot_timeout:
                self.kill()
                raise BootHung()
            seen = self.progress(seen)
            time.sleep(1)
        self.progress(seen)
        return self.proc.returncode

    def progress(self, seen):
        try:
            with open(self.serial, "rb") as f:
                f.seek(seen)
                new = f.read()
        except OSError:
            return seen
        done = new.rfind(b"\n") + 1
        for line in new[:done].decode(errors="replace").splitlines():
            if line.startswith("kscale-vm: "):
                self.items += 1
                print(f"kscale vm-test: guest: {line[11:].strip()}",
                      file=sys.stderr, flush=True)
        return seen + done

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def stuck_line(path):
    """The console's first BUG or stall report, else its last line."""
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if re.search(r"BUG:|Kernel panic|rcu: INFO|blocked for more than", line):
                    return line.strip()
    except OSError:
        pass
    return last_line(path)


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def outputs(data, serial, into):
    """The guest's /out, from the data port between the markers."""
    with open(data, errors="replace") as f:
        text = f.read().replace("\r", "")
    if BEGIN not in text or END not in text.split(BEGIN, 1)[1]:
        raise KscaleError("the guest wrote no results (last console line: "
                          f"{last_line(serial)!r})", 1)
    data = text.split(BEGIN, 1)[1].split(END, 1)[0]
    blob = base64.b64decode("".join(data.split()))
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into)
    return os.path.join(into, "out")


class Outputs:
    def __init__(self, out):
        self.dir = out

    def text(self, item):
        path = os.path.join(self.dir, f"{item}.out")
        if not os.path.exists(path):
            raise Failed(f"{item}: not run")
        with open(path, errors="replace") as f:
            return f.read()

    def rc(self, item):
        with open(os.path.join(self.dir, f"{item}.rc")) as f:
            return int(f.read())

    def ok(self, item):
        """item's output, if it exited 0 and printed no BUG."""
        text, rc = self.text(item), self.rc(item)
        if rc == 143:
            raise Failed(f"{item} did not finish in --item-timeout: {tail(text)}")
        if rc:
            raise Failed(f"{item} exited {rc}: {tail(text)}")
        bug = re.search(r"^.*\bBUG\b.*$", text, re.M)
        if bug:
            raise Failed(f"{item}: {bug.group(0)}")
        return text

    def json(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return json.load(f)


class Failed(Exception):
    pass


def tail(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def plans(text):
    """--dry-run's plans: {threads: [(cpu, node)]}, and its first line."""
    out, threads = {}, None
    for line in text.splitlines():
        m = re.match(r"threads (\d+):", line)
        if m:
            threads = int(m.group(1))
            out[threads] = []
        m = re.match(r"\s+thread (\d+) -> cpu (\d+) -> node (\d+)", line)
        if m:
            out[threads].append((int(m.group(2)), int(m.group(3))))
    return out, text.splitlines()[0] if text else ""


def sysfs(o, item):
    """The guest's sysfs() lines: {cpu: (node, siblings)}, and its
    possible and online lists."""
    seen, cpus = {}, {}
    for line in o.ok(item).splitlines():
        # an offline CPU has no node link, and may have no siblings
        m = re.match(r"cpu (\d+) node (\d*) siblings ?(\S*)", line)
        if m:
            seen[int(m.group(1))] = (int(m.group(2)) if m.group(2) else None,
                                     m.group(3))
        elif line.startswith(("possible ", "online ")):
            cpus[line.split()[0]] = line.split()[1]
    return seen, cpus


def dry_run(o, item, cpus, nodes):
    """--dry-run's plans, once its first line says cpus CPUs on nodes."""
    plan, head = plans(o.ok(item))
    want_head = f"{cpus} CPUs allowed on {nodes} node(s)"
    if want_head not in head:
        raise Failed(f"--dry-run says {head!r}, not {want_head!r}")
    return plan


def check_topology(m, o):
    """The guest kernel's topology is qemu's, and kscale's is the kernel's."""
    seen, cpus = sysfs(o, "sysfs")
    for kind in ("possible", "online"):
        if cpus.get(kind) != f"0-{m.cpus - 1}":
            raise Failed(f"guest kernel's {kind} CPUs {cpus.get(kind)}, "
                         f"qemu was told 0-{m.cpus - 1}")
    for cpu in range(m.cpus):
        sib = m.siblings(cpu)
        want = (m.node_of(cpu), f"{sib[0]}-{sib[-1]}" if len(sib) > 1 else str(cpu))
        if seen.get(cpu) != want:
            raise Failed(f"cpu {cpu}: guest kernel says node/siblings {seen.get(cpu)}, "
                         f"qemu was told {want}")
    plan = dry_run(o, "plan-compact", m.cpus, m.nodes)
    for cpu, node in plan[m.cpus]:
        if node != m.node_of(cpu):
            raise Failed(f"kscale puts cpu {cpu} on node {node}, qemu on {m.node_of(cpu)}")
    ctx = o.json("profile.json")["context"]
    if int(ctx.get("kscale_threads_per_core", 0)) != m.threads_per_core:
        raise Failed(f"kscale_threads_per_core {ctx.get('kscale_threads_per_core')}, "
                     f"qemu {m.threads_per_core}")
    if int(ctx.get("kscale_nodes", 0)) != m.nodes:
        raise Failed(f"kscale_nodes {ctx.get('kscale_nodes')}, qemu {m.nodes}")
    return f"{m.cpus} CPUs, {m.nodes} nodes, {m.threads_per_core} threads a core"


def check_placement(policy):
    def check(m, o):
        plan, _ = plans(o.ok(f"plan-{policy}"))
        order = m.order(policy)
        for n in m.plan_counts:
            want = [(c, m.node_of(c)) for c in order[:n]]
            if plan.get(n) != want:
                got = plan.get(n) or []
                i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                         min(len(got), len(want)))
                raise Failed(f"{n} threads: thread {i} -> "
                             f"{got[i] if i < len(got) else None}, the docs say "
                             f"{want[i] if i < len(want) else None}")
        return (f"{', '.join(map(str, m.plan_counts))} threads where "
                "bench-flags.md says")
    return check


def check_sweep(m, o):
    for policy in ("compact", "spread"):
        text = o.ok(f"sweep-{policy}")
        got = re.search(r"thread counts \(--cpus=sweep\): (\S+)", text)
        want = m.sweep(policy)
        if not got or [int(x) for x in got.group(1).split(",")] != want:
            raise Failed(f"{policy}: sweep {got.group(1) if got else None}, "
                         f"want {','.join(map(str, want))}")
    return f"compact {','.join(map(str, m.sweep('compact')))}"


def check_unit(name):
    def check(m, o, item=f"unit-{name}"):
        text = o.ok(item)
        passed = re.search(r"\[  PASSED  \] (\d+) test", text)
        if not passed or "FAILED" in text:
            raise Failed(f"{name}: {tail(text)}")
        return f"{passed.group(1)} tests passed"
    return check


def check_linelat(m, o):
    """Each class the machine has is measured, and none it has not."""
    ctx = o.json("profile.json")["context"]
    has = {"smt": m.threads_per_core > 1,
           "node": m.cpus_per_node > m.threads_per_core,
           "remote": m.nodes > 1}
    for kind, want in has.items():
        v = ctx.get(f"kscale_line_ns_{kind}", "missing")
        try:
            float(v)
            measured = True
        except ValueError:
            measured = False
        if measured != want:
            raise Failed(f"kscale_line_ns_{kind} is {v!r} on a machine "
                         f"{'with' if want else 'without'} such a pair")
    pairs = ctx.get("kscale_line_pairs", "")
    for kind, a, b in re.findall(r"(\w+) (\d+)-(\d+)", pairs):
        a, b = int(a), int(b)
        right = {"smt": b in m.siblings(a),
                 "node": b not in m.siblings(a) and m.node_of(a) == m.node_of(b),
                 "remote": m.node_of(a) != m.node_of(b)}[kind]
        if not right:
            raise Failed(f"{kind} pair {a}-{b}: nodes {m.node_of(a)}, {m.node_of(b)}, "
                         f"siblings of {a} {m.siblings(a)}")
    return pairs


def listed_variants(text):
    return [line.split()[1] for line in text.splitlines()
            if line.startswith("  variant ")]


def check_bench(bench):
    def check(m, o):
        text = o.ok(f"bench-{bench}")
        if re.search(r"watchdog", text, re.I):
            raise Failed(f"{bench}: {re.search(r'^.*watchdog.*$', text, re.I | re.M).group(0)}")
        doc = o.json(f"bench-{bench}.json")
        rows = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
        ctx = doc["context"]
        counts = m.bench_counts
        # the running kernel's rows are run, not judged on their fairness
        host = set(ctx.get("kscale_host_variants", "").split(","))
        ran, skipped, few, kernel = 0, [], [], []
        for variant in listed_variants(o.ok(f"list-{bench}")):
            mine = [b for b in rows if b["name"].split("/")[2] == variant]
            if not mine:
                if f"kscale_skipped_{variant}" not in ctx:
                    raise Failed(f"{bench}/{variant}: no rows and no reason given")
                skipped.append(variant)
                continue
            for n in counts:
                at = [b for b in mine if b["threads"] == n]
                if not at:
                    raise Failed(f"{bench}/{variant}: no row at {n} threads")
                for b in at:
                    if sane(bench, b, variant not in host, window_s(doc, b)):
                        (kernel if variant in host else few).append(
                            f"{variant}@{n}")
            ran += 1
        if not ran:
            raise Failed(f"{bench}: no variant ran")
        return (f"{ran} variants at {', '.join(map(str, counts))} threads" +
                (f"; skipped in the guest: {', '.join(skipped)}" if skipped else "") +
                (f"; a thread at 0 of under {FEW_OPS} operations a thread in the "
                 f"window, not judged (docs/vm-test.md): {', '.join(few)}" if few else "") +
                (f"; a thread at 0 in the guest kernel's own rows, not judged "
                 f"(docs/vm-test.md): {', '.join(kernel)}" if kernel else ""))
    return check


# Below this many operations a thread in a window, a thread at 0 is what
# chance gives as well as a starved or uncounted thread: 12 threads
# sharing 26 operations (real_lookup's sharded in a 12-vCPU guest, its
# locks handed between vCPUs the host runs in turn) left one at 0.
FEW_OPS = 10


def window_s(doc, b):
    """Row b's window, s, where a thread did nothing in it: it went on
    for as long as --window-until-counted let that row (until_counted_s:
    a host row's does not go on)."""
    return float(doc["context"]["kscale_duration_s"]) + b["until_counted_s"]


def sane(bench, b, strict, window):
    """Counters a model can have, and work done; None if every thread did
    some (fairness > 0), else "not judged" where not strict (the guest
    kernel's rows), "few" where the window's operations were under
    FEW_OPS a thread."""
    name = f"{bench} {b['name']}"
    if b.get("error_occurred"):
        raise Failed(f"{name}: {b.get('error_message')}")
    for key, v in b.items():
        if isinstance(v, (int, float)) and not 0 <= v < float("inf"):
            raise Failed(f"{name}: {key} = {v}")
    if not b.get("iterations") or not 0 <= b.get("fairness", -1) <= 1:
        raise Failed(f"{name}: no iterations or fairness {b.get('fairness')}")
    if b["fairness"] > 0:
        return None
    if not strict:
        return "not judged"
    if b.get("ops_per_sec", 0) * window < FEW_OPS * b["threads"]:
        return "few"
    raise Failed(f"{name}: fairness 0: a thread did nothing")


def check_hole(m, o):
    """CPU 1 offline: kscale sees the others, ids as they are, and the
    model scheduler runs on them (its per-CPU arrays indexed by id)."""
    if m.cpus <= 2:
        return "not made: 2 CPUs or fewer"
    _, cpus = sysfs(o, "hole-sysfs")
    want = {"possible": f"0-{m.cpus - 1}", "online": f"0,2-{m.cpus - 1}"}
    if cpus != want:
        raise Failed(f"guest kernel's CPUs {cpus}, after cpu1 went offline {want}")
    plan = dry_run(o, "hole-plan", m.cpus - 1, m.nodes)
    order = [c for c in m.order("compact") if c != 1]
    if plan.get(m.cpus - 1) != [(c, m.node_of(c)) for c in order]:
        raise Failed(f"{m.cpus - 1} threads placed on {plan.get(m.cpus - 1)}")
    doc = o.json("hole-bench.json")
    o.ok("hole-bench")
    rows = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
    few = []
    for n in m.hole_counts:
        at = [b for b in rows if b["threads"] == n]
        if not at:
            raise Failed(f"primitives: no row at {n} threads")
        for b in at:
            if sane("primitives", b, True, window_s(doc, b)) == "few":
                few.append(n)
    check_unit("test_percpu")(m, o, item="hole-percpu")
    return (f"{m.cpus - 1} CPUs 0,2-{m.cpus - 1}: plan, primitives at "
            f"{', '.join(map(str, m.hole_counts))} threads, test_percpu" +
            (f"; a thread at 0 of under {FEW_OPS} operations a thread at "
             f"{', '.join(map(str, few))}, not judged" if few else ""))


def check_torture(m, o):
    listing = o.ok("torture-list").splitlines()
    posted = {line.split()[0] for line in listing if " posted bug: " in line}
    text = o.text("torture")
    want = len(listing) - len(posted)
    ok = len(re.findall(r"End of test: SUCCESS", text))
    fails = [line for line in text.splitlines()
             if line.split("-torture:")[0] not in posted and
             (re.search(r" Fail: [1-9]", line) or "FAILURE" in line)]
    caught = sum("FAILURE, as expected" in line for line in text.splitlines())
    if caught != len(posted):
        raise Failed(f"{caught} of {len(posted)} posted bugs caught")
    if o.rc("torture") or re.search(r"\bBUG\b", text):
        raise Failed(f"torture exited {o.rc('torture')}: {tail(text)}")
    if fails or ok != want:
        raise Failed(f"{ok} of {want} SUCCESS: {fails[0] if fails else tail(text)}")
    tasks = re.search(r"nr_tasks=(\d+) nr_cpus=(\d+)", text)
    if not tasks or int(tasks.group(2)) != m.cpus:
        raise Failed(f"torture ran on {tasks.group(2) if tasks else '?'} CPUs")
    return f"{ok} variants SUCCESS, {tasks.group(1)} tasks on {tasks.group(2)} CPUs"


def check_predict(m, o):
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([os.path.join(ROOT, "scripts", "kscale-predict"),
                            os.path.join(o.dir, "profile.json"), f"--out-dir={tmp}"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        raise Failed(f"kscale predict exited {r.returncode}: {tail(r.stdout)}")
    if "USL" not in r.stdout:
        raise Failed("kscale predict fitted no USL")
    if "validation" not in r.stdout:
        raise Failed("kscale predict printed no validation")
    return "validation and USL fit printed"


@dataclass
class Item:
    key: str		# --only's name for it
    name: str		# its line's
    check: object
    runs: tuple		# the guest's items (scripts/vm/init) it judges


ITEMS = [
    Item("topology", "topology", check_topology,
         ("sysfs", "plan-compact", "profile")),
    Item("placement-compact", "placement compact", check_placement("compact"),
         ("plan-compact",)),
    Item("placement-spread", "placement spread", check_placement("spread"),
         ("plan-spread",)),
    Item("sweep", "sweep", check_sweep, ("sweep-compact", "sweep-spread")),
    Item("test_percpu", "memory on its node (test_percpu)",
         check_unit("test_percpu"), ("unit-test_percpu",)),
    Item("test_topology", "topology validation (test_topology)",
         check_unit("test_topology"), ("unit-test_topology",)),
    Item("linelat", "linelat classes", check_linelat, ("profile",)),
] + [Item(f"bench-{b}", f"bench {b}", check_bench(b), (f"list-{b}", f"bench-{b}"))
     for b in BENCHES] + [
    Item("torture", "torture", check_torture, ("torture", "torture-list")),
    Item("hole", "a CPU offline (cpu1)", check_hole,
         ("hole-sysfs", "hole-plan", "hole-bench", "hole-percpu")),
    Item("predict", "predict", check_predict, ("profile",)),
]


def selected(only):
    """The items --only names (all if None), in the checklist's order."""
    if only is None:
        return ITEMS
    keys = [k for k in only.split(",") if k]
    known = {i.key for i in ITEMS}
    bad = [k for k in keys if k not in known]
    if bad or not keys:
        raise KscaleError(f"--only={only}: no such item {', '.join(bad) or '(none)'}; "
                          f"the items are {', '.join(i.key for i in ITEMS)}")
    return [i for i in ITEMS if i.key in keys]


def judge(machine, out, items=ITEMS):
    """Each item's line; the names of those that failed."""
    o, failed = Outputs(out), []
    for name, check in ((i.name, i.check) for i in items):
        try:
            print(f"ok: {name}: {check(machine, o)}", flush=True)
        except (Failed, KeyError, ValueError, OSError) as e:
            print(f"FAIL: {name}: {e}", flush=True)
            failed.append(name)
    return failed


def vm_test(argv):
    a = parse_args(argv)
    machine = Machine(a.cpus, a.nodes, a.threads_per_core, a.mem_per_node)
    if a.judge:
        failed = judge(machine, a.judge, a.items)
        if failed:
            raise KscaleError(f"failed: {', '.join(failed)}", 1)
        return
    for tool in ("qemu-system-x86_64", "/bin/busybox"):
        if not shutil.which(tool):
            raise KscaleError(f"{tool} missing (kscale setup installs it)")
    start = time.monotonic()
    vmlinuz = kernel(os.path.join(a.build, "vm"))
    work = tempfile.mkdtemp(prefix="kscale-vm.")
    guest = None

    def stop(signum, frame):
        raise KscaleError(f"interrupted by {signal.Signals(signum).name}", 128 + signum)

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        initrd = os.path.join(work, "initrd.gz")
        initramfs(a.build, machine, a, initrd)
        serial = os.path.join(work, "console.log")
        data = os.path.join(work, "data.log")
        cmd = ["qemu-system-x86_64", "-accel", f"tcg,thread={a.tcg_threads}",
               "-cpu", "max,vendor=GenuineIntel", *machine.qemu_args(),
               "-kernel", vmlinuz, "-initrd", initrd,
               # tsc=reliable: emulation's skewed TSC was marked unstable
               # and every clock read became an emulated HPET's
               "-append", "console=ttyS0 panic=-1 oops=panic tsc=reliable",
               "-display", "none", "-no-reboot", "-monitor", "none",
               "-serial", f"file:{serial}", "-serial", f"file:{data}"]
        print(f"kscale vm-test: booting {machine.cpus} CPUs, {machine.nodes} nodes, "
              f"{machine.threads_per_core} threads a core, {machine.mem_per_node} MiB a "
              f"node (qemu TCG, {a.tcg_threads}-threaded)", file=sys.stderr, flush=True)
        for boot in range(1, BOOTS + 1):
            guest = Guest(cmd, serial)
            try:
                rc = guest.wait(a.timeout, a.boot_timeout)
                break
            except BootHung:
                print(f"kscale vm-test: boot {boot}: the guest kernel did not reach "
                      f"/init in {a.boot_timeout:g} s ({stuck_line(serial)!r}); "
                      "qemu killed", file=sys.stderr, flush=True)
        else:
            raise KscaleError(f"the guest kernel did not reach /init in {BOOTS} boots", 1)
        if rc:
            raise KscaleError(f"qemu exited {rc}: {guest.proc.stderr.read().strip()}", 1)
        out = outputs(data, serial, work)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            shutil.copytree(out, a.keep, dirs_exist_ok=True)
            shutil.copy(serial, a.keep)
        guest_s = time.monotonic() - start
        failed = judge(machine, out, a.items)
    finally:
        if guest:
            guest.kill()
        shutil.rmtree(work, ignore_errors=True)
        for s, h in old.items():
            signal.signal(s, h)
    print(f"kscale vm-test: {len(a.items) - len(failed)} of {len(a.items)} items passed "
          f"in {time.monotonic() - start:.0f} s ({guest_s:.0f} s to boot, run "
          "and bring the outputs out)", file=sys.stderr)
    if failed:
        raise KscaleError(f"failed: {', '.join(failed)}", 1)


def main(argv):
    return cli.run("kscale vm-test", vm_test, argv)
