#!/bin/bash
# The bad-input corpus (tests/cli/bad-inputs/*.cases): every file kscale
# reads, broken one way a line, refused in one line naming the file, exit
# status 2, nothing written and the file left as it was; then what the
# world does to the analysis commands (a closed pipe, Ctrl-C, an
# unwritable or full output, a missing build, a run or label that does
# not exist): one line, non-zero, nothing written.  Usage:
# test_bad_inputs.sh [BUILD_DIR].  No case depends on timing.
set -uo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(realpath -m -- "${1:-$root/build}")
cases=$root/tests/cli/bad-inputs
kscale=$root/scripts/kscale
fixture=$root/tests/analysis/fixtures/run_a.json
tmp=$(mktemp -d)
trap 'umount "$tmp"/mnt-* 2>/dev/null; rm -rf -- "$tmp"' EXIT
export KSCALE_NO_SETUP=1 KSCALE_BUILD=$build
export KSCALE_RESULTS=$tmp/out/results KSCALE_PLOTS=$tmp/out/plots
passed=0
failed=0

# The cases of FILE: "WHAT|FILTER" lines, comments and blanks skipped.
cases_of() {
	sed -e '/^#/d' -e '/^ *$/d' "$cases/$1.cases"
}

fail() {
	failed=$((failed + 1))
	printf 'FAIL: %s: %s\n' "$1" "$2"
	sed 's/^/  /' "$tmp/err"
}

# CMD... exits WANT (2 unless given as want=N first) with one stderr line
# holding NEEDLE (the input's path), writing nothing under $tmp/out and
# leaving INPUT as it was.  Checked as WHAT.
refused() {
	local what=$1 input=$2 needle=$3 want=2 status=0 sum

	shift 3
	if [[ $1 == want=* ]]; then
		want=${1#want=}
		shift
	fi
	rm -rf -- "$tmp/out"
	mkdir -p -- "$tmp/out"
	sum=$(cat -- "$input" 2>/dev/null | md5sum)
	"$@" >"$tmp/stdout" 2>"$tmp/err" </dev/null || status=$?
	if ((status != want)); then
		fail "$what" "exit status $status, not $want"
	elif (($(wc -l <"$tmp/err") != 1)); then
		fail "$what" "$(wc -l <"$tmp/err") lines on stderr, not 1"
	elif ! grep -qF -- "$needle" "$tmp/err"; then
		fail "$what" "the line does not name $needle"
	elif [[ -n $(find "$tmp/out" -mindepth 1 -not -type d) ]]; then
		fail "$what" "wrote $(find "$tmp/out" -mindepth 1 -not -type d)"
	elif [[ $(cat -- "$input" 2>/dev/null | md5sum) != "$sum" ]]; then
		fail "$what" "changed $input"
	else
		passed=$((passed + 1))
	fi
}

# Each case of CLASS: its BASE through the case's filter into FILE, then
# the class's checks on it.
corpus() {
	local class=$1 base=$2 file=$3 what filter

	while IFS='|' read -r what filter; do
		what=${what%"${what##*[! ]}"}
		bash -c "$filter" <"$base" >"$file" 2>/dev/null
		"check_$class" "$class: $what" "$file"
	done < <(cases_of "$class")
}

check_machine() {
	refused "$1" "$2" "$2:" "$build/bench/primitives" "--sim=$2" --cpus=1 \
		--duration=0.001 "--benchmark_out=$tmp/out/o.json"
}

check_calibration() {
	refused "$1" "$2" "--calibration=$2: line " "$build/bench/mnt_writers" \
		--variants=atomic --cpus=1 --duration=0.01 --warmup=0 --perf=0 \
		--path-work-ns=auto "--calibration=$2" \
		"--benchmark_out=$tmp/out/o.json"
}

# A file of a copy of configs/validation ($tmp/data), the others whole.
check_validation() {
	refused "$1" "$2" "$2" "$kscale" sim-validate --published \
		"--data=$tmp/data" "--out=$tmp/out/sv" "--plot-dir=$tmp/out/plots"
}

check_datasets() {
	check_validation "$@"
}

check_series() {
	check_validation "$@"
}

check_curve() {
	check_validation "$@"
}

check_config() {
	refused "$1" "$2" "${2##*/}" "$kscale" run "$2"
}

check_unknowns() {
	refused "$1" "$2" "$2" "$root/scripts/kscale-summary" \
		"--claims=$root/configs/seed-claims.tsv" "--unknowns=$2" \
		"--out=$tmp/out/s" "--plots=$tmp/out/plots" "${fixture%/*}" \
		"run_a atomic percpu --seed=000"
}

check_results() {
	local t

	for t in compare plot noise predict; do
		case $t in
		compare) set -- "$1" "$2" --before=percpu --after=atomic ;;
		plot | predict) set -- "$1" "$2" "--out-dir=$tmp/out/plots" ;;
		noise) set -- "$1" "$2" ;;
		esac
		refused "$1 ($t)" "$2" "$2" "$kscale" "$t" "${@:2}"
		set -- "${1% (*}" "$2"
	done
}

