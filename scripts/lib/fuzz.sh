# shellcheck shell=bash
# `kscale fuzz`: the C parsers' libFuzzer targets (BUILD/tests/fuzz/fuzz_*,
# tests/fuzz/meson.build) and the Python ones (tests/fuzz/fuzz_*.py).
# Sourced by scripts/kscale, which sets $root and $build and defines die,
# rel and setup_unless_told_not_to.

usage_fuzz() {
	cat <<EOF
usage: kscale fuzz [--seconds=N] [TARGET...]

Set up, then fuzz each TARGET (default: every one) for N seconds (default
60): the C parsers' libFuzzer targets, built in BUILD/tests/fuzz when
clang and libclang-rt-14-dev are there (cpulist, options, placement,
calibration, fio_json, perf_report, fuse_request), and the Python ones,
tests/fuzz/fuzz_*.py.  A libFuzzer target starts from a copy of its seed
corpus, tests/fuzz/corpus/TARGET/, in BUILD/fuzz/TARGET/, which keeps its
log, the inputs it found and its crash inputs until the next run.  A
line per target:
  fuzz TARGET: N execs in S s, N crashes
then each crash input's path: once fixed, copy it into
tests/fuzz/regress/TARGET/ (the fuzz_regress test runs it).  Exits 1 if a
target crashed, 77 if there is nothing to fuzz.
EOF
}

# "NAME KIND PATH" for every target: c (libFuzzer) or py.
fuzz_targets() {
	local f name

	for f in "$build"/tests/fuzz/fuzz_*; do
		if [[ -f $f && -x $f && $f != *.d ]]; then
			name=${f##*/fuzz_}
			printf '%s c %s\n' "$name" "$f"
		fi
	done
	for f in "$root"/tests/fuzz/fuzz_*.py; do
		if [[ -f $f && -x $f ]]; then
			name=${f##*/fuzz_}
			printf '%s py %s\n' "${name%.py}" "$f"
		fi
	done
}

# A target's own TMPDIR ($1) after it exited: empty, or a line naming
# what it left and 1 (a Python target's scratch directory was left in
# /tmp by every run until pyfuzz removed it at exit).
left_nothing() {
	local left

	left=$(find "$1" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null)
	[[ -z $left ]] && return
	printf 'fuzz %s: left in its TMPDIR: %s\n' "$2" "${left% }"
	return 1
}

# One libFuzzer target for $3 s in BUILD/fuzz/NAME: its line, and 1 if it
# crashed.
fuzz_c_target() {
	local name=$1 bin=$2 seconds=$3 dir=$build/fuzz/$1 status=0
	local start elapsed execs crash crashes dict=()

	rm -rf -- "$dir"
	mkdir -p -- "$dir/corpus" "$dir/crashes" "$dir/tmp"
	if compgen -G "$root/tests/fuzz/corpus/$name/*" >/dev/null; then
		cp -- "$root/tests/fuzz/corpus/$name"/* "$dir/corpus/"
	fi
	if [[ -f $root/tests/fuzz/$name.dict ]]; then
		dict=("-dict=$root/tests/fuzz/$name.dict")
	fi
	start=$(date +%s.%N)
	TMPDIR=$dir/tmp "$bin" -max_total_time="$seconds" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$dir/crashes/" \
		"${dict[@]}" "$dir/corpus" >"$dir/log" 2>&1 || status=$?
	elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" \
		'BEGIN { printf "%.0f", e - s }')
	execs=$(awk '/^stat::number_of_executed_units:/ { n = $2 }
		     END { print n + 0 }' "$dir/log")
	mapfile -t crashes < <(find "$dir/crashes" -type f \
				  ! -name 'slow-unit-*' | sort)
	# a failure without an input to blame: its log is the evidence
	if ((status != 0 && ${#crashes[@]} == 0)); then
		crashes=("$dir/log")
	fi
	printf 'fuzz %s: %s execs in %s s, %d crashes\n' "$name" "$execs" \
		"$elapsed" "${#crashes[@]}"
	for crash in "${crashes[@]}"; do
		printf '  %s (log: %s)\n' "$(rel "$crash")" "$(rel "$dir/log")"
	done
	left_nothing "$dir/tmp" "$name" && ((${#crashes[@]} == 0))
}

cmd_fuzz() {
	local seconds=60 names=() targets=() line name kind path python=python3
	local failed=0 ran=0 found

	while (($#)); do
		case $1 in
		-h | --help) usage_fuzz; return ;;
		--seconds=*) seconds=${1#--seconds=} ;;
		-*) die "fuzz: unknown option '$1' (see kscale fuzz --help)" ;;
		*) names+=("$1") ;;
		esac
		shift
	done
	[[ $seconds =~ ^[1-9][0-9]{0,6}$ ]] ||
		die "fuzz: --seconds=$seconds: expected whole seconds from 1"
	setup_unless_told_not_to test
	mapfile -t targets < <(fuzz_targets)
	if ! printf '%s\n' "${targets[@]}" | grep -q ' c '; then
		printf 'kscale: fuzz: no libFuzzer target in %s (%s): %s\n' \
			"$(rel "$build/tests/fuzz")" \
			"clang and libclang-rt-14-dev needed" \
			"the C parsers are not fuzzed" >&2
	fi
	for name in "${names[@]}"; do
		found=0
		for line in "${targets[@]}"; do
			[[ ${line%% *} == "$name" ]] && found=1
		done
		((found)) || die "fuzz: no target '$name' (there are: $(
			printf '%s\n' "${targets[@]%% *}" | sort -u | xargs))"
	done
	if [[ -x /usr/bin/python3 ]]; then
		python=/usr/bin/python3
	fi
	for line in "${targets[@]}"; do
		read -r name kind path <<<"$line"
		if ((${#names[@]})) && ! printf '%s\n' "${names[@]}" |
		   grep -qxF -- "$name"; then
			continue
		fi
		ran=$((ran + 1))
		if [[ $kind == c ]]; then
			fuzz_c_target "$name" "$path" "$seconds" || failed=1
		else
			rm -rf -- "$build/fuzz/$name/tmp"
			mkdir -p -- "$build/fuzz/$name/tmp"
			TMPDIR=$build/fuzz/$name/tmp KSCALE_BUILD=$build \
				"$python" "$path" --seconds="$seconds" \
				--out-dir="$build/fuzz/$name" || failed=1
			left_nothing "$build/fuzz/$name/tmp" "$name" || failed=1
		fi
	done
	if ((ran == 0)); then
		printf 'kscale: fuzz: nothing to fuzz\n' >&2
		exit 77
	fi
	return "$failed"
}
