#!/usr/bin/env bash
# Two processes that each wait for the other's lock form a cycle in the
# wait-for graph, and locktop names both. Usage: deadlocks.sh LOCKTOP
# DEADLOCK KIND, KIND one of ofd, mutex, fcntl. Classic POSIX (fcntl)
# locks never deadlock: the kernel refuses the cycle with EDEADLK, and
# that refusal is counted.
. "$(dirname "$0")/lib.sh"
locktop=$1 deadlock=$2 kind=$3
require_bpf

"$locktop" --batch --json --delay 0.25 --output "$tmpdir/lt.json" -- \
	"$deadlock" "$kind" "$tmpdir/dl.dat" 2 >"$tmpdir/truth.json" ||
	fail "deadlock failed"
a=$(jq .a "$tmpdir/truth.json")
b=$(jq .b "$tmpdir/truth.json")

if [ "$kind" = fcntl ]; then
	[ "$(jq .edeadlk "$tmpdir/truth.json")" = 1 ] || fail "no EDEADLK"
	n=$(tail -n 1 "$tmpdir/lt.json" | jq '[.locks[] | .deadlocks // 0] | add // 0')
	[ "$n" = 1 ] || fail "the kernel's EDEADLK was not counted ($n)"
	echo "ok: EDEADLK counted"
	echo PASS
	exit 0
fi

cycle=$(jq -c --argjson a "$a" --argjson b "$b" 'select(.final != true) |
	.deadlocks[]? | [.members[].pid] | sort | select(. == ([$a, $b] | sort))' \
	"$tmpdir/lt.json" | head -n 1)
[ -n "$cycle" ] || fail "no cycle of $a and $b reported: $(grep -o '"deadlocks":[^]]*]' "$tmpdir/lt.json" | sort -u)"
echo "ok: cycle $cycle"

# Without a cycle there is no report: holder's waits are one-sided.
echo PASS
