# shellcheck shell=bash
# `kscale run`: load configs/*.conf (format: configs/default.conf) into a
# list of steps, check them, then execute them.  Sourced by scripts/kscale,
# which sets $root, $build, $results_dir, $plots_dir, $extra_args and
# $tmp_files and defines die and rel.

declare -A cfg_loaded=()	# config file -> 1: each config runs once
cfg_stack=()			# the include chain being loaded
declare -A cfg_labels=()	# "config-name/LABEL" -> where it is run
step_where=()			# per step: "file:line"
step_config=()			# per step: name of the config holding it
step_words=()			# per step: "DIRECTIVE ARGS..." (words have no blanks)
nr_runs=0			# run steps, for the progress lines
written=()			# files written, for the summary

# The config file named by SPEC: a NAME is configs/NAME.conf, anything with
# a '/' or ending in .conf is a path, relative to the directory DIR.
config_path() {
	local spec=$1 dir=$2

	if [[ $spec != */* && $spec != *.conf ]]; then
		printf '%s\n' "$root/configs/$spec.conf"
	elif [[ $spec == /* ]]; then
		printf '%s\n' "$spec"
	else
		printf '%s\n' "$dir/$spec"
	fi
}

name_re='[A-Za-z0-9_][A-Za-z0-9._+-]*'

# A label or binary name: used in file names.
check_name() {
	local where=$1 what=$2 value=$3

	if [[ ! $value =~ ^$name_re$ ]]; then
		die "$where: bad $what '$value' (letters, digits and ._+- only)"
	fi
}

# A compare side: VARIANT or VARIANT/KNOB:VALUE..., e.g. percpu/mounts:2,
# or a thread count percpu/threads:all*4.
check_selector() {
	local where=$1 value=$2 knob_re="$name_re:($name_re|all\\*[0-9]+)"

	if [[ ! $value =~ ^$name_re(/$knob_re)*$ ]]; then
		die "$where: bad variant '$value' (expected VARIANT or VARIANT/KNOB:VALUE...)"
	fi
}

# A selector in a file name: percpu/mounts:2 -> percpu_mounts-2,
# percpu/threads:all*4 -> percpu_threads-allx4.
selector_file_name() {
	local value=${1//\//_}

	value=${value//\*/x}
	printf '%s\n' "${value//:/-}"
}

# compare and plot use the results of an earlier run line of the same config.
check_label_run() {
	local where=$1 name=$2 label=$3

	check_name "$where" label "$label"
	if [[ -z ${cfg_labels[$name/$label]:-} ]]; then
		die "$where: no earlier 'run $label' in config $name"
	fi
}

config_line() {
	local file=$1 name=$2 where=$3 directive=$4

	shift 4
	case $directive in
	include)
		(($# == 1)) || die "$where: expected: include CONFIG"
		config_load "$(config_path "$1" "$(dirname -- "$file")")" "$where: "
		return
		;;
	run)
		(($# >= 2)) || die "$where: expected: run LABEL BINARY [ARGS...]"
		check_name "$where" label "$1"
		check_name "$where" binary "$2"
		if [[ -n ${cfg_labels[$name/$1]:-} ]]; then
			die "$where: label '$1' already run at ${cfg_labels[$name/$1]}"
		fi
		cfg_labels[$name/$1]=$where
		nr_runs=$((nr_runs + 1))
		;;
	compare)
		(($# >= 3)) || die "$where: expected: compare LABEL BEFORE AFTER [COMPARE ARGS...]"
		check_label_run "$where" "$name" "$1"
		check_selector "$where" "$2"
		check_selector "$where" "$3"
		;;
	plot)
		(($# >= 1)) || die "$where: expected: plot LABEL [PLOT ARGS...]"
		check_label_run "$where" "$name" "$1"
		;;
	*)
		die "$where: unknown directive '$directive' (expected include, run, compare or plot)"
		;;
	esac
	step_where+=("$where")
	step_config+=("$name")
	step_words+=("$directive $*")
}

# The include chain ending in FILE: "a.conf -> b.conf -> a.conf".
include_chain() {
	local f shown=()

	for f in "${cfg_stack[@]}" "$1"; do
		shown+=("$(rel "$f")")
	done
	printf '%s' "${shown[0]}"
	printf ' -> %s' "${shown[@]:1}"
}

# Append the steps of config FILE; FROM ("file:line: " or "") says who asked.
config_load() {
	local file=$1 from=$2 f name line words lineno=0

	[[ -f $file ]] || die "${from}unknown config $(rel "$file")"
	file=$(realpath -- "$file")
	for f in "${cfg_stack[@]}"; do
		if [[ $f == "$file" ]]; then
			die "${from}include loop: $(include_chain "$file")"
		fi
	done
	if [[ -n ${cfg_loaded[$file]:-} ]]; then
		return
	fi
	cfg_loaded[$file]=1
	cfg_stack+=("$file")
	name=$(basename -- "$file" .conf)
	while IFS= read -r line || [[ -n $line ]]; do
		lineno=$((lineno + 1))
		line=${line%%#*}
		read -ra words <<<"${line%$'\r'}"
		if ((${#words[@]})); then
			config_line "$file" "$name" "$(rel "$file"):$lineno" "${words[@]}"
		fi
	done <"$file"
	unset 'cfg_stack[-1]'
}

# Every run line's binary must exist (checked after the build).
check_binaries() {
	local i words bin

	for i in "${!step_words[@]}"; do
		read -ra words <<<"${step_words[i]}"
		[[ ${words[0]} == run ]] || continue
		bin=$build/bench/${words[2]}
		if [[ ! -f $bin || ! -x $bin ]]; then
			die "${step_where[i]}: no bench binary $(rel "$bin")"
		fi
	done
}

# A command line for display: paths under the current directory shortened.
show_cmd() {
	local arg shown=()

	for arg; do
		shown+=("${arg//"$PWD/"/}")
	done
	printf '%s\n' "${shown[*]}"
}

# Run CMD... with stdout to DEST through a temp file; DESC names it on failure.
write_atomic() {
	local desc=$1 dest=$2 status=0
	local tmp=${dest%/*}/.${dest##*/}.$$.tmp

	shift 2
	tmp_files+=("$tmp")
	"$@" >"$tmp" || status=$?
	if ((status)); then
		die "$desc failed with exit status $status" "$status"
	fi
	mv -f -- "$tmp" "$dest"
	written+=("$dest")
}

# run LABEL BINARY ARGS...: Google Benchmark's table and the stderr lines
# (shown as they come) go to LABEL.log, the results to LABEL.json.  With
# --target-ci=PCT [--max-repetitions=N] among ARGS (the runner's, not the
# binary's), the binary runs again, a batch of its own repetitions at a
# time, until every point's median has a 95% CI within PCT % (kscale
# adaptive) or N repetitions (default 3 batches) are in; LABEL.json then
# holds them all.
step_run() {
	local name=$1 progress=$2 label=$3 bin=$build/bench/$4 status=0
	local dir=$results_dir/$name
	local json=$dir/$label.json log=$dir/$label.log
	local arg target='' max='' args=() batches=() batch reps=1 done_reps=0

	shift 4
	for arg; do
		case $arg in
		--target-ci=*) target=${arg#*=} ;;
		--max-repetitions=*) max=${arg#*=} ;;
		--benchmark_repetitions=*) reps=${arg#*=}; args+=("$arg") ;;
		*) args+=("$arg") ;;
		esac
	done
	[[ -z $max || $max =~ ^[1-9][0-9]*$ ]] ||
		die "[$name] run $label: --max-repetitions=$max: expected a positive number"
	[[ -n $target || -z $max ]] ||
		die "[$name] run $label: --max-repetitions needs --target-ci"
	max=${max:-$((3 * reps))}
	mkdir -p -- "$dir"
	: >"$log"
	for ((batch = 1; ; batch++)); do
		local out=$json
		if [[ -n $target ]]; then
			out=$dir/.$label.batch$batch.$$.json
			tmp_files+=("$out")
			batches+=("$out")
		fi
		local cmd=("$bin" "${args[@]}" "${extra_args[@]}" "--benchmark_out=$out"
			   --benchmark_out_format=json)
		printf '[%s] run %s: %s: %s\n' "$name" "$progress" "$label" "$(show_cmd "${cmd[@]}")" >&2
		{ "${cmd[@]}" 2>&1 >&3 3>&- | tee -a -- "$log" >&2; } 3>>"$log" || status=$?
		if ((status)); then
			die "[$name] run $label failed with exit status $status; see $(rel "$log")" "$status"
		fi
		[[ -n $target ]] || break
		done_reps=$((done_reps + reps))
		local verdict
		verdict=$("$root/scripts/kscale-adaptive" check "--target-ci=$target" \
			  "${batches[@]}" 2>&1) || status=$?
		printf '%s\n' "$verdict" | tee -a -- "$log" >&2
		((status <= 1)) || die "[$name] run $label: kscale adaptive failed" "$status"
		((status == 1 && done_reps + reps <= max)) || break
		printf '[%s] run %s: %s: %d repetitions, %d more\n' "$name" "$progress" \
			"$label" "$done_reps" "$reps" >&2
		status=0
	done
	if [[ -n $target ]]; then
		"$root/scripts/kscale-adaptive" merge "$json" "${batches[@]}" ||
			die "[$name] run $label: cannot merge its batches"
		rm -f -- "${batches[@]}"
	fi
	written+=("$json" "$log")
}

# compare LABEL BEFORE AFTER ARGS...: the text table to stdout and .txt,
# the markdown table to .md.
# ".METRIC" (the first one named) when a compare picks metrics, so two
# compares of the same pair write two files.
metric_file_suffix() {
	local arg metric

	for arg in "$@"; do
		if [[ $arg == --metric=* ]]; then
			metric=${arg#--metric=}
			printf '.%s' "${metric%%,*}"
			return
		fi
	done
}

step_compare() {
	local name=$1 label=$2 before=$3 after=$4
	local what="[$name] compare $label $before $after"
	local out=$results_dir/$name/$label

	shift 4
	out+=.$(selector_file_name "$before")-$(selector_file_name "$after")
	out+=$(metric_file_suffix "$@")
	local cmd=("$root/scripts/kscale-compare" "$results_dir/$name/$label.json"
		   "--before=$before" "--after=$after" "$@")
	printf '\n=== %s ===\n' "$what"
	write_atomic "$what" "$out.txt" "${cmd[@]}"
	cat -- "$out.txt"
	write_atomic "$what --format=markdown" "$out.md" "${cmd[@]}" --format=markdown
}

# plot LABEL ARGS...: PNG and SVG files under $plots_dir/<config-name>/.
step_plot() {
	local name=$1 label=$2 status=0 files
	local dir=$plots_dir/$name

	shift 2
	printf '[%s] plot %s -> %s/\n' "$name" "$label" "$(rel "$dir")" >&2
	files=$("$root/scripts/kscale-plot" "$results_dir/$name/$label.json" \
		"--out-dir=$dir" "$@") || status=$?
	if ((status)); then
		die "[$name] plot $label failed with exit status $status" "$status"
	fi
	if [[ -n $files ]]; then
		mapfile -t -O "${#written[@]}" written <<<"$files"
	fi
}

run_steps() {
	local i words runs=0

	for i in "${!step_words[@]}"; do
		read -ra words <<<"${step_words[i]}"
		case ${words[0]} in
		run)
			runs=$((runs + 1))
			step_run "${step_config[i]}" "$runs/$nr_runs" "${words[@]:1}"
			;;
		compare)
			step_compare "${step_config[i]}" "${words[@]:1}"
			;;
		plot)
			step_plot "${step_config[i]}" "${words[@]:1}"
			;;
		esac
	done
}

summarize_written() {
	local f

	printf '\nkscale: %d files written:\n' "${#written[@]}"
	for f in "${written[@]}"; do
		printf '  %s\n' "$(rel "$f")"
	done
}
