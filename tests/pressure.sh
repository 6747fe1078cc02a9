#!/usr/bin/env bash
# More distinct locks than the kernel map holds: the excess is counted as
# dropped, never silently lost, and nothing crashes.
. "$(dirname "$0")/lib.sh"
locktop=$1 manylocks=$2
require_bpf

n=20000
"$locktop" --batch --json --all --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$manylocks" "$n" >/dev/null || fail "locktop or manylocks failed"
final=$(tail -n 1 "$tmpdir/lt.json")
seen=$(jq '[.locks[] | .waits] | add // 0' <<<"$final")
drops=$(jq .drops <<<"$final")
locks=$(jq '.locks | length' <<<"$final")
echo "locks $locks, waits $seen, drops $drops"
[ "$drops" -gt 0 ] || fail "no drops counted"
[ "$locks" -le 16384 ] || fail "more locks than the map holds"
# Every wait is either counted or dropped (a dropped wait may also lose
# its party entry, counted as a drop too).
[ $((seen + drops)) -ge "$n" ] || fail "waits went missing: $seen + $drops < $n"
# The drops keep their reasons: the per-lock map's, and they add up.
reasons=$(jq -c .drop_reasons <<<"$final")
echo "drop reasons: $reasons"
[ "$(jq '[.[]] | add' <<<"$reasons")" = "$drops" ] ||
	fail "the drop reasons do not add up to $drops: $reasons"
[ "$(jq .locks_full <<<"$reasons")" -gt 0 ] ||
	fail "a full lock map counted no locks_full drop: $reasons"
[ "$(jq 'keys | length' <<<"$reasons")" = 10 ] ||
	fail "not every drop reason is named: $reasons"
echo PASS
