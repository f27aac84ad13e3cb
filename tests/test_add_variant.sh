#!/bin/bash
# shellcheck disable=SC2016 # the checks' eval strings expand when run
# docs/adding-a-model.md's worked examples, in a copy of the tracked tree.
# A variant added to mnt_writers is one model file and one table row (plus
# its declaration in mnt_writers.h and its name in models/meson.build),
# and the bench, its --list and JSON, the torture and the validation all
# see it; the row without its implementation is refused, one line, exit 2.
# A new model (tests/new_model/: its code, bench, torture and validation)
# is one entry in models/meson.build: its bench, torture and validation
# build, the torture test, the config fuzzer, vm-test and sim-validate
# take it from there.  Builds only what it runs (about a minute on 2 CPUs).
# Usage: test_add_variant.sh (the copy has a build directory of its own)
set -uo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "skip: $root is not a git work tree (the copy is its tracked files)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
check_log=$tmp/err
src=$tmp/src
build=$tmp/build
model=$src/models/mnt_writers
targets=(bench/mnt_writers torture/torture tests/test_mnt_writers
	bench/tally tests/test_tally)
tiny=(--duration=0.05 --warmup=0.01 --perf=0)
status=0

# run CMD...: its status in $status, stdout in $tmp/out, stderr in $tmp/err.
run() {
	status=0
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null || status=$?
}

# The tracked files as the work tree has them (but those deleted there).
mkdir -p "$src"
git -C "$root" ls-files -z |
	while IFS= read -r -d '' f; do
		[[ -e $root/$f || -L $root/$f ]] && printf '%s\0' "$f"
	done | tar -C "$root" --null -T - -cf - | tar -C "$src" -xf -

# The new variant: the model file...
sed -e 's/\bmnt_writers_none\b/mnt_writers_throwaway/' \
    -e '2,/\*\//c\/*\n * A throwaway variant (tests/test_add_variant.sh): none.c renamed.\n */' \
    "$model/none.c" >"$model/throwaway.c"
# ...its declaration...
sed -i '/^extern const struct mnt_writers_ops mnt_writers_none;$/a\
extern const struct mnt_writers_ops mnt_writers_throwaway;' \
	"$model/mnt_writers.h"
# ...its name among the model's sources...
sed -i "s|^\(\s*\)'mnt_writers/none.c',$|&\n\1'mnt_writers/throwaway.c',|" \
	"$src/models/meson.build"
# ...and one row, the last of the model's table.
row='	{ "throwaway", "a copy of none, added by test_add_variant.sh", &mnt_writers_throwaway, .kernel = "2.6.22" },'
awk -v row="$row" '
	/^KSCALE_VARIANT_TABLE\(mnt_writers_variants,/ { table = 1 }
	table && /^\);/ { print row; table = 0 }
	{ print }' "$model/variants.c" >"$tmp/variants.c" &&
	cp -- "$tmp/variants.c" "$model/variants.c"
check "the copy has the file, the row, its declaration and source" eval '
	grep -q "^const struct mnt_writers_ops mnt_writers_throwaway = {" "$model/throwaway.c" &&
	grep -qF "$row" "$model/variants.c" &&
	grep -q "mnt_writers_throwaway;" "$model/mnt_writers.h" &&
	grep -q "mnt_writers/throwaway.c" "$src/models/meson.build"'

# The new model: its files as they would be in the tree...
tar -C "$src/tests/new_model" -cf - models bench torture tests |
	tar -C "$src" -xf -
# ...and its one entry in the list of models.
entry="	'tally' : files(\n		'tally/locked.c',\n		'tally/variants.c',\n	),"
sed -i "/^model_sources = {$/,/^}$/s|^}$|$entry\n}|" "$src/models/meson.build"
check "new model: the copy has its files and its one entry" eval '
	[[ -f $src/models/tally/variants.c && -f $src/bench/tally.c &&
	   -f $src/torture/tally.c && -f $src/tests/test_tally.c ]] &&
	grep -q "^	.tally. : files($" "$src/models/meson.build"'

# meson and ninja say what failed on stdout
check_log=$tmp/out
run meson setup "$build" "$src" --buildtype=release -Dtsan=false -Dasan=false
check "meson setup of the copy" test "$status" -eq 0
run ninja -C "$build" "${targets[@]}"
check "the benches, the torture and the validations build" test "$status" -eq 0
check_log=$tmp/err
if ((failed)); then
	echo "$passed passed, $failed failed"
	exit 1
fi

run "$build/bench/mnt_writers" --list
check "bench --list shows the variant and its doc" \
	grep -q 'throwaway.*a copy of none, added by test_add_variant.sh' "$tmp/out"

# json_names FILE PREFIX: every row of FILE is named PREFIX...
json_names() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
# (not ops_per_sec > 0: a 0.05 s window on a loaded machine has had none)
assert rows and all(b["name"].startswith(sys.argv[2]) for b in rows), rows
PY
}
run "$build/bench/mnt_writers" --variants=throwaway --cpus=1 "${tiny[@]}" \
	--benchmark_out="$tmp/run.json"
