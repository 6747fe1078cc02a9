# Shared by the shell tests. Source it; it sets -eu.
set -eu

# A test that cannot run exits 77 (skip), unless LOCKTOP_REQUIRE_BPF=1,
# where not being able to run is itself a failure.
skip() {
	if [ "${LOCKTOP_REQUIRE_BPF:-0}" = 1 ]; then
		echo "FAIL: cannot run: $* (LOCKTOP_REQUIRE_BPF=1)" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

require_bpf() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
	[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF"
	command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ] ||
		skip "bpftool is not installed"
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# within NAME OURS TRUTH PERCENT [WHOSE]: ours is TRUTH within PERCENT,
# or fail; WHOSE names the truth (lockbench).
within() {
	awk -v n="$1" -v a="$2" -v b="$3" -v p="$4" -v t="${5:-lockbench}" 'BEGIN {
		d = (a > b ? a - b : b - a) / (b > 0 ? b : 1) * 100
		printf "%s: ours %.0f, %s %.0f, off by %.3f%%\n", n, a, t, b, d
		exit !(d <= p) }' || fail "$1 is off by more than $4%"
}

# start_truth SCRIPT ARGS...: an independent bpftrace count of the same
# events, in the background (its pid in $bt, its output in
# $tmpdir/bt.out), once it says it is ready (its BEGIN prints "ready").
start_truth() {
	local _
	bpftrace "$@" >"$tmpdir/bt.out" 2>&1 &
	bt=$!
	for _ in $(seq 600); do
		grep -q '^ready' "$tmpdir/bt.out" && return 0
		kill -0 "$bt" 2>/dev/null || fail "bpftrace ended: $(cat "$tmpdir/bt.out")"
		sleep 0.1
	done
	fail "bpftrace did not attach"
}

# stop_pid PID [SECONDS]: SIGINT, and SIGKILL after SECONDS (20); its
# exit status.
stop_pid() {
	local _
	kill -INT "$1"
	for _ in $(seq $((${2:-20} * 5))); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1"
}

# stop_truth: ends the bpftrace count of start_truth, which prints its
# maps as it ends. A loaded machine may take it long to detach and
# print; a count cut short by SIGKILL is no count, and says so.
stop_truth() {
	local rc=0 t0=$SECONDS
	stop_pid "$bt" 90 || rc=$?
	[ "$rc" -ne 137 ] || fail "bpftrace did not end within 90 s of SIGINT"
	echo "bpftrace ended $((SECONDS - t0)) s after SIGINT"
}

# A jq filter turning a JSON "0x..." address into a number.
jq_hex='ltrimstr("0x") | explode | reduce .[] as $c
	(0; . * 16 + if $c >= 97 then $c - 87 else $c - 48 end)'

. "$(dirname "${BASH_SOURCE[0]}")/attach.sh"

# Names of the locktop programs currently loaded in the kernel.
our_progs() {
	/usr/sbin/bpftool prog list 2>/dev/null |
		grep -oE 'name lt_[a-z_]+' | sort -u || true
}

# After locktop exits, none of its programs is left: the kernel frees
# one an RCU grace period after its last descriptor closes, so a few
# seconds are given.
gone() {
	local _ left
	for _ in $(seq 50); do
		left=$(our_progs)
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	fail "programs left after exit: $left"
}

# Waits until process $1 has its futex probe attached (the kernel lists
# the tracepoint's program under that process), ten seconds at most.
wait_attached() {
	local i
	for i in $(seq 100); do
		/usr/sbin/bpftool perf list 2>/dev/null |
			grep -qE "^pid $1 .*tracepoint +sys_enter_futex$" && return 0
		sleep 0.1
	done
	return 1
}

# What a test started in the background ends with it, stopped or not, so
# that nothing it left runs on into the next test.
end_jobs() {
	local p left
	left=$(jobs -p)
	[ -n "$left" ] || return 0
	# One may have ended meanwhile: a kill that finds none is no error,
	# under set -e either.
	for p in $left; do
		kill -TERM "$p" 2>/dev/null || true
		kill -CONT "$p" 2>/dev/null || true
	done
	sleep 0.2
	for p in $left; do
		kill -KILL "$p" 2>/dev/null || true
	done
	wait 2>/dev/null
	return 0
}

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/locktop-test.XXXXXX")
trap 'end_jobs; rm -rf "$tmpdir"' EXIT
