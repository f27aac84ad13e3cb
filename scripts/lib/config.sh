# shellcheck shell=bash
# `kscale run`: load configs/*.conf (format: configs/default.conf) into a
# list of steps, check them, then execute them.  Sourced by scripts/kscale,
# which sets $root, $build, $results_dir, $plots_dir, $extra_args and
# $tmp_files and defines die and rel.

declare -A cfg_loaded=()	# config file -> 1: each config runs once
cfg_stack=()			# the include chain being loaded
declare -A cfg_labels=()	# "config-name/LABEL" -> where it is run
declare -A cfg_run_words=()	# "config-name/LABEL" -> its BINARY ARGS...
step_where=()			# per step: "file:line"
step_config=()			# per step: name of the config holding it
step_words=()			# per step: "DIRECTIVE ARGS..." (words have no blanks)
nr_runs=0			# run steps, for the progress lines
written=()			# files written, for the summary
committing=()			# commit_run: results temp, dest, log temp, dest
declare -A cfg_headlines=()	# config name -> its headline lines, one a line
summary_configs=()		# the configs with headline lines, in order
summaries=()			# their summary tables (.txt), printed last
seed_claims=$root/configs/seed-claims.tsv	# what each seed reported

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

# run LABEL BINARY ARGS...: the runner's own options among ARGS (step_run),
# --target-ci=PCT [--max-repetitions=N], and the --benchmark_repetitions=N
# it counts batches by.
check_run_options() {
	local where=$1 label=$2 arg target='' max=''

	shift 2
	for arg; do
		case $arg in
		--target-ci=*) target=${arg#*=}
			[[ $target =~ ^([0-9]*\.)?[0-9]+%?$ && $target =~ [1-9] ]] ||
				die "$where: run $label: $arg: expected a percentage above 0, e.g. 2%" ;;
		--max-repetitions=*) max=${arg#*=}
			[[ $max =~ ^[1-9][0-9]*$ ]] ||
				die "$where: run $label: $arg: expected a positive number" ;;
		--benchmark_repetitions=*)
			[[ ${arg#*=} =~ ^[1-9][0-9]*$ ]] ||
				die "$where: run $label: $arg: expected a positive number" ;;
		esac
	done
	[[ -n $target || -z $max ]] ||
		die "$where: run $label: --max-repetitions needs --target-ci"
}

headline_syntax='LABEL BEFORE AFTER --seed=SEED [--metric=NAME] [--here=LABEL] [--sensitivity]'

# headline LABEL ... --seed=SEED [--metric=NAME] [--here=HERE]
# [--sensitivity]: SEED has a line in $seed_claims, HERE an earlier run
# line; --sensitivity needs LABEL simulated on a machine file.
check_headline_options() {
	local where=$1 name=$2 label=$3 arg seed=''

	shift 3
	for arg; do
		case $arg in
		--seed=?*) seed=${arg#--seed=} ;;
		--metric=?*) check_name "$where" metric "${arg#--metric=}" ;;
		--here=?*) check_label_run "$where" "$name" "${arg#--here=}" ;;
		--sensitivity)
			[[ " ${cfg_run_words[$name/$label]} " =~ \ --sim=[^\ ] &&
			   ! " ${cfg_run_words[$name/$label]} " =~ \ --sim=here\  ]] ||
				die "$where: headline --sensitivity: run $label is not simulated on a machine file (--sim=MACHINE)"
			;;
		*) die "$where: headline: unexpected '$arg' (expected $headline_syntax)" ;;
		esac
	done
	[[ -n $seed ]] || die "$where: headline needs --seed=SEED (a seed of $(rel "$seed_claims"))"
	awk -F '\t' -v seed="$seed" 'NR > 1 && $1 == seed { found = 1 }
		END { exit !found }' "$seed_claims" ||
		die "$where: headline: no seed '$seed' in $(rel "$seed_claims")"
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
		check_run_options "$where" "$1" "${@:3}"
		if [[ -n ${cfg_labels[$name/$1]:-} ]]; then
			die "$where: label '$1' already run at ${cfg_labels[$name/$1]}"
		fi
		cfg_labels[$name/$1]=$where
		cfg_run_words[$name/$1]="${*:2}"
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
	predict)
		(($# >= 1)) && [[ $1 != -* ]] ||
			die "$where: expected: predict LABEL... [PREDICT ARGS...]"
		local arg
		for arg; do
			[[ $arg == -* ]] || check_label_run "$where" "$name" "$arg"
		done
		;;
	headline)
		(($# >= 3)) ||
			die "$where: expected: headline $headline_syntax"
		check_label_run "$where" "$name" "$1"
		check_selector "$where" "$2"
		check_selector "$where" "$3"
		check_headline_options "$where" "$name" "$1" "${@:4}"
		[[ -n ${cfg_headlines[$name]:-} ]] || summary_configs+=("$name")
		cfg_headlines[$name]+="$*"$'\n'
		return
		;;
	*)
		die "$where: unknown directive '$directive' (expected include, run, compare, plot, predict or headline)"
		;;
	esac
	step_where+=("$where")
	step_config+=("$name")
	step_words+=("$directive $*")
}

# The blank-separated words of LINE into the array named VAR.  read says 1
# where LINE ends in an incomplete multibyte character (a Latin-1 byte in
# a UTF-8 locale), having split it all the same.
split_words() {
	local -n into=$1

	# shellcheck disable=SC2034 # a nameref: the caller's array
	read -ra into <<<"$2" || true
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
		# bash's ${line%%#*} takes time quadratic in a line's length
		((${#line} <= 4096)) ||
			die "$(rel "$file"):$lineno: a line of over 4096 characters"
		line=${line%%#*}
		split_words words "${line%$'\r'}"
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
		split_words words "${step_words[i]}"
		[[ ${words[0]} == run ]] || continue
		bin=$build/bench/${words[2]}
		if [[ ! -f $bin || ! -x $bin ]]; then
			die "${step_where[i]}: no bench binary $(rel "$bin")"
		fi
	done
}

# kscale run --check CONFIG...: the configs are loaded; the binaries where
# the build has some, then one line: what would run.
check_only() {
	local spec shown=() i words binaries='binaries checked'
	local -A count=([run]=0 [compare]=0 [plot]=0 [predict]=0)

	for spec; do
		shown+=("$(rel "$(config_path "$spec" "$PWD")")")
	done
	if compgen -G "$build/bench/*" >/dev/null; then
		check_binaries
	else
		binaries="binaries not checked (none in $(rel "$build/bench"))"
	fi
	for i in "${!step_words[@]}"; do
		split_words words "${step_words[i]}"
		count[${words[0]}]=$((count[${words[0]}] + 1))
	done
	printf 'kscale: %s: OK: %d run, %d compare, %d plot, %d predict, %d headline lines; %s\n' \
		"$(IFS=' '; printf '%s' "${shown[*]}")" "${count[run]}" "${count[compare]}" \
		"${count[plot]}" "${count[predict]}" \
		"$(printf '%s' "${cfg_headlines[@]}" | grep -c .)" "$binaries"
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

# A bench's stderr on the console: its progress lines ("kscale: [k/N] ...")
# overwrite each other on a terminal and are left out elsewhere (the log
# has them); every other line as it comes.
console() {
	if [[ -t 2 ]]; then
		awk '/^kscale: \[[0-9]+\/[0-9]+\] / { printf "\r\033[K%s", $0; fflush(); p = 1; next }
		     { if (p) printf "\r\033[K"; p = 0; print; fflush() }
		     END { if (p) printf "\r\033[K" }'
	else
		grep --line-buffered -v '^kscale: \[[0-9]*/[0-9]*\] ' || true
	fi
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
	# results and log are temp files until the line ends (commit_run; a
	# failed line: its log): an interrupted line leaves the earlier pair
	local json=$dir/$label.json json_tmp=$dir/.$label.json.$$.tmp
	local log=$dir/.$label.log.$$.tmp log_dest=$dir/$label.log
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
	max=${max:-$((3 * reps))}	# all checked by check_run_options
	mkdir -p -- "$dir"
	tmp_files+=("$log" "$json_tmp")
	: >"$log"
	for ((batch = 1; ; batch++)); do
		local out=$json_tmp
		if [[ -n $target ]]; then
			out=$dir/.$label.batch$batch.$$.json
			tmp_files+=("$out")
			batches+=("$out")
		fi
		local cmd=("$bin" "${args[@]}" "${extra_args[@]}" "--benchmark_out=$out"
			   --benchmark_out_format=json)
		printf '$ %s\n' "$(show_cmd "${cmd[@]}")" >>"$log"
		# in the background, a job: a signal's trap (scripts/kscale) runs
		# at once and stops it; tee ignores ^C and shows the bench's end
		exec 3>>"$log" 4> >(trap '' INT; tee -a -- "$log" | console >&2)
		local tee_pid=$! pid
		"${cmd[@]}" 2>&4 >&3 3>&- 4>&- &
		pid=$!
		exec 3>&- 4>&-
		tmp_files+=("$out.tmp.$pid")	# the bench's own, were it killed
		wait "$pid" || status=$?
		wait "$tee_pid" || status=$((status ? status : $?))
		if ((status)); then
			mv -f -- "$log" "$log_dest"
			die "[$name] run $label failed with exit status $status; see $(rel "$log_dest")" "$status"
		fi
		[[ -n $target ]] || break
		done_reps=$((done_reps + reps))
		local verdict
		verdict=$("$root/scripts/kscale-adaptive" check "--target-ci=$target" \
			  "${batches[@]}" 2>&1) || status=$?
		printf '%s\n' "$verdict" | tee -a -- "$log" >&2
		((status <= 1)) || { mv -f -- "$log" "$log_dest"
			die "[$name] run $label: kscale adaptive failed" "$status"; }
		((status == 1 && done_reps + reps <= max)) || break
		printf '[%s] run %s: %s: %d repetitions, %d more\n' "$name" "$progress" \
			"$label" "$done_reps" "$reps" >&2
		status=0
	done
	if [[ -n $target ]]; then
		"$root/scripts/kscale-adaptive" merge "$json_tmp" "${batches[@]}" ||
			{ mv -f -- "$log" "$log_dest"
			  die "[$name] run $label: cannot merge its batches"; }
		rm -f -- "${batches[@]}"
	fi
	committing=("$json_tmp" "$json" "$log" "$log_dest")
	commit_run
	written+=("$json" "$log_dest")
}

# A run line's results and log into place, both: the signal trap
# (scripts/kscale) finishes what it interrupts.
commit_run() {
	if ((${#committing[@]})); then
		[[ ! -e ${committing[0]} ]] || mv -f -- "${committing[@]:0:2}"
		[[ ! -e ${committing[2]} ]] || mv -f -- "${committing[@]:2:2}"
		committing=()
	fi
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

# predict LABEL... ARGS...: kscale predict of those results files (the
# first one's directory gets predict.txt and .md), plots under
# $plots_dir/<config-name>/.
step_predict() {
	local name=$1 arg files=() args=() status=0

	shift
	for arg; do
		if [[ $arg == -* ]]; then
			args+=("$arg")
		else
			files+=("$results_dir/$name/$arg.json")
		fi
	done
	printf '\n=== [%s] predict %s ===\n' "$name" "$*"
	"$root/scripts/kscale-predict" "${files[@]}" "--out-dir=$plots_dir/$name" \
		"${args[@]}" || status=$?
	((status == 0)) || die "[$name] predict failed with exit status $status" "$status"
	written+=("$results_dir/$name/predict.txt" "$results_dir/$name/predict.md")
}

# SECONDS as "1m10s", "0m45s", as the bench binaries' progress lines.
fmt_seconds() {
	printf '%dm%02ds\n' $(($1 / 60)) $(($1 % 60))
}

# headline LABEL BEFORE AFTER ... --sensitivity: LABEL's run line again at
# the headline's point, with each estimated machine figure moved
# (kscale sim-sensitivity), into RESULTS_DIR/NAME/LABEL.sensitivity.*.json.
step_sensitivities() {
	local name spec words arg bin args metric status out

	for name in "${summary_configs[@]}"; do
		while IFS= read -r spec; do
			[[ " $spec " == *" --sensitivity "* ]] || continue
			split_words words "$spec"
			metric=()
			for arg in "${words[@]:3}"; do
				[[ $arg != --metric=* ]] || metric=("$arg")
			done
			split_words args "${cfg_run_words[$name/${words[0]}]}"
			bin=$build/bench/${args[0]}
			args=("${args[@]:1}")
			for arg in "${!args[@]}"; do
				case ${args[arg]} in
				--target-ci=* | --max-repetitions=*) unset 'args[arg]' ;;
				esac
			done
			printf '[%s] sensitivity %s %s %s\n' "$name" "${words[@]:0:3}" >&2
			status=0
			out=$("$root/scripts/kscale-sim-sensitivity" \
			      "--results-dir=$results_dir/$name" "--label=${words[0]}" \
			      "--before=${words[1]}" "--after=${words[2]}" "${metric[@]}" \
			      -- "$bin" "${args[@]}" "${extra_args[@]}") || status=$?
			((status == 0)) ||
				die "[$name] sensitivity ${words[*]:0:3} failed with exit status $status" "$status"
			written+=("$out")
		done <<<"${cfg_headlines[$name]%$'\n'}"
	done
}

# The summary table of each config with headline lines (kscale summary):
# results/NAME/summary.txt, printed after the list of files, and .md.
step_summaries() {
	local name specs out files status=0

	for name in "${summary_configs[@]}"; do
		mapfile -t specs <<<"${cfg_headlines[$name]%$'\n'}"
		out=$results_dir/$name/summary
		printf '[%s] summary -> %s.txt, .md\n' "$name" "$(rel "$out")" >&2
		files=$("$root/scripts/kscale-summary" "--claims=$seed_claims" \
			"--out=$out" "$results_dir/$name" "${specs[@]}") || status=$?
		if ((status)); then
			die "[$name] summary failed with exit status $status" "$status"
		fi
		mapfile -t -O "${#written[@]}" written <<<"$files"
		summaries+=("$out.txt")
	done
}

# Each run's progress line estimates the time left from the time so far.
run_steps() {
	local i words runs=0 start=$SECONDS eta

	for i in "${!step_words[@]}"; do
		split_words words "${step_words[i]}"
		case ${words[0]} in
		run)
			eta=''
			if ((runs)); then
				eta=" (ETA $(fmt_seconds $(((SECONDS - start) * (nr_runs - runs) / runs))))"
			fi
			runs=$((runs + 1))
			printf '[%s] run %d/%d: %s%s\n' "${step_config[i]}" "$runs" "$nr_runs" \
				"${words[1]}" "$eta" >&2
			step_run "${step_config[i]}" "$runs/$nr_runs" "${words[@]:1}"
			;;
		compare)
			step_compare "${step_config[i]}" "${words[@]:1}"
			;;
		plot)
			step_plot "${step_config[i]}" "${words[@]:1}"
			;;
		predict)
			step_predict "${step_config[i]}" "${words[@]:1}"
			;;
		esac
	done
	step_sensitivities
	step_summaries
}

summarize_written() {
	local f

	printf '\nkscale: %d files written:\n' "${#written[@]}"
	for f in "${written[@]}"; do
		printf '  %s\n' "$(rel "$f")"
	done
	for f in "${summaries[@]}"; do
		printf '\n'
		cat -- "$f"
	done
}
