#!/bin/bash
# shellcheck disable=SC2016 # the checks' eval strings expand when run
# kscale as an lkp-tests program (lkp/, `scripts/kscale lkp-install`), on a
# temporary copy of lkp-tests: $LKP_SRC when set, else ../shared/lkp-tests
# beside the repo (never modified).  lkp-install and its refusals; `lkp
# split-job` of every kscale job; parse on real kscale output (a failed run,
# the bench rejecting a job); two `lkp run`s of a small job, one with
# failing points, chrooted in a mount namespace to a root whose /lkp is
# its own (lkp's result root is fixed at /lkp), their stats against
# medians computed here from kscale's JSON; `lkp ncompare` of the two.
# Skips (exit 77, one line) without lkp-tests or ruby's gems.
# Usage: test_lkp.sh [BUILD_DIR]
set -uo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m -- "${1:-$root/build}")
shared=$root/../shared/lkp-tests
ref=${LKP_SRC:-$shared}
bench=$build/bench/mnt_writers

if [[ ! -x $ref/bin/lkp ]]; then
	echo "skip: no lkp-tests at $ref (set LKP_SRC to an lkp-tests tree)"
	exit 77
fi
if ! ruby -e 'require "active_support"; require "git"; require "term/ansicolor"
	      require "colorize"; require "tty-command"' 2>/dev/null; then
	echo "skip: ruby or its gems missing (scripts/kscale setup lkp installs them)"
	exit 77
fi

tmp=$(mktemp -d)
lkp_user=kscale-test-$$	# lkp's scratch directory is /tmp/lkp-$USER
cleanup() {
	kill_wakeups
	rm -rf -- "$tmp" "/tmp/lkp-$lkp_user"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
check_log=$tmp/err
dest=$tmp/lkp-tests
host=$(hostname)
status=0

# run CMD...: its status in $status, stdout in $tmp/out, stderr in $tmp/err.
run() {
	status=0
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null || status=$?
}

lines() {
	wc -l <"$1"
}

# jobs/kscale-seed-NAME.yaml for each configs/seed-NAME.conf
job_per_seed_config() {
	local conf

	for conf in "$root"/configs/seed-*.conf; do
		[[ -f $dest/jobs/kscale-$(basename "$conf" .conf).yaml ]] || return 1
	done
}

test_install() {
	local sum_before

	cp -a -- "$ref" "$dest" && chmod -R u+w -- "$dest"
	if [[ -d $shared ]]; then
		sum_before=$(cd -- "$shared" && find . -printf '%p %s %m %T@\n' | sort | md5sum)
		run "$root/scripts/kscale" lkp-install "$shared"
		check "lkp-install refuses the shared lkp-tests: exit 2, one line" \
			eval '((status == 2)) && (($(lines "$tmp/err") == 1))'
		check "the shared lkp-tests unchanged" test "$sum_before" = \
			"$(cd -- "$shared" && find . -printf '%p %s %m %T@\n' | sort | md5sum)"
	fi
	run "$root/scripts/kscale" lkp-install "$tmp"
	check "lkp-install refuses a directory that is not lkp-tests" \
		eval '((status == 2)) && (($(lines "$tmp/err") == 1))'
	run "$root/scripts/kscale" lkp-install "$dest"
	check "lkp-install exits 0" test "$status" -eq 0
	check "program installed: run, parse, meta.yaml, pkg/PKGBUILD" eval \
		'[[ -x $dest/programs/kscale/run && -x $dest/programs/kscale/parse &&
		    -f $dest/programs/kscale/meta.yaml && -f $dest/programs/kscale/pkg/PKGBUILD ]]'
	check "PKGBUILD builds this tree" \
		grep -qxF ": \"\${KSCALE_GIT:=$root}\"" "$dest/programs/kscale/pkg/PKGBUILD"
	check "a job per seed config" job_per_seed_config
	check "testcase kscale registered once (etc/linux-perf-test-cases)" \
		test "$(grep -cx kscale "$dest/etc/linux-perf-test-cases")" -eq 1
	check "kscale's KPIs in etc/index-perf-all.yaml" \
		grep -q '^kscale\\\.\.+\\\.ops_per_sec: 1$' "$dest/etc/index-perf-all.yaml"
	check "flattened symlinks restored (filters/need_kconfig_hw.rb)" \
		test -L "$dest/filters/need_kconfig_hw.rb"
	run "$root/scripts/kscale" lkp-install "$dest"
	check "lkp-install again: still registered once" eval '((status == 0)) &&
		(($(grep -cx kscale "$dest/etc/linux-perf-test-cases") == 1)) &&
		(($(grep -c "^kscale" "$dest/etc/index-perf-all.yaml") == 4))'

	# lkp's host file, as `lkp install` would write it
	sed -e "s/^nr_cpu:.*/nr_cpu: $(nproc)/" \
	    -e "s/^memory:.*/memory: $(($(awk '/^MemTotal/ { print $2 }' /proc/meminfo) / 1048576))G/" \
	    "$dest/hosts/vm-snb" >"$dest/hosts/$host"
}

