#!/bin/bash
# shellcheck disable=SC2016 # the checks' eval strings expand when run
# docs/adding-a-model.md's worked example: a variant added to mnt_writers
# in a copy of the tracked tree is one model file and one table row (plus
# its declaration in mnt_writers.h and its name in models/meson.build),
# and the bench, its --list and JSON, the torture and the validation all
# see it; the row without its implementation is refused, one line, exit 2.
# Builds only those three targets in the copy (about a minute on 2 CPUs).
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
targets=(bench/mnt_writers torture/torture tests/test_mnt_writers)
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
row='	{ "throwaway", "a copy of none, added by test_add_variant.sh", &mnt_writers_throwaway },'
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

# meson and ninja say what failed on stdout
check_log=$tmp/out
run meson setup "$build" "$src" --buildtype=release -Dtsan=false -Dasan=false
check "meson setup of the copy" test "$status" -eq 0
run ninja -C "$build" "${targets[@]}"
check "the bench, the torture and the validation build" test "$status" -eq 0
check_log=$tmp/err
if ((failed)); then
	echo "$passed passed, $failed failed"
	exit 1
fi

run "$build/bench/mnt_writers" --list
check "bench --list shows the variant and its doc" \
	grep -q 'throwaway.*a copy of none, added by test_add_variant.sh' "$tmp/out"

json_names() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b["run_type"] == "iteration"]
# (not ops_per_sec > 0: a 0.05 s window on a loaded machine has had none)
assert rows and all(b["name"].startswith("mnt_writers/openbench/throwaway/")
                    for b in rows), rows
PY
}
run "$build/bench/mnt_writers" --variants=throwaway --cpus=1 "${tiny[@]}" \
	--benchmark_out="$tmp/run.json"
check "a run of the variant exits 0" test "$status" -eq 0
check "its JSON names mnt_writers/openbench/throwaway/..." \
	json_names "$tmp/run.json"

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

# The row without its implementation (a typo once ran the real kernel
# under a model variant's name): both binaries refuse it, one line, 2.
sed -i 's/, &mnt_writers_throwaway },$/ },/' "$model/variants.c"
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
