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

	# an earlier run's file, and a dead run's staging directory
	mkdir -p -- "$results" "$KSCALE_RESULTS/.smoke.new"
	printf 'earlier\n' >"$results/earlier.txt"
	run "$kscale" run "$root/configs/smoke.conf"
	check "run smoke.conf exits 0" test "$status" -eq 0
	check "run: the results replaced all at once" test ! -e "$results/earlier.txt"
	check "run: no staging directory left" only_files "$KSCALE_RESULTS" \
		.smoke.lock smoke
	check "smoke.json parses" json_parses "$results/smoke.json"
	check "compare .txt has % change" grep -q '% change' "$results/smoke.atomic-percpu.txt"
	check "compare .md written" test -s "$results/smoke.atomic-percpu.md"
	check "compare table printed" grep -q '% change' "$tmp/out"
	check "PNG plot written" png_written "$KSCALE_PLOTS/smoke"
}

# A run line that fails leaves the earlier results as they were and names
# its log, in the staging directory.
test_run_fails_whole() {
	local results=$KSCALE_RESULTS/fails conf=$tmp/fails.conf

	mkdir -p -- "$results"
	printf 'earlier\n' >"$results/earlier.txt"
	printf '%s\n' "run ok mnt_writers --variants=atomic --cpus=1 --duration=0.01 --warmup=0" \
		"run bad mnt_writers --variants=atomic --cpus=1 --duration=0.01 --warmup=0 --benchmark_filter=nothing" \
		>"$conf"
	run "$kscale" run "$conf"
	check "run, a failed line: non-zero exit" test "$status" -ne 0
	check "run, a failed line: the earlier results as they were" \
		only_files "$results" earlier.txt
	check "run, a failed line: its log named" \
		grep -q "see .*\.fails\.new/bad\.log" "$tmp/err"
}

# The bench binary (or BIN) rejects ARG: non-zero exit, one stderr line of its own,
# no output file (nor temp file) left.
bench_rejects() {
	local dir=$tmp/bench-out bin=${2:-$bench}

	rm -rf -- "$dir"
	mkdir -- "$dir"
	run "$bin" "$1" "--benchmark_out=$dir/out.json" --benchmark_out_format=json
	((status != 0)) && one_stderr_line &&
		grep -q "^${bin##*/}: " "$tmp/err" && [[ -z $(ls -A -- "$dir") ]]
}

