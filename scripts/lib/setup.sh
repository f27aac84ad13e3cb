# shellcheck shell=bash
# `kscale setup`: install missing Debian 12 packages, configure and build.
# Sourced by scripts/kscale, which sets $root and $build and defines die.

# Everything kscale needs on Debian 12: build, bench, analysis and tests.
KSCALE_PACKAGES=(
	meson ninja-build pkg-config gcc g++ git
	libbenchmark-dev libbenchmark-tools libnuma-dev numactl
	gnuplot-nox python3 python3-scipy
	libcmocka-dev
	# fuzzing (tests/fuzz): libFuzzer is clang's, hypothesis drives the Python
	clang libclang-rt-14-dev python3-hypothesis
	fio xfsprogs linux-perf
	# vm-test's guest (docs/vm-test.md); its kernel is apt-get downloaded
	qemu-system-x86 busybox-static
	# lkp-tests (tests/test_lkp.sh, docs/lkp.md)
	ruby ruby-activesupport ruby-tty-command ruby-git ruby-term-ansicolor
	ruby-colorize
)

# The KSCALE_PACKAGES that dpkg does not report as installed.
missing_packages() {
	local pkg

	for pkg in "${KSCALE_PACKAGES[@]}"; do
		if [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) != "install ok installed" ]]; then
			printf '%s\n' "$pkg"
		fi
	done
}

# apt-get the missing packages, as root or through sudo.
install_packages() {
	local missing sudo=()

	mapfile -t missing < <(missing_packages)
	if ((${#missing[@]} == 0)); then
		echo "kscale: dependencies present" >&2
		return
	fi
	if ((EUID != 0)); then
		if ! command -v sudo >/dev/null; then
			die "missing ${missing[*]}; as root run: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}" 1
		fi
		sudo=(sudo)
	fi
	echo "kscale: installing ${missing[*]}" >&2
	"${sudo[@]}" apt-get update >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends "${missing[@]}" >&2
}

# Configure $build on first use, then bring it up to date (quietly when
# there is nothing to do).
build_all() {
	local out status=0

	if [[ ! -f $build/build.ninja ]]; then
		meson setup "$build" "$root" --buildtype=release >&2
	fi
	out=$(ninja -C "$build" --quiet 2>&1) || status=$?
	if [[ -n $out && $out != "ninja: no work to do." ]]; then
		printf '%s\n' "$out" >&2
	fi
	((status == 0)) || die "build failed in $(rel "$build")" "$status"
}

setup() {
	install_packages
	build_all
}
