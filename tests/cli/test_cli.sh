#!/bin/bash
# Tests of scripts/kscale (help, bad input, `run configs/smoke.conf`) and of
# a bench binary's bad input.  Usage: test_cli.sh [BUILD_DIR] (default:
# build in the repo).  Never runs setup: the bench binaries must be built.
set -uo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(realpath -m -- "${1:-$root/build}")
kscale=$root/scripts/kscale
bench=$build/bench/mnt_writers
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
export KSCALE_NO_SETUP=1 KSCALE_BUILD=$build
export KSCALE_RESULTS=$tmp/results KSCALE_PLOTS=$tmp/plots
passed=0
failed=0
status=0

check() {
	local name=$1

	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		printf 'FAIL: %s (exit status %d, stderr:)\n' "$name" "$status"
		sed 's/^/  /' "$tmp/err"
	fi
}

# Run CMD..., its status in $status, its stdout and stderr in $tmp/out, err;
# the checks after it look at them (and show stderr when they fail).
run() {
	status=0
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null || status=$?
}

one_stderr_line() {
	local lines

	mapfile -t lines <"$tmp/err"
	((${#lines[@]} == 1))
}

# Exit status STATUS and a one-line stderr.
expect_error() {
	local want=$1

	((status == want)) && one_stderr_line
}

expect_usage() {
	((status == 0)) && grep -q "usage: kscale $1" "$tmp/out"
}

test_help() {
	local command

	run "$kscale" --help
	check "kscale --help" expect_usage COMMAND
	for command in setup run test list compare plot noise; do
		run "$kscale" "$command" --help
		check "kscale $command --help" expect_usage "$command"
	done
}

test_bad_input() {
	printf 'run ok mnt_writers\nbogus line\n' >"$tmp/malformed.conf"
	printf 'include loop-b.conf\n' >"$tmp/loop-a.conf"
	printf 'include loop-a.conf\n' >"$tmp/loop-b.conf"
	printf 'run x no_such_bench\n' >"$tmp/nobench.conf"
	printf 'run x mnt_writers\nplot y\n' >"$tmp/nolabel.conf"

	run "$kscale" bogus
	check "unknown command" expect_error 2
	run "$kscale" run no-such-config
	check "unknown config" expect_error 2
	run "$kscale" run "$tmp/malformed.conf"
	check "malformed config" expect_error 2
	run "$kscale" run "$tmp/loop-a.conf"
	check "include loop" expect_error 2
	run "$kscale" run "$tmp/nobench.conf"
	check "missing bench binary" expect_error 2
	run "$kscale" run "$tmp/nolabel.conf"
	check "plot of a label not run" expect_error 2
	run "$kscale" run --bogus
	check "unknown run option" expect_error 2
}

json_parses() {
	/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1"
}

# At least one PNG under DIR, starting with the PNG signature.
png_written() {
	local png

	for png in "$1"/*.png; do
		if cmp -s -n 8 "$png" <(printf '\x89PNG\r\n\x1a\n'); then
			return 0
		fi
	done
	return 1
}

test_run_smoke() {
	local results=$KSCALE_RESULTS/smoke

	run "$kscale" run "$root/configs/smoke.conf"
	check "run smoke.conf exits 0" test "$status" -eq 0
	check "smoke.json parses" json_parses "$results/smoke.json"
	check "compare .txt has % change" grep -q '% change' "$results/smoke.atomic-percpu.txt"
	check "compare .md written" test -s "$results/smoke.atomic-percpu.md"
	check "compare table printed" grep -q '% change' "$tmp/out"
	check "PNG plot written" png_written "$KSCALE_PLOTS/smoke"
}

# The bench binary rejects ARG: non-zero exit, one stderr line of its own,
# no output file (nor temp file) left.
bench_rejects() {
	local dir=$tmp/bench-out

	rm -rf -- "$dir"
	mkdir -- "$dir"
	run "$bench" "$1" "--benchmark_out=$dir/out.json" --benchmark_out_format=json
	((status != 0)) && one_stderr_line &&
		grep -q "^${bench##*/}: " "$tmp/err" && [[ -z $(ls -A -- "$dir") ]]
}

test_bench_bad_input() {
	local arg

	for arg in --cpus=0 --cpus=abc --cpus=99999 --placement=list:9999 \
		   --cpus= --cpus=1, --placement=fill --placement=list: \
		   --duration=-1 --duration=5x --warmup=-1 --numa-emulate=0 \
		   --numa-emulate=99 --variants=nope --workloads=nope \
		   --mounts=3 --mounts= --path-work-ns=fast --migrate=2 \
		   --perf=maybe --perf= --bogus; do
		check "mnt_writers $arg" bench_rejects "$arg"
	done
}

# A results file cut short by a full disk is not renamed into place.
full_disk_fails() {
	local dir=$tmp/full

	mkdir -p -- "$dir"
	mount -t tmpfs -o size=64k kscale-full "$dir" || return 1
	head -c 65536 /dev/zero >"$dir/filler" 2>/dev/null
	run "$bench" --variants=atomic --cpus=1 --duration=0.02 --warmup=0 \
		"--benchmark_out=$dir/out.json"
	umount "$dir"
	((status == 1)) && grep -q "incomplete (disk full?)" "$tmp/err"
}

# Nothing ran: a failure, with Google Benchmark's reason, no output file.
nothing_ran_fails() {
	local dir=$tmp/nothing

	rm -rf -- "$dir"
	mkdir -- "$dir"
	run "$bench" --variants=atomic --cpus=1 "$1" "--benchmark_out=$dir/out.json"
	((status == 1)) && grep -q "^mnt_writers: nothing ran: .*$2" "$tmp/err" &&
		[[ -z $(ls -A -- "$dir") ]]
}

test_bench_fails_loudly() {
	check "a filter matching nothing fails" nothing_ran_fails \
		--benchmark_filter=nothing "Failed to match"
	check "a bad filter fails" nothing_ran_fails '--benchmark_filter=(' "Could not compile"
	if ((EUID)); then
		echo "SKIP: full disk: needs root to mount a small tmpfs"
		return
	fi
	check "a full disk fails the bench, no file" full_disk_fails
}

# A bench killed mid-run leaves neither its output nor its temp file.
killed_leaves_nothing() {
	local dir=$tmp/killed pid

	rm -rf -- "$dir"
	mkdir -- "$dir"
	"$bench" --variants=percpu --cpus=1 --duration=5 --warmup=0 \
		"--benchmark_out=$dir/out.json" >/dev/null 2>&1 &
	pid=$!
	sleep 1
	kill -TERM "$pid"
	wait "$pid"
	(($? == 128 + 15)) && [[ -z $(ls -A -- "$dir") ]]
}

# A FUSE run killed at any point leaves no mount point behind.
fuse_killed_leaves_no_mount() {
	local pid

	[[ $(id -u) == 0 && -w /dev/fuse ]] || return 0
	TMPDIR=$tmp "${bench%/*}/real_lookup" --variants=fuse_serial --cpus=1 \
		--duration=5 --warmup=0 >/dev/null 2>&1 &
	pid=$!
	sleep 1
	kill -TERM "$pid"
	wait "$pid"
	# the mount itself is in the bench's private mount namespace
	! compgen -G "$tmp/kscale-fuse.*" >/dev/null
}

# fio_xfs killed by SIG mid-run: no fio left running (it dies with the
# bench, PR_SET_PDEATHSIG) and, unless SIG is SIGKILL, no mount point.
xfs_killed_leaves_nothing() {
	local sig=$1 pid i fio="fio --name=kscale --filename=$tmp/"

	[[ $(id -u) == 0 ]] && grep -qw xfs /proc/filesystems &&
		command -v mkfs.xfs >/dev/null || return 0
	TMPDIR=$tmp "${bench%/*}/rwsem" --variants=fio_xfs --cpus=1 \
		--io-path-ns=0 --map-ns=0 --duration=5 --warmup=0 \
		--perf=false >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 50; i++)); do
		pgrep -f "$fio" >/dev/null && break
		sleep 0.1
	done
	kill -"$sig" "$pid"
	wait "$pid"
	for ((i = 0; i < 20; i++)); do
		pgrep -f "$fio" >/dev/null || break
		sleep 0.1
	done
	! pgrep -f "$fio" >/dev/null || return 1
	if [[ $sig == KILL ]]; then
		# the mount was in the bench's own namespace, gone with it
		rmdir "$tmp"/kscale-xfs.* 2>/dev/null
		return 0
	fi
	! compgen -G "$tmp/kscale-xfs.*" >/dev/null
}

