#!/usr/bin/env bash
# --kill-holder: SIGKILL a chain-lock holder in the middle of an update.
. "$(dirname "$0")/common.sh"
lock=$1
K=3

case $lock in
fcntl | ofd | flock | mutex)
	j=$("$lb" --json --lock "$lock" -n 4 -l 1500 -H 8 -s 7 \
		--kill-holder $K) || fail "$lock with kills exited $?"
	check_ground_truth "$j"
	jq_true "$j" ".kills == $K" "$lock: all $K kills happened"
	# Every torn update was rolled back, by the next locker or the check.
	jq_true "$j" ".repairs == $K" "$lock: every torn update was repaired"
	if [ "$lock" = mutex ]; then
		jq_true "$j" ".owner_dead == $K" "mutex: EOWNERDEAD seen for each kill"
	else
		jq_true "$j" '.owner_dead == 0' "$lock: no owner-dead for kernel locks"
	fi

	# Without the repair the check must catch the torn updates.
	set +e
	out=$("$lb" --lock "$lock" -n 4 -l 1500 -H 8 -s 7 --kill-holder $K \
		--no-repair 2>&1)
	rc=$?
	set -e
	[ $rc -eq 1 ] || fail "$lock --no-repair: want exit 1, got $rc: $out"
	printf '%s\n' "$out" | grep -q '^FAILED$' || fail "$lock --no-repair: no FAILED"
	printf '%s\n' "$out" | grep -q 'check: ' || fail "$lock --no-repair: no reason given"
	;;
spin | adaptive)
	start=$(date +%s)
	set +e
	j=$(timeout 60 "$lb" --json --lock "$lock" -n 3 -l 1500 -H 8 -s 7 \
		--kill-holder 1 --stuck-timeout 1 2>"$tmpdir/err")
	rc=$?
	set -e
	[ $rc -eq 3 ] || fail "$lock: want exit 3 (stuck), got $rc: $(cat "$tmpdir/err")"
	[ $(($(date +%s) - start)) -lt 30 ] || fail "$lock: took too long to give up"
	grep -q "STUCK: $lock lock 'chain [0-9]*' at offset [0-9]* .* is held by pid [0-9]*, which is gone" \
		"$tmpdir/err" || fail "$lock: unclear stuck message: $(cat "$tmpdir/err")"
	grep -q "no owner-death notice" "$tmpdir/err" || fail "$lock: no reason given"
	jq_true "$j" '.check == "STUCK" and .kills == 1' "$lock: JSON says STUCK"
	jq_true "$j" '(.stuck.name as $n | .locks[] | select(.name == $n) | .offset) == .stuck.offset' \
		"$lock: stuck offset matches the lock table"
	# The table file is removed even on this path.
	[ -z "$(ls "$tmpdir"/lockbench-*.tdb 2>/dev/null)" ] || fail "$lock: table file left behind"
	;;
*)
	fail "unknown backend $lock"
	;;
esac
echo "ok: $lock"
