#!/bin/bash
# The pipeline end to end: bench binary -> JSON -> compare table -> plot,
# plus runs whose own end-of-run checks must hold (--migrate: every
# writer count sums to zero; emulated nodes for the per-node variant).
# Usage: test_pipeline.sh BUILD_DIR
set -uo pipefail

build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
bench=$build/bench/mnt_writers
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
# the real profile (--perf) is tested once a model, at the end
tiny=(--duration=0.05 --warmup=0.01 --perf=0)
# for the runs whose every thread must count an operation: a window goes
# on (up to 60 s) until each has, as a loaded machine (RT throttling, two
# CPU hogs, other suites) may leave a thread's 50 ms without one
counted=(--window-until-counted=60)

json_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ctx = doc["context"]
for key in ("kscale_kernel_release", "kscale_cpu_model", "kscale_nodes",
            "kscale_cpus_per_node", "kscale_placement", "kscale_numa_emulate",
            "kscale_compiler", "kscale_version", "kscale_knob_mounts",
            "kscale_path_work_ns_auto"):
    assert key in ctx, key
rows = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
names = {b["name"] for b in rows}
# (that each listed variant ran, ran_every_variant checks)
for variant in {n.split("/")[2] for n in names}:
    for threads in (1, 2):
        for mounts in (1, 2):
            prefix = f"mnt_writers/openbench/{variant}/mounts:{mounts}/"
            assert any(n.startswith(prefix) and f"threads:{threads}" in n
                       for n in names), (variant, mounts, threads)
for b in rows:
    assert b["ops_per_sec"] > 0, b["name"]
    assert 0 < b["fairness"] <= 1, b["name"]
    # what else happened during the window, for compare's [disturbed] mark
    assert 0 <= b["steal_pct"] <= 100, b["name"]
    assert b["involuntary_switches"] >= 0 and b["snapshot_late_us"] >= 0, b["name"]
    assert b["host_sleeps"] >= 0, b["name"]
    per_cpu = b["ops_per_sec"] / b["threads"]
    assert abs(b["ops_per_sec_per_cpu"] - per_cpu) <= 1e-6 * per_cpu
    # the threads' spread: the least and most busy, their mean
    lo, mean, hi = (b["thread_ops_per_sec_" + k] for k in ("min", "mean", "max"))
    assert 0 < lo <= mean <= hi, b["name"]
    assert abs(mean * b["threads"] - b["ops_per_sec"]) <= 1e-6 * b["ops_per_sec"]
    assert abs(lo / hi - b["fairness"]) <= 1e-6, b["name"]
PY
}

# ran_every_variant LIST RESULTS: a row for each variant of a bench's
# --list (LIST), or the context says why it skipped it; no other variant.
ran_every_variant() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
listed = {l.split()[1] for l in open(sys.argv[1]) if l.startswith("  variant ")}
doc = json.load(open(sys.argv[2]))
seen = {b["name"].split("/")[2] for b in doc["benchmarks"]
        if b["run_type"] == "iteration"}
skipped = {v for v in listed if "kscale_skipped_" + v in doc["context"]}
assert listed and seen == listed - skipped, (listed, seen, skipped)
PY
}

# every_row_has RESULTS COUNTER
every_row_has() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
assert rows and all(sys.argv[2] in b for b in rows), rows
PY
}

every_row_above() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
key, floor = sys.argv[2], float(sys.argv[3])
low = [(b["name"], b.get(key)) for b in rows if not b.get(key, floor) > floor]
assert rows and not low, low
PY
}

# until_counted_ok RESULTS SECONDS: each model row could go on SECONDS past
# its window (--window-until-counted), a host row not at all.
until_counted_ok() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
host = doc["context"]["kscale_host_variants"].split(",")
rows = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
want = {b["name"]: 0 if b["name"].split("/")[2] in host else float(sys.argv[2])
        for b in rows}
assert rows and all(b["until_counted_s"] == want[b["name"]] for b in rows), \
    [(b["name"], b["until_counted_s"]) for b in rows]
PY
}

