#!/usr/bin/env bash
# However locktop ends, no program of its stays in the kernel.
. "$(dirname "$0")/lib.sh"
locktop=$1
require_bpf

wait_for_progs() {
	local i
	for i in $(seq 100); do
		[ -n "$(our_progs)" ] && return 0
		sleep 0.1
	done
	fail "locktop never attached"
}

# The kernel frees a program after an RCU grace period once its last
# descriptor closes, so give it a moment before calling it left behind.
check_gone() {
	local i left
	for i in $(seq 50); do
		left=$(our_progs)
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || fail "$1: left behind: $left"
	echo "ok: $1"
}

# A locktop that just ended before this test (another test's) may still
# be in its grace period: it has as long to go as ours will have.
check_gone "before the test"

# Normal end after two intervals.
"$locktop" -b -n 2 -d 0.2 -o "$tmpdir/n.txt"
grep -q '^locktop summary' "$tmpdir/n.txt" || fail "no summary"
check_gone "normal exit"

# SIGINT and SIGTERM, each with a summary and status 0.
for sig in INT TERM; do
	"$locktop" -b -d 0.2 -o "$tmpdir/$sig.txt" &
	pid=$!
	wait_for_progs
	kill -s "$sig" "$pid"
	st=0
	wait "$pid" || st=$?
	[ "$st" = 0 ] || fail "SIG$sig: exit status $st"
	grep -q '^locktop summary' "$tmpdir/$sig.txt" || fail "SIG$sig: no summary"
	check_gone "SIG$sig"
done

# A traced command gets the signal too, and its status is ours.
"$locktop" -b -d 0.2 -o "$tmpdir/cmd.txt" -- sleep 60 &
pid=$!
wait_for_progs
kill -s TERM "$pid"
st=0
wait "$pid" || st=$?
[ "$st" = 143 ] || fail "command mode SIGTERM: exit status $st, want 143"
pgrep -x sleep -P "$pid" >/dev/null && fail "the command outlived locktop"
check_gone "SIGTERM with a command"
echo PASS
