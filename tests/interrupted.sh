#!/usr/bin/env bash
# File lock waits that a signal ends: each is a wait, counted as
# interrupted, with its time as the waiter timed it; the wait after them
# ends in a grant and credits the holder. Usage: interrupted.sh LOCKTOP
# INTERRUPT KIND, KIND one of fcntl, ofd, flock.
. "$(dirname "$0")/lib.sh"
locktop=$1 interrupt=$2 kind=$3
require_bpf
n=5

"$locktop" --batch --json --delay 0.25 --output "$tmpdir/lt.json" -- \
	"$interrupt" "$kind" "$tmpdir/int.dat" "$n" 40 >"$tmpdir/truth.json" ||
	fail "interrupt failed"
truth=$(cat "$tmpdir/truth.json")
final=$(tail -n 1 "$tmpdir/lt.json")
rows=$(jq -c --arg k "$kind" '[.locks[] | select(.kind == $k and
	(.name | test("int\\.dat")))]' <<<"$final")
[ "$(jq length <<<"$rows")" = 1 ] || fail "not one $kind row on the file: $rows"
row=$(jq -c '.[0]' <<<"$rows")
echo "row: $(jq -c '{name, waits, interrupted, wait_ns, holders: [.holders[].pid]}' <<<"$row")"
[ "$(jq .interrupted <<<"$row")" = "$n" ] ||
	fail "interrupted waits: $(jq .interrupted <<<"$row"), the waiter's $n"
[ "$(jq .waits <<<"$row")" = $((n + 1)) ] ||
	fail "waits: $(jq .waits <<<"$row"), the waiter's $((n + 1))"
within "wait time" "$(jq .wait_ns <<<"$row")" \
	"$(jq '.interrupted_ns + .granted_ns' <<<"$truth")" 2 "the waiter's clock"
jq -e --argjson h "$(jq .holder <<<"$truth")" '.holders[0].pid == $h' \
	<<<"$row" >/dev/null || fail "the holder is not $(jq .holder <<<"$truth")"
# Nothing is left waiting once the waits have ended.
[ "$(jq .waiters_now <<<"$row")" = 0 ] ||
	fail "still waiting at the end: $(jq .waiters_now <<<"$row")"
echo PASS
