# shellcheck shell=bash
# `kscale setup`: install missing Debian 12 packages, configure and build.
# Sourced by scripts/kscale, which sets $root and $build and defines die.

# What each command needs on Debian 12, by what it runs.  `run` (and list,
# torture, sim-validate, the analysis): the build, the benches, their host
# rows (fio, an XFS on a loop device, perf) and the analysis.
KSCALE_RUN_PACKAGES=(
	meson ninja-build pkg-config gcc g++ git
	libbenchmark-dev libnuma-dev numactl
	gnuplot-nox python3 python3-scipy
	fio xfsprogs linux-perf
)
# vm-test's guest (docs/vm-test.md); its kernel is apt-get downloaded
KSCALE_GUEST_PACKAGES=(qemu-system-x86 busybox-static)
# lkp-tests (lkp-install, tests/test_lkp.sh, docs/lkp.md)
KSCALE_LKP_PACKAGES=(
	ruby ruby-activesupport ruby-tty-command ruby-git ruby-term-ansicolor
	ruby-colorize
)
# `test`: the suite (cmocka; fuzzing: libFuzzer is clang's, hypothesis
# drives the Python), which runs the guest and lkp-tests too.
KSCALE_TEST_PACKAGES=(
	libcmocka-dev clang libclang-rt-14-dev python3-hypothesis
	"${KSCALE_GUEST_PACKAGES[@]}" "${KSCALE_LKP_PACKAGES[@]}"
)

# The packages of the arguments that dpkg does not report as installed.
missing_packages() {
	local pkg

	for pkg in "$@"; do
		if [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) != "install ok installed" ]]; then
			printf '%s\n' "$pkg"
		fi
	done
}

# apt-get the missing packages of the arguments, as root or through sudo;
# nothing, and nothing said, when none is missing.
install_packages() {
	local missing sudo=()

	mapfile -t missing < <(missing_packages "$@")
	((${#missing[@]})) || return 0	# quiet: nothing to do
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

# Configure $build on first use, the test suite's targets only for
# `test` (tests=true: cmocka), then bring it up to date (quietly when there
# is nothing to do).
build_all() {
	local tests=$1 out status=0

	if [[ ! -f $build/build.ninja ]]; then
		meson setup "$build" "$root" --buildtype=release \
			-Dtests="$tests" >&2
	elif [[ $tests == true ]] &&
	     [[ $(meson configure "$build" | awk '$1 == "tests" { print $2 }') != true ]]; then
		meson configure "$build" -Dtests=true >&2
	fi
	out=$(ninja -C "$build" --quiet 2>&1) || status=$?
	if [[ -n $out && $out != "ninja: no work to do." ]]; then
		printf '%s\n' "$out" >&2
	fi
	((status == 0)) || die "build failed in $(rel "$build")" "$status"
}

# setup FOR: the packages FOR needs (run, test, guest, lkp or all), and the
# build (not for lkp: lkp-tests' own package builds it).
setup() {
	case $1 in
	run) install_packages "${KSCALE_RUN_PACKAGES[@]}" ;;
	guest) install_packages "${KSCALE_RUN_PACKAGES[@]}" \
			"${KSCALE_GUEST_PACKAGES[@]}" ;;
	lkp) install_packages "${KSCALE_LKP_PACKAGES[@]}"; return ;;
	test | all) install_packages "${KSCALE_RUN_PACKAGES[@]}" \
			"${KSCALE_TEST_PACKAGES[@]}" ;;
	esac
	build_all "$([[ $1 == test || $1 == all ]] && echo true || echo false)"
}