# LKP_SRC=$dest lkp ARGS...
lkp() {
	LKP_SRC=$dest "$dest/bin/lkp" "$@"
}

# Every kscale job splits into its parts x nr_threads, each naming the
# bench, nr_threads as lkp writes CPU counts.
test_split_job() {
	local want=(kscale-seed-devzero:3 kscale-seed-mnt-openbench:6
		    kscale-seed-real-lookup:8 kscale-seed-rwsem-fio:9) w n

	mkdir -p "$tmp/split"
	run lkp split-job -o "$tmp/split" "$dest"/jobs/kscale-seed-*.yaml
	check "lkp split-job of every kscale job exits 0" test "$status" -eq 0
	for w in "${want[@]}"; do
		n=$(grep -c "^jobs/${w%:*}.yaml => \|/jobs/${w%:*}.yaml => " "$tmp/out")
		check "${w%:*}: ${w#*:} jobs" test "$n" -eq "${w#*:}"
	done
	check "split jobs name the bench and nr_threads 100%" eval '
		f=$(ls "$tmp/split"/kscale-seed-devzero-*-100%-*.yaml) &&
		grep -qx "  bench: shmem_fault" "$f" && grep -qx "nr_threads: 100%" "$f"'
	check "16 tasks a CPU: nr_threads 1600%" eval \
		'ls "$tmp/split"/kscale-seed-real-lookup-*-1600%-*.yaml >/dev/null'
	check "every split job's parameters: the bench accepts them (--dry-run)" \
		jobs_accepted "$tmp/split"/*.yaml
}

# programs/kscale/run of each job FILE... with its parameters, as lkp
# passes them (nr_threads N% as params/nr_threads maps it: N% of nr_cpu),
# against bench binaries that only --dry-run: each exits 0.
jobs_accepted() {
	local fake=$tmp/dry-build f model env

	mkdir -p "$fake/bench" "$tmp/dry"
	for model in "$build"/bench/*; do
		[[ -f $model && -x $model ]] || continue
		printf '#!/bin/sh\nexec %q "$@" --dry-run\n' "$model" >"$fake/bench/${model##*/}"
		chmod +x "$fake/bench/${model##*/}"
	done
	for f; do
		mapfile -t env < <(ruby -ryaml -e '
			job = YAML.load_file(ARGV[0])
			job["kscale"].each { |k, v| puts "#{k}=#{v}" }
			n = job["nr_threads"].to_s
			n = (n.to_f * job["nr_cpu"] / 100).to_i.to_s if n.end_with?("%")
			puts "nr_threads=#{n}" unless n.empty?' "$f") || return 1
		if ! env -i PATH="$PATH" LKP_SRC="$dest" TMP_RESULT_ROOT="$tmp/dry" \
			KSCALE_BUILD="$fake" "${env[@]}" "$dest/programs/kscale/run" \
			>"$tmp/err" 2>&1; then
			printf '%s:\n' "${f##*/}" >>"$tmp/err"
			return 1
		fi
	done
}

