#!/bin/bash
# scripts/kscale torture: the framework fails each kind of broken model
# (tests/torture_check.c) and passes a sound one; bad arguments get one
# line and exit 2; then every primitive and model variant, briefly
# (KSCALE_TORTURE_SECONDS each, default 1.5: under a minute on 2 CPUs),
# ends SUCCESS with Fail: 0, the hooks having stretched its sections, but
# for a variant with a posted bug, which must end FAILURE, as expected.
# Usage: test_torture.sh BUILD_DIR MODEL... (meson passes model_sources')
set -uo pipefail

build=${1:-build}
models=("${@:2}")
torture=$build/torture/torture
broken=$build/tests/torture_check
secs=${KSCALE_TORTURE_SECONDS:-1.5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check.sh
source "$(dirname "$0")/check.sh"
check_log=$tmp/out

# run CMD...: stdout and stderr into $tmp/out, exit status in $status.
run() {
	status=0
	"$@" >"$tmp/out" 2>&1 || status=$?
}

has() {
	grep -Eq -- "$1" "$tmp/out"
}

# broken VARIANT PATTERN [FLAG...]: that variant fails (exit 1, FAILURE)
# saying PATTERN.  The stall bound is torture's own (10 s) but where the
# check is of a stall: 1 s then, as a loaded host may stall a task that
# long and a false stall must not end another check's run.
broken() {
	run timeout 60 "$broken" --seconds=2 "${@:3}" "broken/$1"
	[[ $status == 1 ]] && has "broken/$1-torture: .*FAILURE" && has "$2"
}

# A row of a variant table without its implementation: refused, one line.
run "$build/tests/torture_check_broken" --list
check "a variant row without an implementation is refused" eval '[[ $status == 2 ]] && [[ $(wc -l <"$tmp/out") == 1 ]] && has "^torture: broken: variant .typo.: a model row without an implementation \(.ops\)$"'

run "$broken" --seconds=1 broken/sound
check "a sound model passes" eval '[[ $status == 0 ]] && has "broken/sound-torture: .* Fail: 0$" && has "End of test: SUCCESS"'
check "two holders of a lock are caught" broken unlocked "FAIL: task [0-9]+ took the lock task [0-9]+ holds"
check "a wrong count is caught at a quiet point" broken bad_count "FAIL: count [0-9]+, taken [0-9]+"
check "a lost wake-up is caught and the run ends" broken lost_wakeup "FAIL: task 0: no progress for [0-9]+ s" --stall=1
run timeout 60 "$broken" --seconds=1 broken/posted
check "a posted bug caught passes, as expected" eval '[[ $status == 0 ]] && has "broken/posted-torture: End of test: FAILURE, as expected from the posted bug: spin_lock"'
check "a posted bug missed fails" broken posted_missed "broken/posted_missed-torture: End of test: FAILURE: missed the posted bug: "

for bad in --seconds=abc --seconds=0 --tasks=1.5 --numa-emulate=0 --bogus \
	   --seconds --list=true nosuchmodel primitives/nosuch; do
	run "$torture" "$bad"
	check "bad argument $bad: exit 2, one line" eval '[[ $status == 2 && $(wc -l <"$tmp/out") == 1 ]] && has "^torture: [-a-z]"'
done
# --help is the flag table: every flag of it, in the one boolean syntax
run "$torture" --help
check "--help lists every flag" eval '[[ $status == 0 ]] && has "^  --seconds=S " && has "^  --quiet-ms=MS " && has "^  -h, --help "'
run "$torture" --list=1
check "--list=1 is --list" has "^mnt_writers/percpu_seed posted bug: "

run "$torture" --list
cp "$tmp/out" "$tmp/list"
lists_every_model() {
	local m

	((${#models[@]})) || return 1
	for m in primitives "${models[@]}"; do
		grep -q "^$m/" "$tmp/list" || return 1
	done
}
check "--list names the primitives and every model" lists_every_model
nr_variants=$(wc -l <"$tmp/list")
nr_posted=$(grep -c ' posted bug: ' "$tmp/list")
check "--list names mnt_writers/percpu_seed's posted bug" \
	grep -q '^mnt_writers/percpu_seed posted bug: mnt_drop_write() ' "$tmp/list"

run "$torture" "--seconds=$secs"
cp "$tmp/out" "$tmp/all"
check "every other variant ($((nr_variants - nr_posted))) ends SUCCESS with Fail: 0" eval \
	'[[ $status == 0 ]] && [[ $(grep -c "End of test: SUCCESS" "$tmp/all") == $((nr_variants - nr_posted)) ]] && [[ $(grep -c " Fail: 0$" "$tmp/all") == $((nr_variants - nr_posted)) ]]'
check "percpu_seed's posted drop is caught, as expected" \
	grep -Eq "^mnt_writers/percpu_seed-torture: End of test: FAILURE, as expected from the posted bug: " "$tmp/all"
check "a spinlock section only spins" \
	grep -Eq "^primitives/spinlock-torture: .* [1-9][0-9]* spins 0 preemptions 0 sleeps" "$tmp/all"
check "a mutex section also sleeps and is preempted" \
	grep -Eq "^primitives/mutex-torture: .* [1-9][0-9]* preemptions [1-9][0-9]* sleeps" "$tmp/all"
check "shmem_fault's zones took no host pages while its tasks ran" eval \
	'[[ $(grep -c "^shmem_fault/.* Zone grows: 0 Fail: " "$tmp/all") == $(grep -c "^shmem_fault/" "$tmp/list") ]]'
check "every variant passed quiet points" eval \
	'! grep "Operations:" "$tmp/all" | grep "Quiet points: 0 " >/dev/null'

echo "$passed passed, $failed failed"
((failed == 0))
