# shellcheck shell=bash
# check WHAT CMD...: run CMD, count it in $passed or $failed and say so;
# a failure also shows $check_log, when set (the failed command's stderr).
passed=0
failed=0
check_log=''

check() {
	local what=$1

	shift
	if "$@"; then
		passed=$((passed + 1))
		echo "ok: $what"
	else
		failed=$((failed + 1))
		echo "FAIL: $what"
		if [[ -n $check_log ]]; then
			sed 's/^/  /' "$check_log"
		fi
	fi
}
