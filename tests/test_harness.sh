#!/bin/bash
# The harness itself, through tests/harness_check.c: a known rate is
# measured as such, threads and set-up run where the plan says, the main
# thread's mask comes back, and every way a run can go wrong fails it
# loudly (exit 1, a line naming the cause, no results file).
# Usage: test_harness.sh BUILD_DIR
set -uo pipefail

build=${1:-build}
bin=$build/tests/harness_check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nr_cpus=$(nproc)
# shellcheck source=tests/check.sh
source "$(dirname "$0")/check.sh"
check_log=$tmp/err

# run ARGS...: harness_check ARGS... into $tmp/out.json, status in $status.
run() {
	rm -f "$tmp/out.json"
	status=0
	"$@" "--benchmark_out=$tmp/out.json" --benchmark_out_format=json \
		>/dev/null 2>"$tmp/err" || status=$?
}

# DELAY_NS TOLERANCE_PCT CPUS: every point's median rate per second of CPU
# the threads got (ops_per_sec / cpu_busy_pct) within TOLERANCE of
# threads x 1e9 / DELAY_NS (each operation spins DELAY_NS of its thread's
# CPU time, so a busy host slows the wall-clock rate, not this one); the
# window (real_time x threads) checked against the run's own clock reads,
# which bound it whatever the host does: from its first snapshot, after
# the warm-up, to its last, before the run's end (elapsed_s), and no
# shorter than the duration and how late the controller woke for the end
# (snapshot_late_us); set-up on thread 0's CPU, every op on its thread's
# CPU, run.stop cache-aligned, the controller on a CPU of its own when
# one is free.
rate_ok() {
	/usr/bin/python3 - "$tmp/out.json" "$@" <<'PY'
import json, statistics, sys
from collections import defaultdict

doc = json.load(open(sys.argv[1]))
delay, tol, nr_cpus = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
duration, warmup = float(sys.argv[5]), float(sys.argv[6])
points = defaultdict(list)
for b in doc["benchmarks"]:
    if b["run_type"] != "iteration":
        continue
    t = b["threads"]
    points[(b["name"].split("/")[2], t)].append(b)
    assert b["time_unit"] == "ns", b["time_unit"]
    window = b["real_time"] * 1e-9 * t
    eps = 1e-9 * window
    assert window >= duration + b["snapshot_late_us"] * 1e-6 - eps, \
        (b["name"], window, b["snapshot_late_us"])
    assert window <= b["elapsed_s"] - warmup + eps, \
        (b["name"], window, b["elapsed_s"])
    assert b["setup_on_thread0_cpu"] == 1, b["name"]
    assert b["stop_cache_aligned"] == 1, b["name"]
    assert b["wrong_cpu_ops"] == 0, b["name"]
    assert b["controller_shares_cpu"] == (t >= nr_cpus), b["name"]
assert points, "no runs"
for (variant, t), runs in sorted(points.items()):
    rate = statistics.median(b["ops_per_sec"] * 100 / b["cpu_busy_pct"]
                             for b in runs)
    want = t * 1e9 / delay
    err = 100 * (rate - want) / want
    print(f"  {variant} threads {t}: {rate:.0f} ops/s, want {want:.0f}: "
          f"{err:+.2f}%")
    assert abs(err) <= tol, (variant, t, err)
PY
}

# 100 us of CPU a call: the clock read that ends each delay (a system
# call here) stays well inside the 5%.
test_known_rate() {
	run "$bin" --workloads=rate --cpus=1-"$nr_cpus" --delay-ns=100000 \
		--duration=0.3 --warmup=0.05 --benchmark_repetitions=5 \
		--benchmark_enable_random_interleaving=true
	check "known rate: exits 0 (the main thread's mask restored)" \
		test "$status" -eq 0
	check "known rate: ops/s within 5% of threads/delay, the window, placement" \
		rate_ok 100000 5 "$nr_cpus" 0.3 0.05
}

# Fewer CPUs allowed than possible: the mask is saved whole and restored.
test_fewer_allowed_than_possible() {
	run taskset -c 0 "$bin" --workloads=rate --cpus=1 --delay-ns=100000 \
		--duration=0.3 --warmup=0.05
	check "taskset -c 0: exits 0, mask restored" test "$status" -eq 0
	check "taskset -c 0: rate, window and placement" \
		rate_ok 100000 5 1 0.3 0.05
}

