#!/usr/bin/env bash
# A shared word is one lock while its process changes its maps: futex
# waits on one word of a shared file mapping, in two processes whose
# other threads map and unmap memory without pause, so that the mmap
# lock is often held when a wait begins and the probe cannot read where
# the word lives. Every wait is counted, under the file's name; the
# probe asks again at the wait's end, the collector places the word for
# the waits after, and so the file's row holds all but the first few.
# Usage: mapchurn.sh LOCKTOP MAPCHURN
. "$(dirname "$0")/lib.sh"
locktop=$1 churn=$2
require_bpf

"$locktop" --batch --json --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$churn" "$tmpdir/churn.dat" 3 >"$tmpdir/truth.json" ||
	fail "mapchurn failed"
want=$(jq .waits "$tmpdir/truth.json")
final=$(tail -n 1 "$tmpdir/lt.json")
jq -c '[.locks[] | select(.kind | startswith("futex")) |
	{name, key, kind, waits, pids}]' <<<"$final"
rows=$(jq -c --arg f "$tmpdir/churn.dat+0x100" \
	'[.locks[] | select(.name == $f) | {waits, pids}] |
	sort_by(-.waits)' <<<"$final")
sum=$(jq 'map(.waits) | add // 0' <<<"$rows")
top=$(jq '.[0].waits // 0' <<<"$rows")
echo "the program's waits $want; the file's rows: $rows"
[ "$sum" = "$want" ] || fail "waits under the file's name: $sum, the program $want"
[ "$(jq '.[0].pids | length' <<<"$rows")" = 2 ] ||
	fail "the file's row is not both processes': $rows"
# All but the waits before the collector's first read (0.5 s of 3 s).
[ $((top * 100)) -ge $((want * 99)) ] ||
	fail "the file's row holds $top of $want waits"
echo "ok: $sum waits of $want under the file's name, $top on its row"
echo PASS