# expect_stats STATS JSON [PREFIX]: STATS ("key: value" lines, or lkp's
# stats.json) holds, for every point of kscale's JSON, the median of each
# metric over its successful repetitions and, for a failed point, fail: 1,
# keys as WORKLOAD.VARIANT.KNOB=VALUE-....THREADS.METRIC (PREFIX before),
# and no other PREFIX key.  Computed here, from the JSON alone.
expect_stats() {
	/usr/bin/python3 - "$@" 2>"$tmp/err" <<'PY'
import json, math, statistics, sys

stats_path, json_path = sys.argv[1], sys.argv[2]
prefix = sys.argv[3] if len(sys.argv) > 3 else ""
text = open(stats_path).read()
if stats_path.endswith(".json"):
    got = json.loads(text)
else:
    got = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.partition(": ")
            got[k] = float(v)
skip = {"family_index", "per_family_instance_index", "repetitions",
        "repetition_index", "threads", "iterations"}
values, failed = {}, set()
for row in json.load(open(json_path))["benchmarks"]:
    if row.get("run_type") != "iteration":
        continue
    parts = row["name"].split("/")
    knobs = [seg.replace(":", "=", 1) for seg in parts[3:]
             if ":" in seg and seg.split(":")[0] not in ("iterations", "threads")]
    point = ".".join([parts[1], parts[2], "-".join(knobs), str(row["threads"])])
    if row.get("error_occurred"):
        failed.add(point)
        continue
    for k, v in row.items():
        if k in skip or not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        if math.isfinite(v):
            values.setdefault(f"{prefix}{point}.{k}", []).append(float(v))
want = {k: statistics.median(v) for k, v in values.items()}
want.update({f"{prefix}{p}.fail": 1 for p in failed})
# lkp's dump-stat drops stats that are 0 (a missing stat is 0 to lkp)
lkp = stats_path.endswith(".json")
bad = [k for k, v in want.items()
       if not math.isclose(got.get(k, 0 if lkp else math.nan), v, rel_tol=1e-12)]
extra = [k for k in got if k.startswith(prefix) and k not in want
         and not k.startswith(prefix + "time.")]
for k in bad[:5]:
    print(f"  {k}: want {want[k]}, got {got.get(k)}", file=sys.stderr)
for k in extra[:5]:
    print(f"  unexpected {k}: {got[k]}", file=sys.stderr)
if not want or bad or extra:
    sys.exit(1)
print(f"  {len(want)} stats, {len(failed)} failed points")
PY
}