png_ok() {
	local f
	for f in "$1"/*.png; do
		[ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
	done
	ls "$1"/*per_sec*.png >/dev/null 2>&1
}

# compare_says PATTERN RESULTS ARGS...: kscale compare prints PATTERN.
compare_says() {
	local pattern=$1
	shift
	"$root/scripts/kscale-compare" "$@" | grep -- "$pattern" >/dev/null
}

# plot_into DIR RESULTS ARGS...: kscale plot writes its files into DIR.
plot_into() {
	local dir=$1
	shift
	"$root/scripts/kscale-plot" "$@" --out-dir="$dir" >/dev/null
}

fails_saying() {
	local why=$1
	shift
	! "$@" >/dev/null 2>"$tmp/err" && grep -q -- "$why" "$tmp/err" &&
		tail -n1 "$tmp/err" | grep -q 'run(s) failed'
}

# each model's run of every variant, for ran_every_variant at the end
declare -A every
out=$tmp/run.json
every[mnt_writers]=$out
check "bench run writes JSON" \
	"$bench" --cpus=1,2 --mounts=1,2 "${tiny[@]}" "${counted[@]}" \
	--benchmark_repetitions=2 --benchmark_out="$out" >/dev/null 2>&1
check "JSON has every variant, thread count and the context" json_ok "$out"
check "compare prints a before/after table" \
	compare_says "% change" "$out" --before=atomic --after=percpu
check "compare --format=markdown prints a markdown table" \
	compare_says "^|" "$out" \
		--before=atomic \
		--after=percpu \
		--format=markdown
# a repetition the host slept in a section of: marked, and only that one
python3 - "$out" "$tmp/slept.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
for b in rows:
    b["steal_pct"] = b["snapshot_late_us"] = b["host_sleeps"] = 0
next(b for b in rows if "/atomic/mounts:1/" in b["name"] and
     b["threads"] == 1)["host_sleeps"] = 1
json.dump(doc, open(sys.argv[2], "w"))
PY
check "compare marks a repetition with a host sleep [disturbed]" \
	compare_says "threads:1 .*\\[disturbed 1/4\\]" "$tmp/slept.json" \
		--before=atomic --after=percpu
check "plot writes PNG and SVG" \
	plot_into "$tmp/plots" "$out"
check "plots are PNG files" png_ok "$tmp/plots"

if [ "$(nproc)" -ge 2 ]; then
	check "--migrate: writer counts sum to zero after every run" \
		"$bench" --cpus=1,2 --mounts=1,2 --migrate "${tiny[@]}" \
		--benchmark_out="$tmp/migrate.json"
else
	echo "skip: --migrate needs 2 CPUs"
fi
check "pernode runs on emulated nodes" \
	"$bench" --numa-emulate=2 --placement=spread --cpus=2 \
	--variants=pernode "${tiny[@]}" --benchmark_out="$tmp/emu.json"
check "emulation is recorded in the results" \
	grep -q '"kscale_numa_emulate": "2"' "$tmp/emu.json"

every[primitives]=$tmp/primitives.json
check "primitives: every counter equals the increments counted" \
	"$build/bench/primitives" --cpus=1,2 --hold-ns=0,50 "${tiny[@]}" \
	--benchmark_out="$tmp/primitives.json"
handoffs_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
locks = [b for b in rows if "spinlock" in b["name"].split("/")[2]]
assert len(locks) == 16, len(locks)
for b in rows:
    assert ("lock_handoffs_per_op" in b) == (b in locks), b["name"]
for b in locks:
    h = b["lock_handoffs_per_op"]
    # alone, a lock is never handed over
    assert h == 0 if b["threads"] == 1 else 0 <= h <= 1, b
PY
}
check "primitives: a lock's row counts its hand-offs" \
	handoffs_ok "$tmp/primitives.json"

# 64 tasks a CPU, a round of their slices (64 x 1.5 ms) well inside the
# window: every task works in it.  Released one by one through a
# condition variable, each behind the task running on its CPU until a
# tick, the last were still at the gate when the window ended (fairness
# 0 in 6 rows of 6; with the futex gate 0.50-0.69 in 16 of 16).
check "primitives: 64 tasks a CPU all work in a 0.2 s window" \
	"$build/bench/primitives" --cpus=all*64 --oversubscribe \
	--variants=spinlock,atomic --duration=0.2 --warmup=0.02 --perf=0 \
	--benchmark_out="$tmp/crowd.json"
check "primitives: 64 tasks a CPU: fairness > 0 in every row" \
	every_row_above "$tmp/crowd.json" fairness 0

# A 1 ms window is over before a round of 64 slices: it goes on until
# every task counted (without the flag: fairness 0, by hand).
check "primitives: a window goes on until every task counted" \
	"$build/bench/primitives" --cpus=all*64 --oversubscribe \
	--variants=atomic --duration=1ms --warmup=0 --perf=0 \
	--window-until-counted=20 --benchmark_out="$tmp/counted.json"
check "primitives: every task counted in the window it went on for" \
	every_row_above "$tmp/counted.json" fairness 0
check "primitives: each row says how long it could go on" \
	until_counted_ok "$tmp/counted.json" 20
# Given up on too soon, it names a task that never ran since the gate
# and where the host and the model scheduler have it.
check "primitives: a window given up on names its uncounted tasks" \
	"$build/bench/primitives" --cpus=all*64 --oversubscribe \
	--variants=atomic --duration=1ms --warmup=0 --perf=0 \
	--window-until-counted=0.0001 --benchmark_repetitions=1 \
	--benchmark_out="$tmp/uncounted.json" 2>"$tmp/uncounted.err"
check "primitives: ... each with its host state and its run queue" \
	grep -Eq "thread [0-9]+ \(CPU [0-9]+, tid [0-9]+\) did no operation .*: host R on CPU [0-9]+, SCHED_FIFO [0-9]+.*; model state 0, on_cpu 0, .* its rq: 64 runnable, switched in last thread [0-9]+ \(on_cpu 1" \
	"$tmp/uncounted.err"

# Two tasks a CPU: every token pass is a switch, and every task ends.
every[sched]=$tmp/sched.json
check "sched: model and host context switches are timed" \
	"$build/bench/sched" --cpus=all*2 --oversubscribe "${tiny[@]}" \
	--benchmark_out="$tmp/sched.json"
check "sched: switch_ns for every variant" \
	every_row_has "$tmp/sched.json" switch_ns
check "model scheduler recorded in the context" \
	grep -q '"kscale_model_sched"' "$tmp/sched.json"

shmem_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
for b in rows:
    variant = b["name"].split("/")[2]
    assert b["faults_per_sec_per_cpu"] == b["ops_per_sec_per_cpu"], b["name"]
    # a real window of no faults was seen in 1 of ~3 fresh-clone runs (the
    # running kernel's stall, not yet explained); the models must fault
    assert b["ops_per_sec_per_cpu"] > 0 or variant.startswith("real"), b["name"]
    # the zones held every page the tasks needed before they ran: no
    # host mmap, mbind or first touch in the loop (without the reserve,
    # stat_lock at 4 tasks a CPU ran 20x slower here)
    assert b.get("zone_grows", 0) == 0, (b["name"], b["zone_grows"])
    assert ("zone_grows" in b) != variant.startswith("real"), b["name"]
    has_lock = variant in ("stat_lock", "nosbinfo")
    assert ("stat_lock_wait_pct" in b) == has_lock, b["name"]
    if has_lock:
        assert 0 <= b["stat_lock_wait_pct"] < 100, b["name"]
        # lockstat: 2.6.7 takes it per new block, the seed on no fault,
        # only twice a mapping (its inode in and out)
        per_fault = b["stat_lock_per_fault"]
        pages = int(b["name"].split("pages:")[1].split("/")[0])
        if variant == "stat_lock":
            assert per_fault >= 1, b
        else:
            # each thread's last pass, cut short, counts its two takes
            # (0.1-0.3% over 2/pages at 2 threads in a 0.05 s window)
            assert per_fault <= 2 / pages * 1.01, b
PY
}

sigbus_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = {b["name"].split("/")[2]: b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"}
assert rows["stat_lock"]["sigbus_faults"] > 0, rows["stat_lock"]
assert rows["upstream"]["sigbus_faults"] == 0, rows["upstream"]
PY
}

every[shmem_fault]=$tmp/shmem.json
check "shmem_fault: every variant, distinct and shared object" \
	"$build/bench/shmem_fault" --cpus=1,2 --pages=256 --shared-object=0,1 \
	"${tiny[@]}" "${counted[@]}" --benchmark_out="$tmp/shmem.json"
check "shmem_fault: counters in the seed's unit and stat_lock wait" \
	shmem_ok "$tmp/shmem.json"
check "shmem_fault: compare stat_lock -> nosbinfo" \
	compare_says "% change" "$tmp/shmem.json" \
		--before=stat_lock \
		--after=nosbinfo \
		--metric=faults_per_sec_per_cpu
check "shmem_fault: plot" \
	plot_into "$tmp/shmem-plots" "$tmp/shmem.json" \
		--metric=faults_per_sec_per_cpu
check "shmem_fault: plots are PNG files" png_ok "$tmp/shmem-plots"
fault_work_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ctx = doc["context"]
real, model = float(ctx["kscale_real_fault_ns"]), float(ctx["kscale_model_fault_ns"])
work = float(ctx["kscale_fault_work_ns_auto"])
assert real > model > 0 and abs(work - (real - model)) <= 1, ctx
rows = {b["name"].split("/")[2]: b for b in doc["benchmarks"]
        if b["run_type"] == "iteration"}
# the calibrated work slows the model's fault towards a real one
assert rows["upstream"]["faults_per_sec_per_cpu"] < 1e9 / work, rows
PY
}

check "shmem_fault: --fault-work-ns=auto is calibrated and recorded" \
	"$build/bench/shmem_fault" --workloads=fault --cpus=1 --pages=256 \
	--fault-work-ns=auto --variants=upstream "${tiny[@]}" \
	--benchmark_out="$tmp/work.json"
check "shmem_fault: the model's fault takes the real fault's rest" \
	fault_work_ok "$tmp/work.json"
check "shmem_fault: a limited mount fails faults, the books still balance" \
	"$build/bench/shmem_fault" --workloads=fault --cpus=2 --pages=512 \
	--size-limit=600 --variants=stat_lock,upstream "${tiny[@]}" \
	--benchmark_out="$tmp/sigbus.json"
check "shmem_fault: only the baseline's faults fail" sigbus_ok "$tmp/sigbus.json"

lookup_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
for b in rows:
    variant = b["name"].split("/")[2]
    assert b["lookups_per_sec"] == b["ops_per_sec"] > 0, b["name"]
    if variant.startswith("fuse_"):
        # every lookup of a new name reached our server
        assert b["fuse_lookups"] > 0, b["name"]
        continue
    if variant == "real":
        continue
    assert 0 <= b["dcache_hit_ratio"] <= 1, b["name"]
    assert 0 <= b["dir_lock_wait_pct"] < 100, b["name"]
    if variant != "immutable":
        assert b["duplicate_dentries"] == 0, b["name"]
PY
}

no_fuse_left() {
	! grep -q "$tmp/kscale-fuse" /proc/mounts &&
		! compgen -G "$tmp/kscale-fuse.*" >/dev/null
}

io_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
assert rows
for b in rows:
    # one read at a time and more tasks than that: some reads queue
    assert 0 < b["fs_io_queued_pct"] <= 100, b
    # kscale predict's I/O: a 50 us read for each dcache miss
    assert b["io_read_ns"] == 50000, b
    want = 50000 * (1 - b["dcache_hit_ratio"])
    assert 0 < b["io_sleep_ns_per_op"] and abs(b["io_sleep_ns_per_op"] - want) < 1e-6, b
PY
}

nfs_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
assert {b["name"].split("/")[2] for b in rows} == {"i_mutex", "immutable"}
for b in rows:
    variant = b["name"].split("/")[2]
    # a call is at least its round trip and service: 20 us and 30 us
    assert b["rpc_call_us"] >= 50, b
    assert 0 <= b["rpc_backlog_pct"] <= 100, b
    assert 0 <= b["nfsd_queued_pct"] <= 100, b
    # one call in flight under the directory's mutex, never more than the
    # 2 slots under the bypass (a mean: timing decides how close to them)
    assert 0 < b["rpc_in_flight"] <= (1.05 if variant == "i_mutex" else 2.05), b
    assert "fs_io_queued_pct" not in b, b
PY
}

every[real_lookup]=$tmp/lookup.json
check "real_lookup: every variant, low and high hit rate" \
	env TMPDIR="$tmp" "$build/bench/real_lookup" --cpus=1,2 --files=2000 \
	--dcache=200,1800 --dirs=4 "${tiny[@]}" "${counted[@]}" \
	--benchmark_out="$tmp/lookup.json"
check "real_lookup: counters, no duplicates where the design forbids them" \
	lookup_ok "$tmp/lookup.json"
check "real_lookup: FUSE unmounted, its directory gone" no_fuse_left
check "real_lookup: lookups sleep on the model disk, depth 1" \
	"$build/bench/real_lookup" --cpus=all*4 --oversubscribe \
	--variants=parallel --files=2000 --dcache=200 --fs-io-us=50 \
	--fs-io-depth=1 "${tiny[@]}" "${counted[@]}" \
	--benchmark_out="$tmp/io.json"
check "real_lookup: reads queue behind the disk's one slot" io_ok "$tmp/io.json"
check "real_lookup: the NFS line, a miss a call to the model server" \
	"$build/bench/real_lookup" --cpus=all*4 --oversubscribe \
	--variants=i_mutex,immutable --files=2000 --dcache=200 --fs=nfs \
	--fs-io-us=50 --nfs-rtt-us=20 --nfsd-us=30 --nfsd-threads=1 \
	--rpc-slots=2 "${tiny[@]}" "${counted[@]}" --benchmark_out="$tmp/nfs.json"
check "real_lookup: calls in flight within the slots, no disk read" \
	nfs_ok "$tmp/nfs.json"
# 16 threads' first lookups, each a 50 ms read under its directory's
# i_mutex: on 16 directories they overlap, where rounds all starting at
# the first directory would queue them there, one read after another
# (the window then ends before the sixth thread's first lookup).
check "real_lookup: sharded's threads start on different directories" \
	"$build/bench/real_lookup" --cpus=16 --oversubscribe \
	--variants=sharded --dirs=16 --dcache=1 --fs-io-us=50000 \
	--warmup=0 --duration=0.25 --perf=0 --benchmark_out="$tmp/shard.json"
check "real_lookup: every sharded thread looked up in the window" \
	every_row_above "$tmp/shard.json" fairness 0
check "real_lookup: compare i_mutex -> parallel" \
	compare_says "% change" "$tmp/lookup.json" \
		--before=i_mutex \
		--after=parallel \
		--metric=lookups_per_sec,dcache_hit_ratio
check "real_lookup: plot" \
	plot_into "$tmp/lookup-plots" "$tmp/lookup.json" \
		--metric=lookups_per_sec
check "real_lookup: plots are PNG files" png_ok "$tmp/lookup-plots"

rwsem_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
profile = ["kernel_%s_%s_pct" % (f, k)
           for f in ("rwsem_down_write_slowpath", "rwsem_down_read_slowpath",
                     "rwsem_spin_on_owner", "osq_lock")
           for k in ("children", "self", "children_busy", "self_busy")]
for b in rows:
    variant, rw = b["name"].split("/")[2], b["name"].split("/")[3]
    assert b["total_MBps"] > 0 and b["iops"] > 0, b["name"]
    assert abs(b["read_MBps"] + b["write_MBps"] - b["total_MBps"]) <= 1e-6 * b["total_MBps"]
    assert b["switches_per_io"] >= 0, b["name"]
    # each job's IOPS: the least and most busy job's, their mean
    lo, mean, hi = (b["thread_ops_per_sec_" + k] for k in ("min", "mean", "max"))
    assert 0 < lo <= mean <= hi, b["name"]
    assert abs(mean * b["threads"] - b["iops"]) <= 1e-6 * b["iops"]
    if rw == "rw:randwrite":
        assert b["read_MBps"] == 0, b["name"]
    if variant in ("v4.6", "reader_owned", "v5.1", "v5.3", "upstream"):
        for f in ("rwsem_down_write_slowpath", "rwsem_down_read_slowpath"):
            c = b["kernel_%s_children_pct" % f]
            assert 0 <= b["kernel_%s_self_pct" % f] <= c < 100, b["name"]
            # of the busy time, as perf report without the idle task
            cb = b["kernel_%s_children_busy_pct" % f]
            assert 0 <= b["kernel_%s_self_busy_pct" % f] <= cb <= 100 + 1e-6, b["name"]
            assert abs(cb * b["cpu_busy_pct"] / 100 - c) <= 1e-6 * max(c, 1), b["name"]
        for key in profile + ["spin_acquired", "spin_abandoned"]:
            assert key in b, (b["name"], key)
        # io_path_ns=auto: calibrated on the real path, per direction
        # (0 when a loaded machine makes fio no slower than the model)
        assert b["io_path_read_ns"] >= 0 and b["io_path_write_ns"] >= 0
PY
}

# The XFS of fio_xfs is gone once the bench exits: mount point and loop.
xfs_gone() {
	local dev i

	! compgen -G "$tmp/kscale-xfs.*" >/dev/null || return 1
	dev=$(/usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["context"].get("kscale_fio_xfs_device", ""))' "$1")
	[[ -n $dev ]] || return 0
	# the loop device clears itself once unmounted (LO_FLAGS_AUTOCLEAR)
	for ((i = 0; i < 50; i++)); do
		losetup "$dev" 2>/dev/null | grep -q kscale-xfs || return 0
		sleep 0.1
	done
	return 1
}

every[rwsem]=$tmp/rwsem.json
check "rwsem: every variant, randrw and randwrite, oversubscribed too" \
	env TMPDIR="$tmp" "$build/bench/rwsem" --workloads=fio --cpus=1,2,4 \
	--oversubscribe --rw=randrw,randwrite --size=4m "${tiny[@]}" \
	--benchmark_out="$tmp/rwsem.json"
check "rwsem: bandwidths, IOPS and the profile" rwsem_ok "$tmp/rwsem.json"
check "rwsem: no XFS mount or loop device left" xfs_gone "$tmp/rwsem.json"
check "rwsem: compare prints the seed's bandwidth table" \
	compare_says "BW before" "$tmp/rwsem.json" \
		--before=v4.6 \
		--after=reader_owned \
		--metric=total_MBps
check "rwsem: compare prints the profile in percentage points" \
	compare_says " pp" "$tmp/rwsem.json" \
		--before=v4.6 \
		--after=reader_owned \
		--metric=kernel_rwsem_down_write_slowpath_self_pct

# locktest_ok RESULTS: each class's counters add up to the run's, the
# --readers share made that many readers, each class's spread is ordered,
# a class without threads counted nothing; only locktest's knobs in its
# names, and fio's rows not run.
locktest_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
assert rows
model = {"v4.6", "reader_owned", "v5.1", "v5.3", "upstream"}
for b in rows:
    name, n = b["name"], b["threads"]
    parts = name.split("/")
    variant, knobs = parts[2], dict(p.split(":", 1) for p in parts[3:] if ":" in p)
    assert parts[1] == "locktest" and variant in model | {"pthread"}, name
    assert "rw" not in knobs and "hold_ns" in knobs, name
    share = knobs["readers"]
    readers = int(share[:-1]) * n // 100 if share.endswith("%") else int(share)
    assert b["reader_threads"] == readers, name
    assert b["reader_threads"] + b["writer_threads"] == n, name
    total = b["ops_per_sec"]
    assert total > 0, name
    rates = b["reader_ops_per_sec"] + b["writer_ops_per_sec"]
    assert abs(rates - total) <= 1e-6 * total, name
    # the ops of both classes, over the same window
    window = (b["reader_ops"] + b["writer_ops"]) / total
    for c in ("reader", "writer"):
        assert abs(b[c + "_ops"] - b[c + "_ops_per_sec"] * window) <= 1e-6 * total, name
        if not b[c + "_threads"]:
            assert b[c + "_ops"] == 0 and c + "_ops_per_sec_min" not in b, name
            continue
        lo, mean, hi = (b[f"{c}_ops_per_sec_{k}"] for k in ("min", "mean", "max"))
        assert 0 <= lo <= mean <= hi, name
        assert abs(mean * b[c + "_threads"] - b[c + "_ops_per_sec"]) <= 1e-6 * total
        assert b["thread_ops_per_sec_min"] <= lo and hi <= b["thread_ops_per_sec_max"]
    assert b["switches_per_op"] >= 0 and "total_MBps" not in b, name
    if variant in model:
        for key in ("spin_acquired", "spin_abandoned",
                    "sleeps_write_behind_handoff_per_op",
                    "sleeps_read_behind_writer_per_op",
                    "queued_spin_reader_timeout_per_op",
                    "kernel_rwsem_down_write_slowpath_self_pct"):
            assert b[key] >= 0, (name, key)
PY
}

check "rwsem locktest: every model variant and pthread, the reader shares" \
	"$build/bench/rwsem" --workloads=locktest --cpus=1,2,4 --oversubscribe \
	--readers=50%,0,100% --hold-ns=0,200 "${tiny[@]}" "${counted[@]}" \
	--benchmark_out="$tmp/locktest.json"
check "rwsem locktest: readers and writers counted apart" \
	locktest_ok "$tmp/locktest.json"
check "rwsem locktest: pthread's rows do not go on past the window" \
	until_counted_ok "$tmp/locktest.json" 60
check "rwsem locktest: simulated, the same counters" \
	"$build/bench/rwsem" --workloads=locktest \
	--variants=v4.6,v5.1,v5.3,upstream --sim=hpe-4s-haswell-ex-2016 \
	--cpus=2,8 --readers=50%,1 \
	--think-ns=100 --duration=0.005 --warmup=0.001 \
	--benchmark_out="$tmp/locktest-sim.json"
check "rwsem locktest: simulated counters add up" \
	locktest_ok "$tmp/locktest-sim.json"
check "rwsem locktest: compare tables each class's fairness" \
	compare_says "rwsem: writer_ops_per_sec_min" "$tmp/locktest.json" \
		--before=v4.6 --after=upstream \
		--metric=reader_ops_per_sec_min,writer_ops_per_sec_min
check "rwsem locktest: more readers than threads fails the run" \
	fails_saying "readers=3: more than the run's 2 threads" \
	"$build/bench/rwsem" --workloads=locktest --variants=v4.6 --cpus=2 \
	--readers=3 "${tiny[@]}"

# perf_ok RESULTS FUNCTION MIN: every function the model names has both
# counters, and FUNCTION (with its callees) took at least MIN% of the
# bench's own samples.  perf samples the bench's CPUs, whatever runs
# there: a share of all samples falls with the host's load (a busy
# neighbour took __lookup_slow() from several % to 0.59%, the bench
# 0.8% busy), so the share is judged against the bench's CPU time
# (cpu_busy_pct), and only where that time held enough samples to judge.
perf_ok() {
	/usr/bin/python3 - "$@" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
fn, least = sys.argv[2], float(sys.argv[3])
how = doc["context"]["kscale_perf"]
assert "cpu-clock is a software event" in how, how
freq = int(re.search(r"-F (\d+)", how).group(1))
named = how.split("Functions: ")[1].split(";")[0].split(", ")
assert fn in named, named
rows = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
assert rows
for b in rows:
    for f in named:
        c, s = b[f"kernel_{f}_children_pct"], b[f"kernel_{f}_self_pct"]
        assert 0 <= s <= c <= 100, (b["name"], f, c, s)
        # without the idle task's samples: shares of the busy ones
        cb, sb = b[f"kernel_{f}_children_busy_pct"], b[f"kernel_{f}_self_busy_pct"]
        assert 0 <= sb <= cb <= 100 + 1e-6 and cb >= c and sb >= s, (b["name"], f, cb, sb)
    busy = b["cpu_busy_pct"]
    own = busy / 100 * b["real_time"] / 1e9 * b["threads"] * freq
    if own < 20:
        print("note: %s: %.0f samples' worth of the bench's own time, "
              "too few to judge %s's share" % (b["name"], own, fn))
        continue
    assert b[f"kernel_{fn}_children_pct"] >= least * busy / 100, b
PY
}

# no_perf RESULTS WHY: no kernel_* counter, and the context says WHY.
no_perf() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["context"]["kscale_perf"].startswith(sys.argv[2]), doc["context"]
for b in doc["benchmarks"]:
    assert not [k for k in b if k.startswith("kernel_")], b
PY
}

no_perf_left() {
	! compgen -G "$tmp/kscale-perf.*" >/dev/null &&
		! pgrep -f "$tmp/kscale-perf" >/dev/null
}

# One run of a host variant of each model, its window profiled.
perf_run=(--cpus=1 --duration=0.1 --warmup=0.05 --perf=1)
check "perf: mnt_writers real, profiled" \
	env TMPDIR="$tmp" "$build/bench/mnt_writers" --variants=real \
	"${perf_run[@]}" --benchmark_out="$tmp/perf-mnt.json"
if ! grep -q '"kscale_perf": "unavailable' "$tmp/perf-mnt.json"; then
	check "perf: mnt_writers counters" \
		perf_ok "$tmp/perf-mnt.json" mnt_get_write_access 0
	check "perf: shmem_fault real, profiled" \
		env TMPDIR="$tmp" "$build/bench/shmem_fault" --variants=real \
		--workloads=fault --pages=256 "${perf_run[@]}" --benchmark_out="$tmp/perf-shm.json"
	check "perf: the real fault path is in shmem_fault()" \
		perf_ok "$tmp/perf-shm.json" shmem_fault 1
	check "perf: real_lookup real, profiled" \
		env TMPDIR="$tmp" "$build/bench/real_lookup" --variants=real \
		--dirs=4 "${perf_run[@]}" --benchmark_out="$tmp/perf-lookup.json"
	check "perf: the real misses are in __lookup_slow()" \
		perf_ok "$tmp/perf-lookup.json" __lookup_slow 1
	check "perf: rwsem fio, profiled" \
		env TMPDIR="$tmp" "$build/bench/rwsem" --variants=fio \
		--size=4m --io-path-ns=0 --map-ns=0 "${perf_run[@]}" \
		--benchmark_out="$tmp/perf-rwsem.json"
	check "perf: rwsem counters" \
		perf_ok "$tmp/perf-rwsem.json" rwsem_down_write_slowpath 0
else
	echo "skip: perf cannot profile here: $(grep -o '"kscale_perf": "[^"]*' \
		"$tmp/perf-mnt.json")"
fi
# a PATH without perf (the scratch directories' clean-up runs rm)
mkdir "$tmp/noperf" && ln -s "$(command -v rm)" "$tmp/noperf/rm"
check "perf: a real run without perf in PATH" \
	env PATH="$tmp/noperf" TMPDIR="$tmp" "$build/bench/mnt_writers" \
	--variants=real "${perf_run[@]}" --benchmark_out="$tmp/perf-none.json" \
	2>"$tmp/perf-none.err"
check "perf: ... says why on stderr" \
	grep -q "perf: unavailable: perf not found in PATH" "$tmp/perf-none.err"
check "perf: ... and in the context, with no kernel_* counter" \
	no_perf "$tmp/perf-none.json" "unavailable: perf not found in PATH"
check "perf: --perf=0" \
	env TMPDIR="$tmp" "$build/bench/mnt_writers" --variants=real \
	"${tiny[@]}" --benchmark_out="$tmp/perf-off.json"
check "perf: --perf=0 leaves the counters out" \
	no_perf "$tmp/perf-off.json" "off"
check "perf: no perf process or file is left" no_perf_left

echo previous >"$tmp/keep.json"
check "a failed run exits non-zero and says why" \
	fails_saying "needs two usable CPUs" \
	"$bench" --migrate --placement=list:0 --cpus=1 --variants=percpu \
	"${tiny[@]}" --benchmark_out="$tmp/keep.json"
check "a failed run leaves the old results file alone" \
	grep -qx previous "$tmp/keep.json"
check "no temporary file is left behind" \
	bash -c "! ls '$tmp'/keep.json.tmp.* 2>/dev/null"

# --profile: lockstat's counters of the models' resources (lockstat.h)
# and the cache-line latencies in the context (linelat.h).
profile_ok() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ctx = doc["context"]
assert ctx["kscale_profile"].startswith("lockstat"), ctx["kscale_profile"]
for kind in ("smt", "node", "remote"):
    assert f"kscale_line_ns_{kind}" in ctx, kind
assert int(ctx["kscale_threads_per_core"]) >= 1
rows = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
assert rows
for b in rows:
    variant = b["name"].split("/")[2]
    for field in ("visits", "hold_ns", "wait_ns", "lines", "instances",
                  "sleeps", "scope"):
        key = "res_%s_%s" % ({"stat_lock": "stat_lock",
                              "atomic": "vfsmount"}[variant], field)
        assert key in b, key
    assert b["lockstat_ns_per_op"] >= 0, b
    if variant == "stat_lock":
        # a block per fault, index pages and the inode's books besides:
        # what the model's own count of takes says, over the window
        assert 1 <= b["res_stat_lock_visits"] <= 1.05, b
        assert abs(b["res_stat_lock_visits"] - b["stat_lock_per_fault"]) < 0.01, b
        assert b["res_stat_lock_hold_ns"] > 0, b
        assert b["res_stat_lock_lines"] == 1 and b["res_stat_lock_sleeps"] == 0, b
        # 2.6.7's allocator: no pcp lock; the node's lru_lock per
        # pagevec of 16 both ways (2/16), its zone->lock per pcp batch
        # of 16 both ways less what the pcp's low..high window absorbs
        # of a 258-page pass (0.10)
        assert "res_pcp_lock_visits" not in b, b
        assert 0.120 <= b["res_lru_lock_visits"] <= 0.135, b
        assert 0.090 <= b["res_zone_lock_visits"] <= 0.115, b
        for c in ("zone_lock", "lru_lock"):
            assert b["res_%s_scope" % c] == 1, (c, b)
    else:
        # mntget()'s and mntput()'s (2.6.22's walk takes and drops a
        # second reference: 4), and the posted atomic's want and drop
        # an open/write/close on the same line: one class; the mount's
        # first writer also fails atomic_add_unless() and takes the
        # superblock's lock (every open at 1 thread), and so does its last
        # writer's atomic_dec_and_lock(); a first writer that lost the
        # race under the lock backs out and retries (more visits)
        lock = b["res_s_mnt_writers_lock_visits"]
        visits = b["res_vfsmount_visits"]
        if b["threads"] == 1:
            assert abs(lock - 2) < 1e-3 and abs(visits - 7) < 1e-3, b
        else:
            # (a last writer's locked decrement is not a visit of its own)
            assert 6 - 1e-3 <= visits <= 6 + 2 * lock + 1e-3, b
        assert b["res_vfsmount_instances"] == 1, b
        assert b["res_vfsmount_hold_ns"] == 0, b
if sys.argv[2] == "node":
    assert float(ctx["kscale_line_ns_node"]) > 0, ctx
PY
}

no_profile() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["context"]["kscale_profile"].startswith("off"), doc["context"]
assert "kscale_line_ns_node" not in doc["context"]
for b in doc["benchmarks"]:
    assert not [k for k in b if k.startswith("res_") or k.startswith("lockstat")], b
PY
}

# two CPUs of one node: a node pair whose latency is measured
pair=any
if [ "$(nproc)" -ge 2 ]; then
	pair=node
fi
check "profile: shmem_fault stat_lock, one CPU" \
	"$build/bench/shmem_fault" --variants=stat_lock --cpus=1 --pages=256 \
	--profile "${tiny[@]}" "${counted[@]}" --benchmark_out="$tmp/prof-shm.json"
check "profile: stat_lock visited once a fault, and held" \
	profile_ok "$tmp/prof-shm.json" any
check "profile: mnt_writers atomic" \
	"$bench" --variants=atomic --cpus=1,2 --profile "${tiny[@]}" \
	"${counted[@]}" --benchmark_out="$tmp/prof-mnt.json"
check "profile: the vfsmount line 6-7 times an open/write/close, and the line latency" \
	profile_ok "$tmp/prof-mnt.json" "$pair"

# What each variant's open/write/close visits, per operation, at 1 CPU.
path_visits_ok() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
seen = set()
for b in doc["benchmarks"]:
    if b["run_type"] != "iteration":
        continue
    variant = b["name"].split("/")[2]
    knobs = dict(p.split(":", 1) for p in b["name"].split("/") if ":" in p)
    mounts, update = int(knobs["mounts"]), int(knobs["write_update_time"])
    shared = int(knobs["shared_path"])
    seen.add((variant, mounts, update, shared))
    v = lambda c: b.get("res_%s_visits" % c)
    # per operation over the window: the ops cut by its edges move the
    # ratio by a fraction of a percent
    near = lambda x, want: abs(x - want) <= 0.01 * want
    if variant != "upstream" and not shared:
        # the lock-only lines: the counts and the mount alone (no
        # walk: no dentry registered)
        for c in ("files_lock", "s_files", "dentry"):
            assert not v(c), (c, b)
        continue
    if variant == "upstream":
        # today's path: no files_lock, s_files or cwd reference
        assert v("files_lock") is None and v("dentry") is None, b
        assert near(v("mnt_pcp"), 4), b
        continue
    # 2.6.2x's: files_lock and s_files at open and close; 2.6.22's walk
    # takes the cwd's dentry and mount, link_path_walk() a second
    # reference on each, and drops both (the mount's last at close)
    for c in ("files_lock", "s_files"):
        assert near(v(c), 2), (c, b)
    assert near(v("dentry"), 4), b
    # the writer's per-CPU lock at want and drop, twice more with
    # file_update_time()'s pair
    assert near(v("mnt_writer"), 4 if update else 2), b
    # the posted __clear_mnt_count() adds to the mount left on every
    # switch, and every posted close reads the count
    count = 4
    if variant == "percpu_seed":
        count += 1 + update + (mounts == 2)
    assert near(v("vfsmount"), count), (count, b)
assert len(seen) == 24, seen
PY
}
check "profile: each variant's path visits" \
	"$bench" --variants=percpu,percpu_seed,upstream --cpus=1 --mounts=1,2 \
	--write-update-time=0,1 --shared-path=0,1 --profile "${tiny[@]}" \
	--benchmark_out="$tmp/prof-path.json"
check "profile: files_lock, s_files, the cwd and the posted counts per op" \
	path_visits_ok "$tmp/prof-path.json"
check "profile: off by default" no_profile "$out"

# Each bench binary with a --list (scripts/kscale list's): every variant
# it lists ran in its model's run above, or in a short one at its
# defaults for a model without one here.
for bin in "$build"/bench/*; do
	[[ -f $bin && -x $bin ]] || continue
	"$bin" --list >"$tmp/list" 2>/dev/null || continue
	model=${bin##*/}
	if [[ -z ${every[$model]:-} ]]; then
		every[$model]=$tmp/every-$model.json
		check "$model: every variant at its defaults" \
			"$bin" --cpus=1 "${tiny[@]}" --benchmark_out="${every[$model]}"
	fi
	check "$model: every variant its --list shows ran, or says why not" \
		ran_every_variant "$tmp/list" "${every[$model]}"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
