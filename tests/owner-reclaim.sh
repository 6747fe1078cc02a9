#!/usr/bin/env bash
# Held ranges are kept per (owner, file) pair in slots, and a pair that
# holds nothing more gives its slot back: 20,000 opens of one file, all
# kept open at once by 20 processes, each an OFD lock owner that read-locks
# all of it and unlocks, are more pairs than the map holds (16,384), yet
# every grant is counted and every hold timed, with no drop.
. "$(dirname "$0")/lib.sh"
locktop=$1 opencycle=$2
require_bpf

n=20000
"$locktop" --batch --json --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$opencycle" "$tmpdir/cycled" "$n" >"$tmpdir/truth.json" ||
	fail "locktop or opencycle failed"
final=$(tail -n 1 "$tmpdir/lt.json")
row=$(jq -c '[.locks[] | select(.kind != "kernel" and .kind != "spin") |
	select(.name | contains("cycled"))] |
	map({name, kind, acquires, hold_ns, trylock_failures})' <<<"$final")
echo "$row"
[ "$(jq length <<<"$row")" = 1 ] || fail "not one lock: $row"
[ "$(jq '.[0].kind' <<<"$row")" = '"ofd"' ] || fail "not an OFD lock: $row"
got=$(jq '.[0].acquires' <<<"$row")
[ "$got" = $((n + 1)) ] || fail "$got acquisitions counted, want $((n + 1))"
[ "$(jq '.[0].trylock_failures' <<<"$row")" = 1 ] || fail "the refused try: $row"
# Each hold ends at its unlock: timed.
hold=$(jq '.[0].hold_ns' <<<"$row")
[ "$hold" -gt 0 ] || fail "no hold time"
drops=$(jq .drops <<<"$final")
[ "$drops" = 0 ] || fail "$drops drops"
echo PASS
