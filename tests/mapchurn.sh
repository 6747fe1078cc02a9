#!/usr/bin/env bash
# A shared word is one lock while its process changes its maps: futex
# waits on one word of a shared file mapping, in two processes whose
# other threads map and unmap memory without pause, so that the mmap
# lock is often held when a wait begins and the probe cannot read where
# the word lives. Every wait is counted, under the file's name; the
# probe asks again at the wait's end, the collector places the word for
# the waits after, and the waits counted per process before that are one
# lock site with the file's: one row holds them all.
#
# With "private": each of the two processes waits on its own word in its
# data, own_word, its churners running first, for a third of a second,
# while locktop reads only once they have ended. The probe reads where a
# new lock lives at its first wait, and where the maps are changing then
# reads it again at the waits after; so every row of the program's is
# named in its image (mapchurn+0xOFFSET), never by a bare address that
# /proc, read after the processes ended, could not name.
# Usage: mapchurn.sh LOCKTOP MAPCHURN [private]
. "$(dirname "$0")/lib.sh"
locktop=$1 churn=$2 mode=${3:-}
require_bpf

if [ "$mode" = private ]; then
	"$locktop" --batch --json --delay 5 --no-kernel-locks --spin-hz 0 \
		--output "$tmpdir/lt.json" -- \
		"$churn" "$tmpdir/churn.dat" 0.3 private >"$tmpdir/truth.json" ||
		fail "mapchurn failed"
	want=$(jq .waits "$tmpdir/truth.json")
	final=$(tail -n 1 "$tmpdir/lt.json")
	rows=$(jq -c '[.locks[] | select(.comm == "mapchurn" and
		(.kind | startswith("futex"))) | {name, key, waits, procs}]' \
		<<<"$final")
	echo "the program's waits $want; its rows: $rows"
	sum=$(jq 'map(.waits) | add // 0' <<<"$rows")
	[ "$sum" = "$want" ] || fail "rows of the program: $sum waits, it made $want"
	bare=$(jq -c '[.[] | select(.name | test("^0x[0-9a-f]+$"))]' <<<"$rows")
	[ "$bare" = "[]" ] || fail "named by address: $bare"
	jq -e 'length > 0 and all(.[]; .name | test("^mapchurn\\+0x"))' \
		<<<"$rows" >/dev/null || fail "not named in its image: $rows"
	echo "ok: $sum waits, every row named in the program's image"
	echo PASS
	exit 0
fi

"$locktop" --batch --json --delay 0.25 --output "$tmpdir/lt.json" -- \
	"$churn" "$tmpdir/churn.dat" 3 >"$tmpdir/truth.json" ||
	fail "mapchurn failed"
want=$(jq .waits "$tmpdir/truth.json")
final=$(tail -n 1 "$tmpdir/lt.json")
jq -c '[.locks[] | select(.kind | startswith("futex")) |
	{name, key, kind, waits, pids}]' <<<"$final"
rows=$(jq -c --arg f "$tmpdir/churn.dat+0x100" \
	'[.locks[] | select(.name == $f) | {waits, pids, procs}] |
	sort_by(-.waits)' <<<"$final")
sum=$(jq 'map(.waits) | add // 0' <<<"$rows")
echo "the program's waits $want; the file's rows: $rows"
[ "$sum" = "$want" ] || fail "waits under the file's name: $sum, the program $want"
[ "$(jq length <<<"$rows")" = 1 ] || fail "one lock, $(jq length <<<"$rows") rows"
[ "$(jq '.[0].pids | length' <<<"$rows")" = 2 ] ||
	fail "the file's row is not both processes': $rows"
echo "ok: $sum waits of $want on the file's one row"
echo PASS