# fails_with PATTERN: exit 1, PATTERN on stderr, no results file.
fails_with() {
	((status == 1)) && grep -q -- "$1" "$tmp/err" &&
		[[ ! -e $tmp/out.json ]] && [[ -z $(ls "$tmp" | grep tmp) ]]
}

test_watchdog() {
	local variant

	for variant in host model; do
		run timeout 20 "$bin" --workloads=hang --variants="$variant" \
			--hang=init --cpus="$nr_cpus" --duration=0.1 \
			--warmup=0 --watchdog=1
		check "watchdog $variant: a thread stuck in its set-up" \
			fails_with "thread $((nr_cpus - 1)) (CPU [0-9]*, tid [0-9]*) never reached the window"
		run timeout 20 "$bin" --workloads=hang --variants="$variant" \
			--hang=loop --cpus="$nr_cpus" --duration=0.1 \
			--warmup=0.05 --watchdog=1
		check "watchdog $variant: a thread that never leaves its loop" \
			fails_with "thread $((nr_cpus - 1)) .* is still in its loop, 0 ops in the window: no progress"
	done
}

test_silent_failures() {
	local variant

	for variant in host model; do
		run "$bin" --workloads=silent_setup --variants="$variant" \
			--cpus=1 --duration=0.05 --warmup=0
		check "$variant: a set-up returning -1 alone fails the run" \
			fails_with "silent_setup: set-up failed without saying why"
		run "$bin" --workloads=silent_teardown --variants="$variant" \
			--cpus=1 --duration=0.05 --warmup=0
		check "$variant: a teardown returning -1 alone fails the run" \
			fails_with "silent_teardown: teardown failed without saying why"
		run "$bin" --workloads=counters --variants="$variant" \
			--cpus=1 --duration=0.05 --warmup=0
		check "$variant: one counter too many fails the run" \
			fails_with "more than 96 counters"
	done
}

# A variant table with a wrong row (harness_check.c's BROKEN_ROW): the
# binary refuses to list or run anything, in one line, exit 2.
test_broken_rows() {
	local row why

	for row in 1 2 3 4 5; do
		case $row in
		1) why="variant 'typo': a model row without an implementation (.ops)" ;;
		2) why="variant 'both': a model row with a host implementation (.host)" ;;
		3) why="variant 'model_code': a host row with a model implementation (.ops)" ;;
		4) why="variant 'no_host': a host row without a host implementation (.host)" ;;
		5) why="variant 'model': two rows" ;;
		esac
		for args in --list "--cpus=1 --duration=0.05 --warmup=0"; do
			run "$build/tests/harness_check_broken_$row" $args
			check "broken row $row ($args): refused in one line" \
				eval '((status == 2)) && [[ $(wc -l <"$tmp/err") == 1 ]] &&
				grep -qF -- "harness_check: the variant table is wrong: $why" "$tmp/err" &&
				[[ ! -e $tmp/out.json ]]'
		done
	done
}

# A workload's thread_size: t->priv zeroed, aligned, allocated on the
# thread's CPU, summed over the threads (KSCALE_SUM_THREADS) and freed.
test_thread_private() {
	local variant

	for variant in host model; do
		run "$bin" --workloads=private --variants="$variant" \
			--cpus="$nr_cpus" --duration=0.1 --warmup=0
		check "private $variant: the threads' own counts sum to their ops" \
			test "$status" -eq 0
		check "private $variant: zeroed, aligned, on the thread's CPU" \
			eval 'python3 -c "import json,sys
b = [x for x in json.load(open(sys.argv[1]))[\"benchmarks\"] if \"private\" in x[\"name\"]]
sys.exit(not b or any(x[\"private_dirty\"] or x[\"private_off_cpu\"] for x in b))" "$tmp/out.json"'
	done
}

test_known_rate
test_thread_private
test_broken_rows
test_fewer_allowed_than_possible
test_watchdog
test_silent_failures
echo "$passed passed, $failed failed"
((failed == 0))
