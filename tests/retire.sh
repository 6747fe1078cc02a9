#!/usr/bin/env bash
# With --retire, the rows of an ended process's private locks leave the
# collector some time after it ended, with its own row and its holder
# and waiter entries: generations of short-lived processes do not pile
# up, their waits stay in the per-kind totals, and the locks of a
# process that lives on keep exact figures and their own waiter while
# the rows before them are dropped and the rest renumbered. Its locks
# and a generation's are copies of lock sites (the same heap offsets in
# processes of one program): --per-process lists each process's own.
. "$(dirname "$0")/lib.sh"
locktop=$1 manylocks=$2
require_bpf

n=3000 generations=4 long=400
"$locktop" --batch --json --all --delay 0.3 --retire 1 --limit 0 --per-process \
	--output "$tmpdir/lt.json" -- bash -c "
	for g in \$(seq $generations); do
		\"$manylocks\" $n >/dev/null
		# After the first: its rows come after ones that go.
		[ \$g = 1 ] && \"$manylocks\" $long 7 >\"$tmpdir/long.json\" &
		sleep 1.5
	done
	wait" || fail "locktop or manylocks failed"
final=$(tail -n 1 "$tmpdir/lt.json")
pid=$(jq .pid "$tmpdir/long.json")
made=$(jq .waits "$tmpdir/long.json")
most=$(jq -s 'map(.lock_rows) | max' "$tmpdir/lt.json")
last=$(jq .lock_rows <<<"$final")
drops=$(jq .drops <<<"$final")
kinds=$(jq '[.kinds[] | .waits] | add' <<<"$final")
echo "rows: at most $most, at the end $last; waits by kind $kinds; drops $drops"
[ "$drops" -eq 0 ] || fail "$drops events dropped"
# Two generations at most are ever kept: the one running, and the one
# before it, which ended less than a read and a second ago.
[ "$most" -lt $((long + 2 * n + 200)) ] || fail "$most rows: ended processes' locks were kept"
[ "$last" -lt $((long + 200)) ] || fail "$last rows left after the short-lived processes ended"
[ "$kinds" -ge $((n * generations + made)) ] || fail "the kinds' totals lost waits: $kinds"

# Its own lock words, by the range it printed: the runtime may wait on a
# futex of its own (a sanitizer's leak check at exit).
first=$(jq .first "$tmpdir/long.json") last=$(jq .last "$tmpdir/long.json")
mine="[.locks[] | select((.pids | index($pid)) and
	(.address | $jq_hex) as \$a | $first <= \$a and \$a <= $last)]"
rows=$(jq "$mine | length" <<<"$final")
seen=$(jq "$mine | map(.waits) | add // 0" <<<"$final")
odd=$(jq "$mine | map(select((.waiters | length) != 1 or
	.waiters[0].count != .waits or .waiters[0].pid != $pid)) | length" <<<"$final")
echo "the long-lived process: $rows rows, $seen waits of $made made, $odd rows whose waiter is not its own"
[ "$rows" -eq "$long" ] || fail "$rows rows for its $long locks"
[ "$seen" -eq "$made" ] || fail "its waits: $seen seen, $made made"
[ "$odd" -eq 0 ] || fail "$odd rows with waiters not their own"
echo PASS
