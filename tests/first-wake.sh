#!/usr/bin/env bash
# A plain mutex's holder is the thread that wakes its waiters. When a
# mutex is fought over once, its one wake comes while its first wait is
# still in flight: that wake too finds the lock and names the holder.
. "$(dirname "$0")/lib.sh"
locktop=$1 contend=$2
require_bpf

# Two threads, one turn each, a 20 ms hold: one of them waits, once.
"$locktop" --batch --json --delay 0.3 --output "$tmpdir/lt.json" -- \
	"$contend" -t 2 -n 1 -h 20000 >"$tmpdir/truth.json" ||
	fail "locktop or contend failed (exit $?)"
addr=$(jq -r .address "$tmpdir/truth.json")
pid=$(jq -r .pid "$tmpdir/truth.json")
[ "$(jq -r .waits "$tmpdir/truth.json")" = 1 ] ||
	fail "contend waited $(jq -r .waits "$tmpdir/truth.json") times, not once"
row=$(jq -c --arg a "$addr" --argjson p "$pid" \
	'[.locks[] | select(.address == $a and (.pids | index($p)))][0]' \
	<(tail -n 1 "$tmpdir/lt.json"))
echo "the mutex: $(jq -c '{waits, holder, holders}' <<<"$row")"
[ "$row" != null ] || fail "no row for the mutex"
jq -e '.waits >= 1' <<<"$row" >/dev/null || fail "its wait was not seen"
jq -e --argjson p "$pid" '.holder.pid == $p' <<<"$row" >/dev/null ||
	fail "the waker is not named as its holder"
# Two wakes name it: the unlock that ends the wait, and the waiter's own
# unlock after it (glibc wakes whenever the word says someone waited).
jq -e --argjson p "$pid" '.holders | map(select(.pid == $p and .count == 2)) |
	length == 1' <<<"$row" >/dev/null ||
	fail "the waker is not among its holders with both wakes"
echo PASS
