#!/usr/bin/env bash
# Batch text and JSON: they parse, carry every documented field, and
# agree with the snapshot (intervals add up to the final totals); output
# that is not a terminal is batch by itself.
. "$(dirname "$0")/../lib.sh"
locktop=$1 lockbench=$2 contend=$3
require_bpf

# JSON of a traced lockbench run with robust mutexes in a shared file,
# about 1.3 s: four intervals of 0.3 s, where two are asked for below
# (at 300,000 loops it lasted 0.44-0.47 s, and once gave one)
"$locktop" --json --delay 0.3 --output "$tmpdir/lt.json" -- \
	"$lockbench" --lock mutex -n 4 -l 900000 -H 8 --path "$tmpdir/t.tdb" \
	--json >"$tmpdir/lb.json" || fail "locktop -- lockbench failed (exit $?)"
jq -e . "$tmpdir/lt.json" >/dev/null || fail "a line is not JSON"
final=$(tail -n 1 "$tmpdir/lt.json")
jq -e '.final == true and .exit_status == 0' <<<"$final" >/dev/null ||
	fail "last line: $final"

# Every object has the documented top-level fields...
jq -e -s 'all(has("time") and has("interval_s") and has("drops") and
	has("locks") and has("kinds") and has("procs") and has("files") and
	has("probes") and has("deadlocks") and
	(.probes | has("events") and has("ns_per_event") and
	 has("cpu_percent") and has("programs")) and
	(.kinds | has("futex") and has("futex-pi") and has("fcntl") and
	 has("ofd") and has("flock")))' "$tmpdir/lt.json" >/dev/null ||
	fail "top-level fields missing: $final"
# ... and every lock item all of its fields.
jq -e -s '[.[].locks[]] | length > 0 and all(
	has("name") and has("kind") and has("pids") and has("waits") and
	has("wait_ns") and has("max_wait_ns") and has("address") and
	has("comm") and has("id") and has("key") and has("p99_wait_ns") and
	has("acquires") and has("contended") and has("trylock_failures") and
	has("hold_ns") and has("max_hold_ns") and has("io_under_lock_ns") and
	has("waiters_now") and has("holder") and
	(.holders | type == "array") and (.waiters | type == "array"))' \
	"$tmpdir/lt.json" >/dev/null || fail "lock fields missing: $final"
echo "ok: fields"

# The table's locks are there, named by the file (its full path while
# the process lives, which the collector needs to read it).
jq -e '[.locks[] | select(.name | test("(^|/)t\\.tdb\\+0x"))] |
	length > 0' <<<"$final" >/dev/null || fail "no lock named t.tdb+0x...: $final"
[ "$(wc -l <"$tmpdir/lt.json")" -ge 3 ] || fail "want 2 intervals or more"

# Per lock id, the intervals sum to the final figures.
jq -e -s '
	(map(select(.final != true)) | [.[].locks[]] | group_by(.id) |
	 map({key: (.[0].id | tostring),
	      value: {waits: (map(.waits) | add),
		      wait_ns: (map(.wait_ns) | add),
		      contended: (map(.contended) | add)}}) |
	 from_entries) as $sum |
	(.[-1].locks | map({key: (.id | tostring),
	 value: {waits, wait_ns, contended}}) | from_entries) as $fin |
	$sum == $fin' "$tmpdir/lt.json" >/dev/null ||
	fail "intervals do not add up to the final figures"
# The kinds agree with the locks of that kind.
jq -e '.kinds.futex.waits == ([.locks[] | select(.kind == "futex") |
	.waits] | add // 0)' <<<"$final" >/dev/null ||
	fail "kinds.futex disagrees with the futex locks: $(jq -c .kinds <<<"$final")"
echo "ok: intervals add up to the final object, kinds to locks"

# Holders and waiters are parties: pid, comm, count, ns.
jq -e '[.locks[] | (.holders + .waiters)[] |
	has("pid") and has("comm") and has("count") and has("ns")] | all' \
	<<<"$final" >/dev/null || fail "party fields: $final"

# Batch text, chosen by itself when the output is a pipe
"$locktop" -d 0.3 -n 2 | cat >"$tmpdir/pipe.txt"
[ "$(grep -c '^locktop - ' "$tmpdir/pipe.txt")" = 2 ] ||
	fail "a pipe does not get batch text: $(head -3 "$tmpdir/pipe.txt")"
grep -q '^locktop summary' "$tmpdir/pipe.txt" || fail "no summary in the pipe"
# The command outlives the first interval: a lock is named from its
# process's maps, which are gone once the process has exited.
"$locktop" -b -d 0.3 -o "$tmpdir/t.txt" -- "$contend" -t 3 -n 12000 -h 20 >/dev/null
awk '/^LOCK +KIND +WAITS +TOTAL WAIT +AVG +MAX +PROCESS$/ { h++ }
	/contend(\)|\+0x[0-9a-f]+) +futex +[0-9]+ / { r++ }
	END { exit !(h >= 2 && r >= 1) }' "$tmpdir/t.txt" ||
	fail "batch text: $(cat "$tmpdir/t.txt")"
echo "ok: batch text, also when piped"
echo PASS