# A profiled real run killed by SIG mid-window leaves no perf running and,
# unless SIG is SIGKILL (which no clean-up sees: perf dies with the
# bench, PR_SET_PDEATHSIG), no perf file.
perf_killed_leaves_nothing() {
	local sig=$1 pid i

	TMPDIR=$tmp "${bench%/*}/shmem_fault" --variants=real --cpus=1 \
		--pages=256 --duration=5 --warmup=0 --perf=true \
		>/dev/null 2>"$tmp/err" &
	pid=$!
	# the run's own recording, not the start-up's probe
	for ((i = 0; i < 100; i++)); do
		grep -q '^kscale: \[1/1\]' "$tmp/err" &&
			pgrep -f "$tmp/kscale-perf" >/dev/null && break
		sleep 0.1
	done
	if grep -q "perf: unavailable" "$tmp/err"; then
		kill "$pid"
		wait "$pid"
		return 0
	fi
	pgrep -f "$tmp/kscale-perf" >/dev/null || return 1
	kill -"$sig" "$pid"
	wait "$pid" 2>/dev/null
	for ((i = 0; i < 20; i++)); do
		pgrep -f "$tmp/kscale-perf" >/dev/null || break
		sleep 0.1
	done
	! pgrep -f "$tmp/kscale-perf" >/dev/null || return 1
	[[ $sig == KILL ]] && rm -rf -- "$tmp"/kscale-perf.*
	! compgen -G "$tmp/kscale-perf.*" >/dev/null
}