# parse on the bench's own output: points that ran and points that failed
# (--migrate needs two usable CPUs: one is allowed), 3 repetitions (a
# median, not a mean); a job the bench rejects; a missing bench binary.
test_parse() {
	local parse=$dest/programs/kscale/parse rr=$tmp/rr

	status=0
	taskset -c 0 "$bench" --variants=atomic,percpu --migrate=0,1 --cpus=1 \
		--duration=0.05 --warmup=0.01 --benchmark_repetitions=3 \
		--benchmark_format=json >"$tmp/failed.json" 2>"$tmp/bench.err" || status=$?
	check "a run that fails: the bench exits 1" test "$status" -eq 1
	run "$parse" "$tmp/failed.json"
	cp "$tmp/out" "$tmp/parsed"
	check "parse: medians of kscale's points, POINT.fail: 1 for failed ones" \
		expect_stats "$tmp/parsed" "$tmp/failed.json"
	check "parse: the failed points named (migrate=1, both variants)" \
		test "$(grep -c '^openbench\.[a-z]*\.mounts=1-path_work_ns=0-migrate=1-[a-z_=0-9-]*placement=compact\.1\.fail: 1$' "$tmp/parsed")" -eq 2
	check "parse: no bench-wide fail for failed points" eval '! grep -q "^fail:" "$tmp/parsed"'

	# programs/kscale/run as lkp runs it: a knob value the bench rejects
	mkdir -p "$rr"
	run env -i PATH="$PATH" LKP_SRC="$dest" TMP_RESULT_ROOT="$rr" KSCALE_BUILD="$build" \
		bench=mnt_writers knobs="mounts:3" nr_threads=1 "$dest/programs/kscale/run"
	cp "$tmp/out" "$rr/kscale"
	check "run: a rejected job exits 2" test "$status" -eq 2
	check "run: --mounts=3 passed from knobs mounts:3" grep -q -- "--mounts=3 " "$rr/kscale"
	status=0
	RESULT_ROOT=$rr "$parse" <"$rr/kscale" >"$tmp/out" 2>"$tmp/err" || status=$?
	check "parse: the bench's error as fail: 1 with its message" eval \
		'grep -qx "fail: 1" "$tmp/out" && grep -q "^# mnt_writers: --mounts=3" "$tmp/out"'
	run env -i PATH="$PATH" LKP_SRC="$dest" TMP_RESULT_ROOT="$rr" \
		KSCALE_BUILD="$tmp/nowhere" bench=mnt_writers "$dest/programs/kscale/run"
	check "run: no bench binary dies as lkp's die (99)" test "$status" -eq 99
}

# lkp run's event helper (bin/event/wakeup) leaves a child asleep for an
# hour per event, its pid in $TMP/pid-wakeup (lkp's TMP: /tmp/lkp-$USER):
# end ours.
kill_wakeups() {
	local pids=/tmp/lkp-$lkp_user/pid-wakeup

	if [[ -f $pids ]]; then
		xargs -r kill <"$pids" 2>/dev/null
		rm -f -- "$pids"
	fi
	return 0
}