test_corpus() {
	printf 'mnt_writers.path_work_ns 1000\n' >"$tmp/cal.base"
	printf '%s\n' 'run a mnt_writers --variants=atomic,percpu --mounts=1 --cpus=1 --duration=0.01 --warmup=0 --perf=0' \
		'compare a atomic percpu' >"$tmp/conf.base"
	if [[ -x $build/sim/primitives ]]; then
		corpus machine "$root/configs/machines/ibm-4way-xeon-smp-2007.conf" \
			"$tmp/m.conf"
	else
		echo "SKIP: machine files: no simulator's build ($build/sim)"
	fi
	corpus calibration "$tmp/cal.base" "$tmp/cal"
	corpus config "$tmp/conf.base" "$tmp/c.conf"
	corpus results "$fixture" "$tmp/r.json"
	corpus unknowns "$root/configs/seed-unknowns.tsv" "$tmp/u.tsv"
	cp -r -- "$root/configs/validation" "$tmp/data"
	for f in datasets:datasets.tsv series:series.tsv \
		 curve:jordan-2018-page-fault1.tsv; do
		corpus "${f%%:*}" "$root/configs/validation/${f#*:}" \
			"$tmp/data/${f#*:}"
		cp -- "$root/configs/validation/${f#*:}" "$tmp/data/${f#*:}"
	done
}