test_bench_killed() {
	check "mnt_writers killed by SIGTERM leaves no file" killed_leaves_nothing
	check "real_lookup's FUSE run killed by SIGTERM leaves no mount" \
		fuse_killed_leaves_no_mount
	check "rwsem's fio_xfs run killed by SIGTERM leaves no mount or fio" \
		xfs_killed_leaves_nothing TERM
	check "rwsem's fio_xfs run killed by SIGKILL leaves no fio running" \
		xfs_killed_leaves_nothing KILL
	check "a profiled run killed by SIGTERM leaves no perf or file" \
		perf_killed_leaves_nothing TERM
	check "a profiled run killed by SIGKILL leaves no perf running" \
		perf_killed_leaves_nothing KILL
}

# The number of repetitions of every point in a results file.
reps_are() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import collections, json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b.get("run_type") == "iteration"]
counts = collections.Counter(b["name"] for b in rows)
assert set(counts.values()) == {int(sys.argv[2])}, counts
PY
}

# --target-ci: batches until the intervals are narrow or the cap is met.
test_run_adaptive() {
	local results=$KSCALE_RESULTS/adaptive

	printf 'run ad mnt_writers --variants=percpu --cpus=1 --mounts=1 --duration=0.02 --warmup=0.01 --perf=false --benchmark_repetitions=4 --target-ci=0.0001%% --max-repetitions=8\n' \
		>"$tmp/adaptive.conf"
	run "$kscale" run "$tmp/adaptive.conf"
	check "run --target-ci exits 0" test "$status" -eq 0
	check "an unreachable target stops at the cap: 8 repetitions" \
		reps_are "$results/ad.json" 8
	check "the log shows each batch's widest interval" \
		grep -q 'widest 95% CI of a median' "$results/ad.log"
	check "no batch file is left" \
		bash -c "! compgen -G '$results/.ad.batch*'"
	printf 'run ad mnt_writers --cpus=1 --max-repetitions=8\n' >"$tmp/capped.conf"
	run "$kscale" run "$tmp/capped.conf"
	check "--max-repetitions alone is refused" \
		grep -q 'needs --target-ci' "$tmp/err"
}

test_help
test_bad_input
test_run_smoke
test_run_adaptive
test_bench_bad_input
test_bench_fails_loudly
test_bench_killed
printf '%d passed, %d failed\n' "$passed" "$failed"
((failed == 0))