# In a mount namespace: a root of our own, a tmpfs holding each top-level
# directory of / bound in (the host's own, /tmp included) but an empty
# /lkp of its own: lkp's fixed result root, made nowhere on the host, so
# tests running at once never meet.  Called inside `unshare -m`.
private_root() {
	local new=$tmp/root e

	mount --make-rprivate / || return 1
	mkdir -p "$new" && mount -t tmpfs kscale-root "$new" || return 1
	for e in /*; do
		if [[ $e == /lkp ]]; then
			continue
		elif [[ -L $e ]]; then
			cp -P -- "$e" "$new/" || return 1
		elif [[ -d $e ]]; then
			mkdir -- "$new$e" && mount --rbind -- "$e" "$new$e" || return 1
		fi
	done
	mkdir -- "$new/lkp"
}

# In that root: run the small job twice, as kernels "kscale-a" (all CPUs)
# and "kscale-b" (one CPU: its migrate=1 points fail), copy each result
# root to $tmp/rt-a, rt-b, compare them.
lkp_runs() {
	local job=$1

	[[ $(stat -f -c %T /) == tmpfs && -d /lkp ]] || return 1	# ours
	export USER=$lkp_user KSCALE_BUILD=$build
	lkp run -s 'commit: kscale-a' -o "$tmp/link-a" "$job" >"$tmp/run-a.log" 2>&1
	echo "lkp run a: $?"
	kill_wakeups
	LKP_SRC=$dest taskset -c 0 "$dest/bin/lkp" run -s 'commit: kscale-b' \
		-o "$tmp/link-b" "$job" >"$tmp/run-b.log" 2>&1
	echo "lkp run b: $?"
	kill_wakeups
	cp -a "$(readlink "$tmp/link-a")" "$tmp/rt-a"
	cp -a "$(readlink "$tmp/link-b")" "$tmp/rt-b"
	lkp ncompare -a kscale-a kscale-b >"$tmp/ncompare" 2>"$tmp/ncompare.err"
	echo "lkp ncompare: $?"
}

test_lkp_run() {
	local job

	if ((EUID != 0)) || ! unshare -m true 2>/dev/null; then
		echo "skip: lkp run needs root (a mount namespace and chroot for a private /lkp)"
		return
	fi
	cat >"$tmp/kscale-small.yaml" <<-EOF
	suite: kscale
	testcase: kscale
	nr_threads: 1
	kscale:
	  bench: mnt_writers
	  workload: openbench
	  variants: atomic,percpu
	  knobs: migrate:0,1
	  duration: 0.05
	  warmup: 0.01
	  repetitions: 2
	EOF
	mkdir -p "$tmp/small"
	run lkp split-job -o "$tmp/small" "$tmp/kscale-small.yaml"
	job=$(ls "$tmp/small"/*.yaml)
	check "split-job of the small job" test -f "$job"
	export -f lkp lkp_runs private_root kill_wakeups
	export dest tmp lkp_user build
	unshare -m bash -c 'private_root && chroot "$tmp/root" bash -c "lkp_runs \"\$1\"" bash "$1"' \
		bash "$job" >"$tmp/lkp-runs" 2>&1
	check_log=$tmp/lkp-runs
	check "lkp run, run, ncompare" eval '[[ $(cat "$tmp/lkp-runs") == "lkp run a: 0
lkp run b: 0
lkp ncompare: 0" ]]'
	check_log=$tmp/err
	for side in a b; do
		check "lkp run $side: stats.json has kscale's medians and failed points" \
			expect_stats "$tmp/rt-$side/stats.json" "$tmp/rt-$side/kscale.output" kscale.
	done
	check "lkp run a: nr_threads 1 ran 1 thread (--cpus=1)" eval '
		grep -o "\"kscale\.[^\"]*\"" "$tmp/rt-a/stats.json" | grep "compact\.1\." >/dev/null &&
		! grep -o "\"kscale\.[^\"]*\"" "$tmp/rt-a/stats.json" | grep -v "compact\.1\." >/dev/null'
	check "lkp run a: nothing failed" eval \
		'! grep -q "\.fail\"" "$tmp/rt-a/stats.json" || (($(nproc) < 2))'
	check "lkp run b: the migrate=1 points failed, lkp recorded exit status 1" eval '
		grep -q "\"kscale\.openbench\.atomic\.mounts=1-path_work_ns=0-migrate=1-[a-z_=0-9-]*placement=compact\.1\.fail\": 1" "$tmp/rt-b/stats.json" &&
		grep -q "\"last_state\.test\.kscale\.exit_code\.1\": 1" "$tmp/rt-b/stats.json"'
	check_log=$tmp/ncompare
	check "lkp ncompare: %stddev and %change columns" \
		grep -q '%stddev *%change *%stddev' "$tmp/ncompare"
	check "lkp ncompare: kscale's ops_per_sec with its %change" \
		grep -Eq '[-+][0-9.e+]+% +[0-9.e+]+( ± *[0-9]+%)? +kscale\.openbench\.percpu\.mounts=1-path_work_ns=0-migrate=0-[a-z_=0-9-]*placement=compact\.1\.ops_per_sec$' "$tmp/ncompare"
	check "lkp ncompare: the failed points in fail:runs columns" eval '
		grep -q "fail:runs" "$tmp/ncompare" &&
		grep -Eq " 1:1 +kscale\.openbench\.percpu\.mounts=1-path_work_ns=0-migrate=1-[a-z_=0-9-]*placement=compact\.1\.fail$" "$tmp/ncompare"'
	check_log=$tmp/err
}

test_install
test_split_job
test_parse
test_lkp_run
echo "$passed passed, $failed failed"
((failed == 0))
