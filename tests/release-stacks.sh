#!/usr/bin/env bash
# --stacks: where a lock was held. The release that ended a wait (a
# futex wake that woke a waiter, a file lock's unlock a waiter waited
# for) keeps the releasing thread's user stack, ranked by the waiting it
# ended: a holder's release stack names the function that held the
# lock, its wait stack the waiter's. A futex's release count agrees
# within 1% with a bpftrace count of the wakes that woke a waiter.
# Usage: release-stacks.sh LOCKTOP RELSTACK mutex|fcntl
. "$(dirname "$0")/lib.sh"
locktop=$1 relstack=$2 mode=$3
require_bpf
command -v bpftrace >/dev/null 2>&1 || skip "bpftrace is not installed"

[ "$mode" = mutex ] &&
	start_truth "$(dirname "$0")/release-truth.bt" "$(basename "$relstack")"
"$locktop" --batch --json --stacks --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$relstack" "$mode" -n 3000 -h 300 -f "$tmpdir/lock" \
	>"$tmpdir/truth.json" || fail "locktop or relstack failed"
pid=$(jq .pid "$tmpdir/truth.json")
final=$(tail -n 1 "$tmpdir/lt.json")
if [ "$mode" = mutex ]; then
	kill -INT "$bt"
	wait "$bt" || true
	addr=$(jq -r .address "$tmpdir/truth.json")
	row=$(jq -c --arg a "$addr" --argjson p "$pid" \
		'[.locks[] | select(.address == $a and (.pids | index($p)))][0]' <<<"$final")
	holder=hold_the_lock_long waiter=wait_for_the_lock
else
	row=$(jq -c '[.locks[] | select(.kind == "fcntl")][0]' <<<"$final")
	holder=hold_file_lock waiter=wait_for_file_lock
fi
[ "$row" != null ] || fail "no row for the lock: $(jq -c '.locks' <<<"$final" | head -c 600)"
echo "lock: $(jq -c '{name, kind, waits, wait_ns}' <<<"$row")"
printf 'wait stack:\n%s\n' "$(jq -r '.stack // ""' <<<"$row")"
jq -r '.release_stacks[] | "release stack: \(.count) releases, \(.ns) ns\n\(.stack)"' <<<"$row"

# The waiters wait in their own function; the worst release, by the
# waiting it ended, is the holder's, in the function that held it.
jq -r '.stack // ""' <<<"$row" | grep -q "^$waiter+0x[0-9a-f]* (" ||
	fail "the wait stack does not name $waiter"
worst=$(jq -r '.release_stacks[0].stack // ""' <<<"$row")
grep -q "^$holder+0x[0-9a-f]* (" <<<"$worst" ||
	fail "the worst release stack does not name $holder: $worst"
grep -q "^main+0x[0-9a-f]* (" <<<"$worst" ||
	fail "the release stack's unwind stopped before main: $worst"
# Ranked by the waiting ended, which no more than the lock's waits.
jq -e '.release_stacks | length > 0 and
	([.[] | .ns] == ([.[] | .ns] | sort | reverse))' <<<"$row" >/dev/null ||
	fail "release stacks are not worst first"
jq -e '([.release_stacks[].ns] | add) <= .wait_ns and
	.release_stacks[0].count > 0 and .release_stacks[0].ns > 0' \
	<<<"$row" >/dev/null || fail "release figures out of range"

if [ "$mode" = mutex ]; then
	# Every release that woke a waiter, as bpftrace counted them.
	truth=$(awk -v m="@woke[$(printf '%u' "$addr")]:" \
		'$1 == m { print $2; found = 1 } END { if (!found) print 0 }' \
		"$tmpdir/bt.out")
	[ "$truth" -gt 500 ] ||
		fail "too few wakes to judge: $truth ($(head -c 300 "$tmpdir/bt.out"))"
	ours=$(jq '[.release_stacks[].count] | add' <<<"$row")
	if [ "$(basename "$relstack")" = relstack-nofp ]; then
		# Without frame pointers the kernel's walk gives a release
		# frames of its own each time, so one unwound stack may come
		# under many ids, of which the lock keeps its top few: they
		# add up to no more than every release.
		echo "releases that woke a waiter: ours $ours (top stacks)," \
			"bpftrace $truth"
		[ "$ours" -le "$truth" ] ||
			fail "more releases than bpftrace counted: $ours > $truth"
	else
		within "releases that woke a waiter" "$ours" "$truth" 1 bpftrace
	fi
fi
gone
echo PASS
