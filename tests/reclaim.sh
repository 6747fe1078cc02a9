#!/usr/bin/env bash
# A long run keeps meeting new locks: here three sets of byte-range
# locks, more in all than the kernel's map holds. Once it is a quarter full,
# the slots of locks idle for the --retire time go back, so none of the
# later locks is dropped; every lock keeps its row, and a lock met again
# after its slot went back adds to its figures, from the next slot it
# takes, exactly what happened; so does a hold that outlived its slot.
. "$(dirname "$0")/lib.sh"
locktop=$1 ranges=$2
require_bpf

n=7000
"$locktop" --batch --json --delay 0.3 --retire 1 --limit 0 \
	--output "$tmpdir/lt.json" -- bash -c "
	flock \"$tmpdir/held\" sleep 10 &
	sleep 0.5
	flock -n \"$tmpdir/held\" true && exit 1
	for first in 0 $n $((2 * n)) 0; do
		\"$ranges\" \"$tmpdir/file\" \$first $n >/dev/null || exit 1
		sleep 2.5
	done
	wait" || fail "locktop or ranges failed"
final=$(tail -n 1 "$tmpdir/lt.json")
drops=$(jq .drops <<<"$final")
mine='[.locks[] | select(.kind == "fcntl" and (.name | test("(^|/)file\\+0x[0-9a-f]+$")))]'
rows=$(jq "$mine | length" <<<"$final")
twice=$(jq "$mine | map(select(.trylock_failures == 2)) | length" <<<"$final")
once=$(jq "$mine | map(select(.trylock_failures == 1)) | length" <<<"$final")
most=$(jq -s 'map(.lock_entries) | max' "$tmpdir/lt.json")
echo "rows $rows: $once refused once, $twice twice; drops $drops; kernel entries at most $most"
[ "$drops" -eq 0 ] || fail "$drops events dropped"
[ "$rows" -eq $((3 * n)) ] || fail "$rows rows, not $((3 * n))"
[ "$twice" -eq "$n" ] || fail "$twice locks met twice show 2 refusals, not $n"
[ "$once" -eq $((2 * n)) ] || fail "$once locks met once show 1 refusal, not $((2 * n))"
# A hold that outlived its lock's slot is timed into the next one.
held=$(jq -c '[.locks[] | select(.kind == "flock" and (.name | endswith("/held")))][0] |
	{trylock_failures, hold_ns}' <<<"$final")
echo "the lock held through it all: $held"
jq -e '.trylock_failures == 1 and .hold_ns >= 9000000000' <<<"$held" >/dev/null ||
	fail "the long hold was not counted where it belongs"
echo PASS
