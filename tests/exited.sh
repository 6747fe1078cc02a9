#!/usr/bin/env bash
# Processes that end leave the kernel's maps: generations of short-lived
# processes, each with its own private locks, add up to more locks than
# the map holds, yet none is dropped, every wait is counted, and the map
# empties once they are gone. The last generation's locks and waiters
# take the slots the first one's left: each of its locks still shows its
# own one wait, and its waiter that one wait. The generations' locks
# are copies of lock sites (one heap offset in processes of one
# program): --per-process lists each process's own.
. "$(dirname "$0")/lib.sh"
locktop=$1 manylocks=$2
require_bpf

# Each pair of generations fits in the map, all three do not; the pauses
# leave the collector a read (or several) between two generations.
n=7000 generations=3
"$locktop" --batch --json --all --per-process --delay 0.3 \
	--output "$tmpdir/lt.json" -- \
	bash -c "for g in \$(seq $generations); do \"$manylocks\" $n >>\"$tmpdir/made.json\"; sleep 3; done" ||
	fail "locktop or manylocks failed"
final=$(tail -n 1 "$tmpdir/lt.json")
seen=$(jq '[.locks[] | .waits] | add // 0' <<<"$final")
drops=$(jq .drops <<<"$final")
entries=$(jq .lock_entries <<<"$final")
echo "waits $seen of $((n * generations)), drops $drops, kernel entries at the end $entries"
[ "$drops" -eq 0 ] || fail "$drops events dropped"
# The shell that runs them may wait on a futex or two of its own.
[ "$seen" -ge $((n * generations)) ] || fail "waits went missing"
[ "$seen" -le $((n * generations + 100)) ] || fail "more waits than made"
[ "$entries" -lt 100 ] || fail "$entries entries left after every process ended"
# Its own lock words, by the range each generation printed: the runtime
# may wait on a futex of its own (a sanitizer's leak check at exit).
mine='[.locks[] | (.address | '"$jq_hex"') as $a |
	select(.pids[0] as $p | $made | any(.pid == $p and .first <= $a and
	$a <= .last))]'
made=$(jq -s . "$tmpdir/made.json")
[ "$(jq length <<<"$made")" -eq $generations ] || fail "manylocks did not run $generations times"
other=$(jq --argjson made "$made" "($mine | length) as \$m |
	[.locks[] | select(.comm == \"manylocks\")] | length - \$m" <<<"$final")
rows=$(jq --argjson made "$made" "$mine | length" <<<"$final")
odd=$(jq --argjson made "$made" "$mine | map(select(.waits != 1 or (.waiters | length) != 1 or
	.waiters[0].count != 1)) | length" <<<"$final")
echo "manylocks rows $rows, $odd not one wait by one waiter, $other of the runtime's own"
[ "$rows" -eq $((n * generations)) ] || fail "$rows manylocks locks, not $((n * generations))"
[ "$odd" -eq 0 ] || fail "$odd locks whose figures are not their own"
echo PASS