test_bench_bad_input() {
	local arg

	for arg in --cpus=0 --cpus=abc --cpus=99999 --placement=list:9999 \
		   --cpus= --cpus=1, --placement=fill --placement=list: \
		   --duration=-1 --duration=5x --warmup=-1 --numa-emulate=0 \
		   --numa-emulate=99 --variants=nope --workloads=nope \
		   --mounts=3 --mounts= --path-work-ns=fast --migrate=2 \
		   --perf=maybe --perf= --bogus --mounts=1,,2 --mounts=,1 \
		   --mounts=1, --workloads=openbench, --variants=,atomic \
		   --variants=atomic,,percpu --placement=list:0,0 \
		   --placement=list:0,,1 --cpus=all*2 --cpus=sweep*2 \
		   --cpus=sweep, --cpus=1,,sweep --cpus=sweep-2 \
		   --duration=abc --benchmark_repetitions=x --v=x \
		   --benchmark_format=bogus --benchmark_out_format=xml \
		   --benchmark_bogus=1 --benchmark_out= --cpus \
		   "--calibration=$tmp/nonexistent/cal"; do
		check "mnt_writers $arg" bench_rejects "$arg"
	done
	# a size whose k/m/g shift overflows wrapped to a small one (fuzzed)
	# and locktest's reader share (the same knob: a count or P%)
	for arg in --size=17179869185g --size=99999999999999999999 --bs=0k \
		   --readers=101% --readers=% --readers=-1 --readers=5%% \
		   --readers=65537 --hold-ns=-1; do
		check "rwsem $arg" bench_rejects "$arg" "${bench%/*}/rwsem"
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

# The flag table (--list's flag lines) is --help: every flag, every knob.
help_lists_every_flag() {
	local kind name n=0

	"$bench" --help >"$tmp/help" || return 1
	"$bench" --list >"$tmp/list" || return 1
	while read -r kind name _; do
		[[ $kind == flag || $kind == knob ]] || continue
		n=$((n + 1))
		grep -Eq -- "^  (-., )?--${name//_/-}(=|\[=0\|1\]| |\$)" "$tmp/help" ||
			{ echo "  --help lacks --$name"; return 1; }
	done <"$tmp/list"
	((n >= 17))
}

# --list's flag lines, "  flag     %-12s %s (default %s)", the bench's
# common flags each once, after the knob lines.
list_has_flag_lines() {
	local name

	"$bench" --list >"$tmp/list" || return 1
	for name in cpus placement workloads variants duration warmup watchdog \
		    numa-emulate oversubscribe slice-us preempt perf profile \
		    calibration dry-run list help; do
		(($(grep -Ec "^  flag     $name +[^ ].* \(default .*\)\$" \
			"$tmp/list") == 1)) || { echo "  no flag line $name"; return 1; }
	done
	grep -q '^  flag     perf         .* (default 1)$' "$tmp/list" &&
		grep -q '^  flag     duration     .* (default 1)$' "$tmp/list" &&
		awk '/^  knob / { k = NR } /^  flag / && !f { f = NR }
		     END { exit !(f && (!k || k < f)) }' "$tmp/list"
}

# ARG... refused, exit 2, one line saying WANT (the first argument).
bench_says() {
	local want=$1

	shift
	run "$bench" --dry-run "$@"
	expect_error 2 && grep -qF -- "$want" "$tmp/err"
}

test_bench_flags() {
	local arg name

	check "--help lists every flag and knob of the table" help_lists_every_flag
	check "--list has a line per flag after the knobs" list_has_flag_lines
	# one boolean syntax: --NAME alone is 1, --NAME=0|1
	for arg in --perf --perf=0 --perf=1 --profile --profile=0 --dry-run=1 \
		   --oversubscribe --oversubscribe=0 --migrate --migrate=0,1; do
		run "$bench" --dry-run "$arg"
		check "boolean $arg accepted" test "$status" -eq 0
	done
	run "$bench" --dry-run=0 --variants=atomic --cpus=1 \
		--benchmark_filter=nothing
	check "--dry-run=0 is no dry run" grep -q "nothing ran" "$tmp/err"
	check "--oversubscribe=0 does not oversubscribe" bench_says \
		"add --oversubscribe" --oversubscribe=0 --cpus=all*2
	check "--oversubscribe=1 oversubscribes" counts_are "$((2 * $(nproc)))" \
		--oversubscribe=1 --cpus=all*2
	for arg in --perf=false --perf=true --profile=true --profile=false \
		   --dry-run=yes --oversubscribe=2 --migrate=true --list=true; do
		name=${arg%%=*}
		check "old boolean $arg refused with the syntax" bench_says \
			"$arg: a boolean is $name alone (1) or $name=0|1" "$arg"
	done
	# a selection or a knob value given twice is refused, in one line
	check "--variants=atomic,atomic refused" bench_says \
		"mnt_writers: --variants=atomic,atomic: atomic given twice" \
		--variants=atomic,atomic
	check "--workloads=openbench,openbench refused" bench_says \
		"--workloads=openbench,openbench: openbench given twice" \
		--workloads=openbench,openbench
	check "--path-work-ns=auto,auto refused" bench_says \
		"--path-work-ns=auto,auto: auto given twice" --path-work-ns=auto,auto
	check "--mounts=1,1 refused" bench_says "--mounts=1,1: 1 given twice" \
		--mounts=1,1
	check "--migrate=1,1 refused" bench_says "--migrate=1,1: 1 given twice" \
		--migrate=1,1
	for arg in --variants=atomic,atomic --mounts=1,1; do
		check "mnt_writers $arg" bench_rejects "$arg"
	done
	# thread counts are a set: 1,sweep overlaps by design, merged
	check "--cpus=1,1 is 1 (merged, as 1,sweep is)" counts_are 1 --cpus=1,1
}

# An output file that cannot be written: one line, before any run, nothing
# written.
out_dir_missing() {
	local dir=$tmp/nodir

	rm -rf -- "$dir"
	run "$bench" --variants=atomic --cpus=1 --duration=0.02 --warmup=0 \
		"--benchmark_out=$dir/x.json"
	((status != 0)) && one_stderr_line &&
		grep -qx "mnt_writers: cannot write $dir/x.json: No such file or directory" \
			"$tmp/err" && [[ ! -e $dir ]] && [[ ! -s $tmp/out ]]
}

# A shmem_fault row that needs more memory than the machine has is refused
# before it allocates (it met the OOM killer in a 4 GB guest at 256
# threads).  16k pages: 64 threads of 2^24 pages want 16 TiB; the address
# space limit makes a missing check fail in malloc(), not in the OOM killer.
too_big_refused() {
	run bash -c 'ulimit -v 8388608; exec "$@"' - "${bench%/*}/shmem_fault" \
		--variants=stat_lock --cpus=64 --oversubscribe --pages=16777216 \
		--page-size=16k --duration=0.1 --warmup=0 \
		"--benchmark_out=$tmp/big.json"
	((status == 1)) && [[ ! -e $tmp/big.json ]] &&
		grep -q ": 64 threads of --pages=16777216 need 16777216 MiB, more than the [0-9]* MiB available: lower --pages$" "$tmp/err"
}

test_bench_fails_loudly() {
	check "shmem_fault: a row bigger than memory is refused, no file" \
		too_big_refused
	check "--benchmark_out in a missing directory: one line, nothing ran" \
		out_dir_missing
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
		--perf=0 >/dev/null 2>&1 &
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

	TMPDIR=$tmp "${bench%/*}/shmem_fault" --workloads=fault \
		--variants=real --cpus=1 --pages=256 --duration=5 --warmup=0 \
		--perf=1 >/dev/null 2>"$tmp/err" &
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

# SIGKILL undoes nothing: the next bench removes the dead one's directories.
killed_dirs_reaped() {
	local pid

	"$bench" --variants=real --cpus=1 --duration=5 --warmup=0 \
		--perf=0 >/dev/null 2>&1 &
	pid=$!
	sleep 1
	kill -KILL "$pid"
	wait "$pid"
	compgen -G "/dev/shm/kscale.$pid.*" >/dev/null || return 1
	"$bench" --variants=real --cpus=1 --duration=0.02 --warmup=0 \
		--perf=0 >/dev/null 2>&1 &&
		! compgen -G "/dev/shm/kscale.$pid.*" >/dev/null
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
	if [[ -w /dev/shm ]]; then
		check "a SIGKILLed bench's directories go with the next bench" \
			killed_dirs_reaped
	fi
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

	printf 'run ad mnt_writers --variants=percpu --cpus=1 --mounts=1 --duration=0.02 --warmup=0.01 --perf=0 --benchmark_repetitions=4 --target-ci=0.0001%% --max-repetitions=8\n' \
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

# --dry-run's thread counts are WANT (a comma list) with ARGS....
counts_are() {
	local want=$1

	shift
	run "$bench" --dry-run "$@"
	((status == 0)) && grep -q "^thread counts (.*): $want\$" "$tmp/out"
}

# all is N alone, sweep the default; what they are on this machine.
test_bench_cpu_counts() {
	local n sweep="" i

	n=$(nproc)
	# one node: the powers of two below N, and N
	for ((i = 1; i < n; i *= 2)); do
		sweep+=$i,
	done
	sweep+=$n
	check "--cpus=all is $n alone" counts_are "$n" --cpus=all
	check "--cpus=all*2 is $((2 * n))" counts_are "$((2 * n))" \
		--cpus=all*2 --oversubscribe
	check "--cpus=1-all is every count" counts_are "$(seq -s, 1 "$n")" \
		--cpus=1-all
	if [[ $(echo /sys/devices/system/node/node[0-9]*) != *' '* ]]; then
		check "--cpus=sweep is $sweep" counts_are "$sweep" --cpus=sweep
		check "the default is sweep" counts_are "$sweep"
		check "1,sweep is sweep" counts_are "$sweep" --cpus=1,sweep
		check "sweep,all*2 adds $((2 * n))" counts_are \
			"$sweep,$((2 * n))" --cpus=sweep,all*2 --oversubscribe
	fi
	check "list:0,0 with --oversubscribe: all is 2" counts_are 2 \
		--placement=list:0,0 --oversubscribe --cpus=all
	check "list:0,0 with --oversubscribe puts both threads on CPU 0" \
		grep -q "thread 1 -> cpu 0 " "$tmp/out"
}

# The two runs' contexts: the first measured path_work_ns, the second
# reused it from FILE, which holds that value.
calibration_reused() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
first, second, path = sys.argv[1:]
c1, c2 = (json.load(open(f))["context"] for f in (first, second))
saved = dict(line.split() for line in open(path) if not line.startswith("#"))
assert c1["kscale_calibration"] == path + ": 0 values reused, 1 measured", c1
assert c2["kscale_calibration"] == path + ": 1 values reused, 0 measured", c2
assert c1["kscale_path_work_ns_auto"] == c2["kscale_path_work_ns_auto"] == \
	saved["mnt_writers.path_work_ns"], (c1, c2, saved)
PY
}

# --calibration=FILE: written by the first run, reused by the second; a
# malformed FILE is one line, exit 2, no results and FILE untouched.
test_bench_calibration() {
	local dir=$tmp/calibration
	local said="mnt_writers: calibration: $dir/cal:"
	local args=(--path-work-ns=auto --duration=0.02 --warmup=0 --cpus=1
		    --variants=atomic)

	rm -rf -- "$dir"
	mkdir -p -- "$dir/out"
	run "$bench" "${args[@]}" "--calibration=$dir/cal" \
		"--benchmark_out=$dir/first.json"
	check "--calibration: a first run exits 0" test "$status" -eq 0
	check "--calibration: a first run writes FILE" \
		grep -qx 'mnt_writers.path_work_ns [0-9]*' "$dir/cal"
	check "--calibration: a first run says it measured" \
		grep -qx "$said 0 values reused, 1 measured" "$tmp/err"
	run "$bench" "${args[@]}" "--calibration=$dir/cal" \
		"--benchmark_out=$dir/second.json"
	check "--calibration: a second run exits 0" test "$status" -eq 0
	check "--calibration: a second run says it reused" \
		grep -qx "$said 1 values reused, 0 measured" "$tmp/err"
	check "--calibration: the same value, and the context says reused" \
		calibration_reused "$dir/"{first,second}.json "$dir/cal"
	printf 'mnt_writers.path_work_ns 900\nmnt_writers.x fast\n' >"$dir/bad"
	cp -- "$dir/bad" "$dir/bad.orig"
	run "$bench" "${args[@]}" "--calibration=$dir/bad" \
		"--benchmark_out=$dir/out/bad.json"
	check "--calibration: a malformed FILE is exit 2, one line" \
		expect_error 2
	check "--calibration: the line names FILE and the line" \
		grep -q "^mnt_writers: --calibration=$dir/bad: line 2: " \
		"$tmp/err"
	check "--calibration: a malformed FILE leaves no output" \
		test -z "$(ls -A -- "$dir/out")"
	check "--calibration: a malformed FILE is left as it was" \
		cmp -s -- "$dir/bad" "$dir/bad.orig"
}

# The summary table of a config's headline lines is printed last and
# written; a bad headline line is refused at load time, in one line.
summary_printed_last() {
	awk '/^kscale: [0-9]+ files written:$/ { files = NR }
	     /^kscale summary: / { title = NR }
	     /^000 .* atomic -> percpu .* at 2 (CPUs|tasks) .*(significant|no verdict)$/ { line = NR }
	     END { exit !(files && title > files && line > title) }' "$tmp/out"
}

test_run_headline() {
	local results=$KSCALE_RESULTS/headline
	local line='run smoke mnt_writers --variants=atomic,percpu --cpus=2 --oversubscribe'

	line+=' --duration=0.05 --warmup=0.01 --benchmark_repetitions=4'
	printf '%s\nheadline smoke atomic percpu --seed=000\n' "$line" >"$tmp/headline.conf"
	run "$kscale" run "$tmp/headline.conf"
	check "run with a headline exits 0" test "$status" -eq 0
	check "the summary table is printed last" summary_printed_last
	check "summary.txt written" \
		grep -q '^000 .* atomic -> percpu ' "$results/summary.txt"
	check "summary.md written" \
		grep -q '^| 000 | .* | atomic -> percpu | ' "$results/summary.md"
	printf '%s\nheadline nope atomic percpu --seed=000\n' "$line" >"$tmp/headline-nolabel.conf"
	run "$kscale" run "$tmp/headline-nolabel.conf"
	check "a headline of a label not run: exit 2, one line" expect_error 2
	check "... which names the label" grep -q "no earlier 'run nope'" "$tmp/err"
	printf '%s\nheadline smoke atomic percpu\n' "$line" >"$tmp/headline-noseed.conf"
	run "$kscale" run "$tmp/headline-noseed.conf"
	check "a headline without --seed: exit 2, one line" expect_error 2
	check "... which asks for --seed" grep -q 'headline needs --seed=SEED' "$tmp/err"
	check "no bad headline ran anything" test ! -e "$KSCALE_RESULTS/headline-nolabel" -a \
		! -e "$KSCALE_RESULTS/headline-noseed"
}

# joined_has FILE TEXT: TEXT in FILE, its lines joined (the notes wrap).
joined_has() {
	tr -s ' \n' ' ' <"$1" | grep -qF -- "$2"
}

# A headline's --sensitivity re-runs are made with run --sensitivity only;
# without, the summary says they were not run.
test_run_sensitivity() {
	local results=$KSCALE_RESULTS/sensitivity
	local line='run sim mnt_writers --sim=ibm-4way-xeon-smp-2007 --cpus=4'

	line+=' --variants=atomic,percpu --path-work-ns=1000 --duration=0.002'
	line+=' --warmup=0.001 --benchmark_repetitions=2'
	printf '%s
headline sim atomic/threads:4 percpu/threads:4 --seed=000 --sensitivity\n' \
		"$line" >"$tmp/sensitivity.conf"
	run "$kscale" run "$tmp/sensitivity.conf"
	check "run, a headline with --sensitivity: exit 0" test "$status" -eq 0
	check "... no re-run made" test -z "$(find "$results" -name '*.sensitivity.*')"
	check "... and the summary says so" \
		joined_has "$results/summary.txt" "Sensitivity of 000: not run"
	run "$kscale" run --sensitivity "$tmp/sensitivity.conf"
	check "run --sensitivity: exit 0" test "$status" -eq 0
	check "... the re-runs written" test -n "$(find "$results" -name '*.sensitivity.*')"
	check "... and their note in the summary" joined_has "$results/summary.txt" \
		"Sensitivity of 000: its simulated ratio re-run"
}

# What an interrupted `kscale run` may leave, listed: mount points, loop
# devices, /dev/shm entries; in DIR/before or DIR/after (WHEN).
host_snapshot() {
	local out=$1/$2

	mkdir -p -- "$out"
	awk '{ print $5 }' /proc/self/mountinfo | sort >"$out/mounts"
	losetup -a 2>/dev/null | sort >"$out/loops"
	find /dev/shm -mindepth 1 -maxdepth 1 -printf '%f\n' | sort >"$out/shm"
}

# Nothing in the sorted list AFTER that is not in BEFORE, but what a live
# process has mounted (a bench running beside the tests): a new entry
# whose first word is WORD is in use when some mountinfo shows
# PREFIX<WORD without a trailing ':'>SUFFIX.
nothing_new() {
	local before=$1 after=$2 prefix=${3:-} suffix=${4:-} entry new=0

	while read -r entry _; do
		if [[ -n $prefix ]] && grep -qsF -- "$prefix${entry%:}$suffix" 			/proc/[0-9]*/mountinfo; then
			continue
		fi
		printf '  new: %s\n' "$entry"
		new=1
	done < <(comm -13 -- "$before" "$after")
	((new == 0))
}

# DIR holds exactly the files NAME....
only_files() {
	local dir=$1

	shift
	[[ $(ls -A -- "$dir") == "$(printf '%s\n' "$@" | sort)" ]]
}

# `kscale run` of a two-line config gets SIG during its second (long) run
# line: sent to its process group (HOW=group, ^C in a terminal) or to the
# runner alone (HOW=pid, kill(1)).  Everything under DIR: the runner's
# TMPDIR (tmp), results (results/interrupted), host snapshots (before,
# after).  $status: the
# runner's exit status, $waited the tenths of a second it took to exit
# (50: it did not), $tmp/err its stderr.
interrupt_run() {
	local sig=$1 how=$2 dir=$3 results=$3/results/interrupted long pid i

	rm -rf -- "$dir"
	mkdir -p -- "$dir/tmp" "$results"
	if ((EUID == 0)) && grep -qw xfs /proc/filesystems &&
	   command -v mkfs.xfs >/dev/null && command -v fio >/dev/null; then
		long="rwsem --variants=fio_xfs --io-path-ns=0 --map-ns=0"
	else
		long="mnt_writers --variants=real"
	fi
	printf '%s\n' "run first mnt_writers --variants=percpu --cpus=1 --mounts=1 --duration=0.02 --warmup=0.01 --perf=0" \
		"run second $long --cpus=1 --duration=10 --warmup=0 --perf=0" \
		>"$dir/interrupted.conf"
	# an earlier invocation's results of the second line
	printf '{"earlier": true}\n' >"$results/second.json"
	printf 'earlier log\n' >"$results/second.log"
	cp -- "$results/second.json" "$results/second.log" "$dir/"
	host_snapshot "$dir" before
	# a session of its own, SIGINT not ignored: as a terminal starts it
	TMPDIR=$dir/tmp KSCALE_RESULTS=$dir/results /usr/bin/python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execv(sys.argv[1], sys.argv[1:])' "$kscale" run "$dir/interrupted.conf" \
		>"$tmp/out" 2>"$tmp/err" </dev/null &
	pid=$!
	# the second line's bench has started
	for ((i = 0; i < 150; i++)); do
		pgrep -f -- "--duration=10 .*$dir/" >/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 1
	if [[ $how == group ]]; then
		kill -"$sig" -- -"$pid"
	else
		kill -"$sig" "$pid"
	fi
	# it stops the bench, which takes its XFS down: a second or two
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	waited=$i
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
	status=0
	wait "$pid" 2>/dev/null || status=$?
	host_snapshot "$dir" after
	# whatever is left running (bench, tee, fio) names a path under DIR
	pgrep -f -- "$dir/" >"$dir/survivors"
}

# Stop what a failed interrupt_run left running (by pid) and mounted.
interrupt_run_cleanup() {
	local dir=$1 pid i

	while read -r pid; do
		kill -TERM "$pid" 2>/dev/null
	done <"$dir/survivors"
	for ((i = 0; i < 100; i++)); do
		pgrep -f -- "$dir/" >/dev/null || break
		sleep 0.1
	done
	for pid in $(pgrep -f -- "$dir/"); do
		kill -KILL "$pid" 2>/dev/null
	done
	for i in "$dir"/tmp/kscale-*; do
		[[ -e $i ]] || continue
		umount -l -- "$i" 2>/dev/null
		rm -rf -- "$i"
	done
}

# SIG sent HOW (interrupt_run) leaves the earlier results alone and nothing
# else: exit status WANT, the earlier second line's files unchanged, the
# finished first line's not installed (a run changes its results all at
# once), no staging directory, temp file, mount, loop device, /dev/shm
# entry or process.
interrupted_run_leaves_only_earlier_results() {
	local sig=$1 how=$2 want=$3 dir=$tmp/interrupted-$1
	local results=$dir/results/interrupted what="SIG$1 to the runner's ${2/pid/pid alone}"

	interrupt_run "$sig" "$how" "$dir"
	check "run, $what: exits within 5 s" test "$waited" -lt 50
	check "run, $what: exit status $want" test "$status" -eq "$want"
	check "run, $what: the earlier second.json is intact" \
		cmp -s -- "$dir/second.json" "$results/second.json"
	check "run, $what: the earlier second.log is intact" \
		cmp -s -- "$dir/second.log" "$results/second.log"
	check "run, $what: only the earlier results, no temp or batch file" \
		only_files "$results" second.json second.log
	check "run, $what: no staging directory left" only_files "$dir/results" \
		.interrupted.lock interrupted
	check "run, $what: no bench, tee or fio left running" \
		test ! -s "$dir/survivors"
	check "run, $what: no mount left" nothing_new "$dir/before/mounts" \
		"$dir/after/mounts"
	check "run, $what: no mount point left in TMPDIR" \
		test -z "$(ls -A -- "$dir/tmp")"
	check "run, $what: no loop device left" nothing_new \
		"$dir/before/loops" "$dir/after/loops" " " " "
	check "run, $what: nothing left in /dev/shm" nothing_new \
		"$dir/before/shm" "$dir/after/shm" " /dev/shm/" "/"
	interrupt_run_cleanup "$dir"
}

test_run_interrupted() {
	interrupted_run_leaves_only_earlier_results INT group 130
	interrupted_run_leaves_only_earlier_results TERM pid 143
}

test_help
test_bad_input
test_run_smoke
test_run_fails_whole
test_run_adaptive
test_bench_bad_input
test_bench_flags
test_bench_fails_loudly
test_bench_killed
test_bench_cpu_counts
test_bench_calibration
test_run_headline
test_run_sensitivity
test_run_interrupted

# kscale predict on a tiny profiled run: its tables, files and plots, and
# bad input refused in one line with nothing written.
test_predict() {
	local dir=$tmp/predict
	local json=$dir/results/p_mnt.json plots=$dir/plots

	run "$kscale" predict --help
	check "kscale predict --help" expect_usage predict
	if ! "$bench" --help 2>&1 | grep -- '--profile' >/dev/null; then
		printf 'skipping kscale predict on a real run: %s has no --profile\n' "$bench"
		return
	fi
	mkdir -p -- "$dir/results"
	run "$bench" --variants=atomic,percpu --cpus=1,2 --profile --duration=0.05 \
		--warmup=0.01 --benchmark_repetitions=4 "--benchmark_out=$json" \
		--benchmark_out_format=json
	check "mnt_writers --profile exits 0" test "$status" -eq 0
	run "$kscale" predict "$json" "--out-dir=$plots"
	check "predict exits 0" test "$status" -eq 0
	check "predict validates at 2 threads" grep -Eq '^atomic +2 +4 profiled ' "$tmp/out"
	check "predict tabulates to 512 CPUs" grep -Eq '^Variant +Validation +1 +2 +4 .* 512$' "$tmp/out"
	check "predict refuses the USL on 2 CPUs" \
		grep -q '^USL: needs 3 or more CPU counts, have 2$' "$tmp/out"
	check "predict has a line per seed" grep -Eq '^000 +atomic -> percpu ' "$tmp/out"
	check "predict.txt written" test -s "$dir/results/predict.txt"
	check "predict.md written" grep -q '^| Variant |' "$dir/results/predict.md"
	if command -v gnuplot >/dev/null; then
		check "predict plot written" png_written "$plots"
	fi
	rm -rf -- "$plots" "$dir/results/predict.txt" "$dir/results/predict.md"
	run "$kscale" predict "$json" --machine=no-such-machine "--out-dir=$plots"
	check "predict: unknown machine" expect_error 2
	check "predict: unknown machine writes nothing" only_files "$dir/results" p_mnt.json
	run "$kscale" predict "$json" "--seed-scale=$dir/none.tsv" "--out-dir=$plots"
	check "predict: missing seed-scale" expect_error 2
	check "predict: missing seed-scale writes nothing" only_files "$dir/results" p_mnt.json
	check "predict: no plots on bad input" test ! -e "$plots"
}

test_predict
printf '%d passed, %d failed\n' "$passed" "$failed"
((failed == 0))
