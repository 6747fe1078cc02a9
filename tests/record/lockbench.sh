#!/usr/bin/env bash
# The seed experiment: lockbench with fcntl, then with robust mutexes, on
# the same table path. The diff must say that fcntl's wait goes away
# (better), futex waits appear (from 0; in a run this short their verdict
# may be worse or, spread over few intervals, same), the total wait time
# drops (better), and --fail-if must gate in the worse direction only. A
# real record against itself is the same.
. "$(dirname "$0")/../lib.sh"
locktop=$(realpath "$1") lockbench=$(realpath "$2")
require_bpf
cd "$tmpdir"

# The verdict weighs the change against each record's spread between
# intervals; runs this short are noisy, so a "same" for the total gets
# the experiment run again, twice at most. A wrong verdict every time
# still fails.
for attempt in 1 2 3; do
	# Intervals of 10 ms (the shortest a record takes): the mutex run,
	# the shorter, lasts 50-90 ms at this size, and the verdict needs at
	# least 4 intervals in each record to see through the noise, also
	# where a sanitizer or a loaded host slows the ticks.
	for lock in fcntl mutex; do
		# A run of a few milliseconds may meet no contention at all
		# (lockbench's own count says so): then there is nothing to see, so
		# run it again, a few times at most.
		for try in 1 2 3 4 5; do
			"$locktop" record -o "$lock.rec" --interval 0.01 -- \
				"$lockbench" --lock "$lock" -n 8 -l 12000 -H 16 \
				--path "$tmpdir/t.tdb" --json >"lb-$lock.json" \
				2>"lt-$lock.err" ||
				fail "record of lockbench --lock $lock: exit $? $(cat "lt-$lock.err")"
			jq -e '.check == "OK"' "lb-$lock.json" >/dev/null ||
				fail "lockbench $lock: $(cat "lb-$lock.json")"
			jq -e '.contended > 0' "lb-$lock.json" >/dev/null && break
		done
		# The record: its marker, the session, and intervals that add up.
		jq -e --arg rel "$(uname -r)" '.format == "locktop-record" and
			.version == 1 and .exit_status == 0 and .ended_by == "command" and
			(.kernel | contains($rel)) and .release == $rel and
			(.host | length > 0) and (.command[0] | endswith("lockbench")) and
			(.cmdline | contains("record -o")) and (.start_time > 0) and
			(.intervals | length >= 1) and (.final.elapsed_s > 0)' \
			"$lock.rec" >/dev/null || fail "$lock.rec: $(head -c 600 "$lock.rec")"
		jq -e '([.intervals[].locks[].waits] | add) == ([.final.locks[].waits] | add)
			and ([.intervals[].kinds[].wait_ns] | add) ==
			([.final.kinds[].wait_ns] | add)' "$lock.rec" >/dev/null ||
			fail "$lock.rec: the intervals do not add up to the totals"
		ls -A | grep -q "^\.$lock\.rec\." && fail "a temporary file was left"
	done
	jq -e '.final.kinds.fcntl.waits > 0 and
		([.final.locks[] | select(.key | test("^fcntl:(.*/)?t\\.tdb\\+0x[0-9a-f]+"))] |
		 length > 0)' fcntl.rec >/dev/null ||
		fail "no fcntl waits on t.tdb: $(jq -c .final.kinds fcntl.rec)"
	jq -e '.final.kinds.futex.waits > 0 and (.final.kinds.fcntl // {waits: 0} |
		.waits == 0)' mutex.rec >/dev/null ||
		fail "mutex run: $(jq -c .final.kinds mutex.rec)"
	echo "ok: records"

	rc=0
	"$locktop" diff --json fcntl.rec mutex.rec >diff.json || rc=$?
	[ "$rc" -eq 0 ] || fail "diff exited $rc"
	kinds=$(jq -c '[.kinds[] | {kind, w: .metrics.wait_time}]' diff.json)
	jq -e '(.kinds[] | select(.kind == "fcntl") | .metrics.wait_time |
		.before > 0 and .after == 0 and .verdict == "better") and
		(.kinds[] | select(.kind == "futex") | .metrics.wait_time |
		.before == 0 and .after > 0 and .change_pct == null) and
		(.kinds[] | select(.kind == "all") | .metrics |
		.wait_time.verdict == "better" and
		.wait_time.before > .wait_time.after)' diff.json >/dev/null ||
		{ [ "$attempt" -lt 3 ] && echo "noisy: $kinds; again" && continue
		  fail "diff fcntl -> mutex: $kinds"; }
	break
done
# Locks matched by key: the fcntl ranges only before, the futexes only after.
jq -e '([.locks[] | select(.kind == "fcntl") | .before and (.after | not)] |
	length > 0 and all) and
	([.locks[] | select(.kind == "futex" and (.key | test("t\\.tdb\\+0x")))
	 | .after and (.before | not)] | length > 0 and all)' diff.json \
	>/dev/null || fail "locks: $(jq -c '[.locks[] | {key, before, after}]' diff.json)"
"$locktop" diff fcntl.rec mutex.rec >diff.txt
grep -qE '^  wait time .* better$' diff.txt || fail "text: $(cat diff.txt)"
echo "ok: diff says $kinds"

# CI gating: worse direction crosses, the better one does not.
rc=0
"$locktop" diff --fail-if 'wait_time>+10%' mutex.rec fcntl.rec >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 1 ] || fail "--fail-if in the worse direction exited $rc"
grep -q crossed err.txt || fail "no crossing message: $(cat err.txt)"
"$locktop" diff --fail-if 'wait_time>+10%' --fail-if 'fcntl.waits>+10%' \
	fcntl.rec mutex.rec >/dev/null || fail "--fail-if in the better direction exited $?"
echo "ok: --fail-if"

# A real record against itself.
"$locktop" diff --json mutex.rec mutex.rec >self.json || fail "self-diff exited $?"
jq -e '[.kinds[], .locks[] | .metrics[] | .verdict] | all(. == "same")' \
	self.json >/dev/null || fail "self-diff is not all same"
echo "ok: self-diff"
