#!/usr/bin/env bash
# A lock site in records and diff: two recordings of sitelock (3 and
# then 4 processes, each with its own mutex at one [heap] offset) keep
# one row for the site, with procs, whose waits are the final JSON's;
# locktop diff pairs the two by key, before and after.
# Usage: sites.sh LOCKTOP SITELOCK
. "$(dirname "$0")/../lib.sh"
locktop=$1 prog=$2
require_bpf
command -v jq >/dev/null || skip "jq is not installed"
tmpdir=$(mktemp -d)
trap 'end_jobs; rm -rf "$tmpdir"' EXIT
# malloc's heap; under AddressSanitizer, whose allocator keeps its own
# anonymous mappings, the address (named by its mapping and the offset).
if ldd "$prog" 2>/dev/null | grep -q libasan; then
	keyre='^futex:0x[0-9a-f]+$'
else
	keyre='^futex:\[heap\]\+'
fi

for p in 3 4; do
	"$locktop" record -o "$tmpdir/$p.rec" -- "$prog" -p $p -t 3 -n 3000 -h 20 \
		>/dev/null || fail "record of $p processes failed"
	gone
done
# The record: one row per site, its process count beside it.
for p in 3 4; do
	rows=$(jq -c --arg re "$keyre" \
		'[.final.locks[] | select(.key | test($re))]' "$tmpdir/$p.rec")
	echo "$p processes: $(jq -c '[.[] | {key, name, procs, waits}]' <<<"$rows")"
	jq -e --argjson p $p 'length == 1 and .[0].procs == $p' <<<"$rows" \
		>/dev/null || fail "not one site of $p processes in the record: $rows"
	# The intervals' rows add up to the final one.
	jq -e --arg k "$(jq -r '.[0].key' <<<"$rows")" '([.intervals[].locks[] |
		select(.key == $k) | .waits] | add) == ([.final.locks[] |
		select(.key == $k) | .waits] | add)' "$tmpdir/$p.rec" >/dev/null ||
		fail "the intervals do not add up to the site's total"
done
"$locktop" diff --json "$tmpdir/3.rec" "$tmpdir/4.rec" >"$tmpdir/diff.json" ||
	true
row=$(jq -c --arg re "$keyre" '[.locks[] | select(.key | test($re))]' \
	"$tmpdir/diff.json")
echo "diff: $(jq -c '[.[] | {key, before, after, waits: .metrics.waits}]' <<<"$row")"
[ "$(jq length <<<"$row")" = 1 ] || fail "the site is not one diff row: $row"
jq -e '.[0].before and .[0].after and .[0].metrics.waits.before > 0 and
	.[0].metrics.waits.after > 0' <<<"$row" >/dev/null ||
	fail "the site's runs are not paired: $row"
echo PASS
