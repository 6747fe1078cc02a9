#!/usr/bin/env bash
# A tdb-like store loses nothing: lockbench --tdb takes a byte lock at
# each record's offset, and its records move, so it meets tens of
# thousands of ranges; more than the kernel's lock map holds. Every
# interval has 0 drops, the maps stay under 90% full, and the table
# file's figures (its chain, record, open and active locks, whether in
# rows of their own or in the file's "other ranges") are lockbench's.
# Usage: tdb.sh LOCKTOP LOCKBENCH BACKEND
# TDB_PROCS and TDB_LOOPS (32 and 40000) size the run: the same checks
# hold for a long run at 100 processes (TDB_PROCS=100 TDB_LOOPS=80000:
# 55 s of intervals here).
. "$(dirname "$0")/lib.sh"
locktop=$(realpath "$1") lockbench=$(realpath "$2") backend=$3
require_bpf
cd "$tmpdir"

# 40,000 keys on 1,000 chains: about 30,000 record offsets.
"$locktop" record -o r.rec --interval 0.5 -- \
	"$lockbench" --tdb --lock "$backend" -n "${TDB_PROCS:-32}" \
	-l "${TDB_LOOPS:-40000}" -H 1000 \
	--keys 40000 --path "$tmpdir/table.tdb" --json >lb.json 2>err.txt ||
	fail "lockbench --tdb under locktop record failed: $(cat err.txt)"
jq -e '.check == "OK"' lb.json >/dev/null || fail "lockbench's check failed"
offsets=$(jq .record_offsets lb.json)
[ "$offsets" -gt 16384 ] || fail "only $offsets record offsets: too few to fill the map"
echo "record offsets: $offsets, $(jq '.intervals | length' r.rec) intervals"

# Nothing lost, in any interval; the maps never full.
jq -e '[.intervals[] | .drops] | all(. == 0)' r.rec >/dev/null ||
	fail "drops: $(jq -c '[.intervals[] | .drops]' r.rec)"
jq -e '.final.drops == 0' r.rec >/dev/null || fail "final drops"
fill=$(jq '[.intervals[] | .lock_entries * 100 / .lock_capacity,
	.party_entries * 100 / .party_capacity] | max | floor' r.rec)
echo "fullest map: $fill%"
[ "$fill" -lt 90 ] || fail "a map reached $fill%"
jq -e '[.intervals[] | .folding] | any' r.rec >/dev/null ||
	fail "ranges were never folded, so this run does not test folding"
jq -e '[.final.locks[] | select(.name | endswith("table.tdb (other ranges)"))] |
	length == 1' r.rec >/dev/null ||
	fail "no single 'table.tdb (other ranges)' row"

# The table file's figures: the intervals' sum over its rows.
ours() {
	jq --arg f "$1" '[.intervals[].locks[] |
		select(.name | test("table\\.tdb(\\+0x| \\(other ranges\\))")) |
		.[$f]] | add // 0' r.rec
}
truth() { jq ".file_locks.$1" lb.json; }

[ "$(truth contended)" -gt 1000 ] || fail "too little contention: $(truth contended)"
within acquisitions "$(ours acquires)" "$(truth acquires)" 1
within "try-lock failures" "$(ours trylock_failures)" "$(truth trylock_failures)" 1
# A blocking call that finds the lock free by then does not wait: the
# waits are the calls that slept.
within waits "$(ours waits)" "$(truth slept)" 1
# lockbench times each blocking call whole, from its start to its return:
# the waits are inside, and so are the calls that did not sleep and the
# way back to user space after each grant (with 32 processes on a few
# CPUs, often a preemption). So ours is never more, and less by those.
awk -v a="$(ours wait_ns)" -v b="$(truth wait_ns)" 'BEGIN {
	printf "wait time: ours %.0f, lockbench %.0f, %.3f%% less\n", a, b, (b - a) / b * 100
	exit !(a <= b && a >= b * 0.97) }' ||
	fail "wait time is not lockbench's less at most 3%"
# The lock is held from inside the granted call to inside the unlock:
# never less than lockbench's hold (from the call's return to the
# unlock's call), never more than its span (from the call to the
# unlock's return), and, as in accuracy.sh, longer than the hold by no
# more than the two calls' crossings: 10 us a hold at most.
awk -v a="$(ours hold_ns)" -v lo="$(truth hold_ns)" \
	-v hi="$(truth hold_span_ns)" -v n="$(truth acquires)" 'BEGIN {
	printf "hold time: ours %.0f, lockbench %.0f to %.0f; %.2f us more per hold than its inside (%.2f%%)\n", a, lo, hi, (a - lo) / n / 1000, (a - lo) / lo * 100
	exit !(a >= lo && a <= hi && (a - lo) / n <= 10000) }' ||
	fail "hold time is outside lockbench's bounds"
echo PASS