# What the world does to the analysis commands.
test_commands() {
	local dir=$tmp/keep mnt

	mkdir -p -- "$dir"
	printf 'earlier\n' >"$dir/validation.json"
	refused "sim-validate --only=bogus" "$dir/validation.json" \
		"--only=bogus: no run 'bogus'" "$kscale" sim-validate \
		--only=bogus "--out=$dir"
	refused "sim-validate --published --only=bogus" "$dir/validation.json" \
		"--only: no data set 'bogus'" "$kscale" sim-validate --published \
		--only=bogus "--out=$dir"
	refused "sim-validate --published --seeds=0" "$dir/validation.json" \
		"--seeds are at least 1" "$kscale" sim-validate --published \
		--seeds=0 "--out=$dir"
	refused "sim-validate --data without --published" \
		"$dir/validation.json" "--data is --published's" "$kscale" \
		sim-validate --data=configs/validation "--out=$dir"
	refused "sim-validate without a build" "$dir/validation.json" \
		"/nonexistent/torture/torture" want=1 env \
		KSCALE_BUILD=/nonexistent "$kscale" sim-validate "--out=$dir"
	refused "sim-sensitivity --label of no run" "$fixture" "--label=nope" \
		"$kscale" sim-sensitivity "--results-dir=$dir" --label=nope \
		--before=a --after=b -- "$build/bench/primitives" \
		--sim=ibm-4way-xeon-smp-2007
	refused "sim-sensitivity --jobs=0" "$fixture" "--jobs=0" \
		"$kscale" sim-sensitivity "--results-dir=$dir" --label=nope \
		--jobs=0 --before=a --after=b -- "$build/bench/primitives" \
		--sim=ibm-4way-xeon-smp-2007
	refused "run without a build" "$fixture" "no bench binary" env \
		KSCALE_BUILD=/nonexistent "$kscale" run smoke
	refused "plot into /proc" "$fixture" "/proc/kscale" want=2 "$kscale" \
		plot "$fixture" --out-dir=/proc/kscale
	refused "plot into /sys" "$fixture" "/sys/kernel" want=2 "$kscale" \
		plot "$fixture" --out-dir=/sys/kernel
	# a second run on a results directory: flock(1) holds it meanwhile
	mkdir -p -- "$tmp/locked"
	cp -- "$tmp/conf.base" "$tmp/lk.conf"
	refused "a second run on one results directory" "$tmp/lk.conf" \
		"another kscale run" flock "$tmp/locked/.lk.lock" env \
		KSCALE_RESULTS="$tmp/locked" "$kscale" run "$tmp/lk.conf"
	[[ $(ls -A "$tmp/locked") == .lk.lock ]] ||
		fail "a second run" "wrote $(ls -A "$tmp/locked")"
	# stdout a pipe whose reader is gone before it starts (| head -1 of
	# a longer output): EPIPE, not a traceback
	refused "compare into a closed pipe" "$fixture" "broken pipe" want=1 \
		/usr/bin/python3 -c '
import os, sys
r, w = os.pipe()
os.close(r)
os.dup2(w, 1)
os.execv(sys.argv[1], sys.argv[1:])' "$kscale" compare "$fixture" \
		--before=percpu --after=atomic
	# Ctrl-C while it waits in open() for a FIFO's writer (the kernel's
	# wait_for_partner()): no timing involved
	mkfifo -- "$tmp/fifo"
	refused "compare, Ctrl-C" "$fixture" "interrupted" want=130 \
		bash -c '"$@" & pid=$!
			 for ((i = 0; i < 1000; i++)); do
				 [[ $(cat /proc/$pid/wchan 2>/dev/null) == wait_for_partner ]] && break
				 sleep 0.01
			 done
			 kill -INT $pid; wait $pid' - /usr/bin/python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
os.execv(sys.argv[1], sys.argv[1:])' "$kscale" compare "$tmp/fifo" \
		--before=percpu --after=atomic
	if ((EUID)); then
		echo "SKIP: a full or read-only output: needs root to mount a tmpfs"
		return
	fi
	for mnt in full ro; do
		mkdir -p -- "$tmp/mnt-$mnt"
		mount -t tmpfs -o size=64k kscale-test "$tmp/mnt-$mnt" || return
	done
	head -c 65536 /dev/zero >"$tmp/mnt-full/filler" 2>/dev/null
	mount -o remount,ro "$tmp/mnt-ro"
	refused "plot onto a full disk" "$tmp/mnt-full/filler" \
		"No space left on device" want=2 "$kscale" plot "$fixture" \
		"--out-dir=$tmp/mnt-full/plots"
	refused "plot onto a read-only disk" "$fixture" "Read-only file system" \
		want=2 "$kscale" plot "$fixture" "--out-dir=$tmp/mnt-ro/plots"
	[[ -z $(find "$tmp/mnt-ro" "$tmp/mnt-full" -not -type d -not -name filler) ]] ||
		fail "full and read-only disks" "a file was left: $(ls -AR "$tmp"/mnt-*)"
	umount "$tmp"/mnt-*
}

test_corpus
test_commands
printf '%d passed, %d failed\n' "$passed" "$failed"
((failed == 0))
