#!/bin/bash
# `scripts/kscale lkp-install LKP_SRC`: make kscale an lkp-tests program in
# the lkp-tests tree LKP_SRC (a copy of it: never the shared, read-only
# one).  Idempotent: run it again after changing lkp/.  Usage:
#   install.sh LKP_SRC
set -euo pipefail

lkp=$(cd -- "$(dirname -- "$(realpath -- "${BASH_SOURCE[0]}")")" && pwd)
root=$(dirname -- "$lkp")
shared=$root/../shared/lkp-tests	# the reference copy (README)

die() {
	printf 'kscale: lkp-install: %s\n' "$1" >&2
	exit "${2:-2}"
}

say() {
	printf 'kscale: lkp-install: %s\n' "$1"
}

# Insert LINE into the sorted FILE (C collation) unless it is there.
insert_sorted() {
	local file=$1 line=$2

	grep -qxF -- "$line" "$file" && return 1
	LC_ALL=C awk -v line="$line" '
		!done && $0 > line { print line; done = 1 }
		{ print }
		END { if (!done) print line }' "$file" >"$file.kscale.tmp"
	cat -- "$file.kscale.tmp" >"$file"
	rm -f -- "$file.kscale.tmp"
}

# Append the lines of FROM that FILE lacks.
append_missing() {
	local file=$1 from=$2 line added=0

	while IFS= read -r line; do
		if ! grep -qxF -- "$line" "$file"; then
			printf '%s\n' "$line" >>"$file"
			added=$((added + 1))
		fi
	done <"$from"
	((added))
}

# An export of lkp-tests without symlinks (the shared copy) holds each as
# a file of its target's name, no newline: filters/need_kconfig_hw.rb,
# programs/*/monitor, pkg/ links...  `lkp run` needs them back.
restore_symlinks() {
	local n

	n=$(python3 - "$dest" <<'PY'
import os, sys

top, n = sys.argv[1], 0
for dirpath, dirnames, filenames in os.walk(top):
    dirnames[:] = [d for d in dirnames if d != ".git"]
    for name in filenames:
        path = os.path.join(dirpath, name)
        if os.path.islink(path) or os.path.getsize(path) >= 256:
            continue
        with open(path, "rb") as f:
            data = f.read()
        try:
            target = data.decode()
        except UnicodeDecodeError:
            continue
        if not target or target.endswith("\n") or any(c.isspace() for c in target):
            continue
        if os.path.exists(os.path.join(dirpath, target)):
            os.remove(path)
            os.symlink(target, path)
            n += 1
print(n)
PY
)
	((n == 0)) || say "restored $n symlinks the tree's export had flattened into files"
}

(($# == 1)) || die "expected: lkp-install LKP_SRC (see kscale lkp-install --help)"
[[ -d $1 ]] || die "$1: no such directory"
dest=$(realpath -- "$1")
if [[ -d $shared && $dest == "$(realpath -- "$shared")" ]]; then
	die "$1 is the shared lkp-tests, which stays read-only: copy it first (cp -a $1 /tmp/lkp-tests)"
fi
[[ -x $dest/bin/lkp && -f $dest/lib/nresult_root.rb && -f $dest/etc/linux-perf-test-cases ]] ||
	die "$1: not an lkp-tests tree (no bin/lkp, lib/nresult_root.rb, etc/linux-perf-test-cases)"
[[ -w $dest && -w $dest/programs && -w $dest/jobs && -w $dest/etc ]] ||
	die "$1: not writable (chmod -R u+w $1)"

# the program: run, parse, meta.yaml, pkg/ (its source: this tree)
rm -rf -- "$dest/programs/kscale"
cp -R -- "$lkp/programs/kscale" "$dest/programs/kscale"
sed -i "s|^: \"\${KSCALE_GIT:=.*}\"\$|: \"\${KSCALE_GIT:=$root}\"|" \
	"$dest/programs/kscale/pkg/PKGBUILD"
say "programs/kscale: run, parse, meta.yaml, pkg/PKGBUILD (KSCALE_GIT=$root)"

cp -- "$lkp"/jobs/kscale-*.yaml "$dest/jobs/"
say "jobs: $(cd -- "$lkp/jobs" && echo kscale-*.yaml)"

# lkp run files a result root under its testcase's table
# (lib/nresult_root.rb, testcase_to_table: "Unknow testcase" otherwise);
# the tables' testcases are etc/*-test-cases (lib/stats.rb).
if insert_sorted "$dest/etc/linux-perf-test-cases" kscale; then
	say "etc/linux-perf-test-cases: kscale added (lkp run's result tables)"
fi
# the KPIs and their direction (1: higher is better) for compare and bisect
for f in index-perf-all.yaml index-perf.yaml; do
	if [[ -f $dest/etc/$f ]] && append_missing "$dest/etc/$f" "$lkp/etc/index-perf.yaml"; then
		say "etc/$f: kscale's KPIs added"
	fi
done

# what `lkp install` would do and cannot on Debian 12 (i386 packages)
if [[ ! -x $dest/bin/event/wakeup && -f $dest/bin/event/Makefile ]]; then
	if make -s -C "$dest/bin/event" wakeup >/dev/null 2>&1; then
		say "bin/event/wakeup built (make -C bin/event, as lkp install does)"
	else
		say "warning: cannot build bin/event/wakeup (gcc, libc6-dev); lkp's monitors will complain"
	fi
fi
restore_symlinks
[[ -f $dest/hosts/$(hostname) ]] ||
	say "note: no hosts/$(hostname): lkp split-job needs one (see docs/lkp.md)"
