#!/bin/bash
# Every libFuzzer target of BUILD_DIR (BUILD/tests/fuzz) run once on each
# input of its seed corpus (tests/fuzz/corpus/TARGET/) and of the crashes
# found so far (tests/fuzz/regress/TARGET/): a line per target, non-zero
# exit if any input fails (the target's output is shown then).
set -euo pipefail

build=${1:?usage: regress.sh BUILD/tests/fuzz}
src=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
failed=0
ran=0

for bin in "$build"/fuzz_*; do
	[[ -f $bin && -x $bin && $bin != *.d ]] || continue
	name=${bin##*/fuzz_}
	inputs=()
	for f in "$src/corpus/$name"/* "$src/regress/$name"/*; do
		[[ -f $f ]] && inputs+=("$f")
	done
	if ((${#inputs[@]} == 0)); then
		echo "regress $name: FAIL: no input in corpus/$name, regress/$name"
		failed=1
		continue
	fi
	ran=$((ran + 1))
	if TMPDIR=$tmp "$bin" -timeout=10 "${inputs[@]}" >"$tmp/log" 2>&1; then
		echo "regress $name: ${#inputs[@]} inputs ok"
	else
		echo "regress $name: FAIL"
		cat -- "$tmp/log"
		failed=1
	fi
done
if ((ran == 0)); then
	echo "regress: no fuzz_* target in $build"
	exit 1
fi
exit "$failed"