check "a run of the variant exits 0" test "$status" -eq 0
check "its JSON names mnt_writers/openbench/throwaway/..." \
	json_names "$tmp/run.json" mnt_writers/openbench/throwaway/

run "$build/torture/torture" --list
check "torture --list shows mnt_writers/throwaway" \
	grep -qx 'mnt_writers/throwaway' "$tmp/out"
run timeout 120 "$build/torture/torture" --seconds=1 mnt_writers/throwaway
check "a torture of the variant passes" eval '((status == 0)) &&
	grep -q "mnt_writers/throwaway-torture: .*SUCCESS" "$tmp/out"'

run timeout 300 "$build/tests/test_mnt_writers"
check "the validation passes over the table with the variant" \
	test "$status" -eq 0

# The validation runs the new row: the variant made to ignore read-only
# (mnt_want_write() without its MNT_READONLY test) fails it.
sed -i '/if (__mnt_is_readonly(mnt))/,/return -EROFS;/d' "$model/throwaway.c"
run ninja -C "$build" tests/test_mnt_writers
check "the validation rebuilds with the broken variant" test "$status" -eq 0
run timeout 300 "$build/tests/test_mnt_writers"
check "the validation fails on the broken variant" eval '((status != 0)) &&
	grep -q "test_read_only_mount_refuses_writers" "$tmp/out" "$tmp/err"'

# The new model, from its one entry: its bench...
run "$build/bench/tally" --list
check "new model: bench --list shows the model and its variant" eval '
	grep -q "^model tally: " "$tmp/out" &&
	grep -q "^  variant  locked " "$tmp/out"'
run "$build/bench/tally" --cpus=1 "${tiny[@]}" --benchmark_out="$tmp/tally.json"
check "new model: a run of its bench exits 0" test "$status" -eq 0
check "new model: its JSON names tally/add/locked/..." \
	json_names "$tmp/tally.json" tally/add/locked/
# ...its torture...
run "$build/torture/torture" --list
check "new model: torture --list shows tally/locked" \
	grep -qx 'tally/locked' "$tmp/out"
run timeout 120 "$build/torture/torture" --seconds=1 tally
check "new model: a torture of the model passes" eval '((status == 0)) &&
	grep -q "tally/locked-torture: .*SUCCESS" "$tmp/out"'
# ...its validation, and what iterates the models.
run timeout 300 "$build/tests/test_tally"
check "new model: its validation passes" test "$status" -eq 0
# py CODE: CODE's asserts, sys.argv[1:] the copy and its build, importing
# from the copy's scripts/ and tests/fuzz/
py() {
	PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$src/scripts:$src/tests/fuzz \
		/usr/bin/python3 -c "import json, os, sys
$1" "$src" "$build" </dev/null >"$tmp/out" 2>"$tmp/err"
}
check "new model: meson tests its validation; the torture test lists it" py '
tests = {t["name"]: t["cmd"] for t in json.load(open(os.path.join(
    sys.argv[2], "meson-info", "intro-tests.json")))}
assert "tally" in tests and "tally" in tests["torture"], tests.get("torture")'
check "new model: the configs' tests and fuzzer have its stand-in binary" py '
import fuzz_config
from kscale_analysis.models import MODELS
assert MODELS[-1] == "tally", MODELS
fuzz_config.setup()
stand_in = os.path.join(fuzz_config.work.path, "build", "bench", "tally")
assert os.access(stand_in, os.X_OK)'
check "new model: vm-test benches it in the guest" py '
from kscale_analysis import vmtest
assert "tally" in vmtest.BENCHES and vmtest.selected("bench-tally")'
check "new model: sim-validate runs its model variants" py '
from kscale_analysis import simvalidate
runs = simvalidate.plan(sys.argv[2], "tally")
assert runs == [("tally", "tally", ["--variants=locked"])], runs'

# The row without its implementation (a typo once ran the real kernel
# under a model variant's name): both binaries refuse it, one line, 2.
sed -i 's/, &mnt_writers_throwaway,/,/' "$model/variants.c"
run ninja -C "$build" bench/mnt_writers torture/torture tests/test_mnt_writers
check "the row without .ops builds" test "$status" -eq 0
refused() {
	((status == 2)) && (($(wc -l <"$tmp/err") == 1)) &&
		grep -q "variant 'throwaway': a model row without an implementation" \
			"$tmp/err" && ! [[ -s $tmp/out ]]
}
run "$build/bench/mnt_writers" --variants=throwaway --cpus=1 "${tiny[@]}" \
	--benchmark_out="$tmp/refused.json"
check "the bench refuses the row: exit 2, one line" refused
check "... and writes no results" test ! -e "$tmp/refused.json"
status=0
"$build/torture/torture" --seconds=1 mnt_writers/throwaway \
	>"$tmp/err" 2>&1 </dev/null || status=$?
: >"$tmp/out"
check "the torture refuses the row: exit 2, one line" refused
run timeout 300 "$build/tests/test_mnt_writers"
check "the validation fails naming the row, not crashing" eval '((status != 0 && status < 128)) &&
	grep -q "variant .throwaway.: a model row without an implementation" "$tmp/out" "$tmp/err"'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
