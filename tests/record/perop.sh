#!/usr/bin/env bash
# locktop diff per operation, with no BPF (synthetic records): the
# throughput headline, verdicts on the figures per operation, a lock
# whose key is the same for its fcntl lock and its mutex as one row, a
# file's total across kinds, rows of a handful of waits out of the top,
# a record's own operation count, and the CPU time of --pid's processes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/difflib.sh"
locktop=$(realpath "$1") mkrecord=$(realpath "$2")
cd "$tmpdir"

# Before: a tdb chain by fcntl and another fcntl lock of the same file,
# keyed as a store's layout names them ("fcntl:locking.tdb chain 7");
# a lock of another file with a handful of waits. After: the chain as a
# mutex ("futex:locking.tdb chain 7"), twice the waits and 1.5 times the
# wait time, in twice the operations. No noise: exact figures.
mk before.rec --intervals 10 --noise 0 \
	--lock 'fcntl,/srv/locking.tdb chain 7,1000,1000000000' \
	--lock 'fcntl,/srv/locking.tdb:4096,500,200000000' \
	--lock 'futex,/srv/other.tdb+0x40,1,100000'
mk after.rec --intervals 10 --noise 0 \
	--lock 'futex,/srv/locking.tdb chain 7,2000,1500000000' \
	--lock 'fcntl,/srv/locking.tdb:4096,400,100000000' \
	--lock 'futex,/srv/other.tdb+0x40,1,100000'
chain='locking.tdb chain 7 (fcntl → futex)'

# Totals only: more wait time is worse, and no throughput line.
diff_ok before.rec after.rec
sed -n 1p out.txt | grep -q '^elapsed ' || fail "line 1: $(head -2 out.txt)"
verdict_is "$chain" 'wait time' worse
grep -qF "changed most: $chain: wait time 10.00s → 15.00s (+50.0%, worse)" out.txt ||
	fail "no lock that changed most: $(cat out.txt)"
echo "ok: totals"

# Per operation: 20000 ops before, 40000 after, in the same time: the
# throughput doubles, and the chain waits less per operation.
diff_ok --ops 20000,40000 before.rec after.rec
sed -n 1p out.txt |
	grep -qE '^throughput +2000/s → 4000/s +\+100\.0%  20000 → 40000 operations$' ||
	fail "line 1 is not the throughput: $(head -3 out.txt)"
sed -n 2p out.txt |
	grep -qxF "changed most: $chain: wait time per op 500.0us → 375.0us (-25.0%, better)" ||
	fail "line 2: $(head -3 out.txt)"
verdict_is "$chain" 'wait time' better
verdict_is "$chain" waits same
verdict_is all 'wait time' better
line_of "$chain" waits |
	grep -qE '^  waits +10000 → 20000 +\+100\.0% +0\.5 → 0\.5 +\+0\.0%  same$' ||
	fail "waits per op: $(line_of "$chain" waits)"
echo "ok: per operation"

# The file's total: every lock in locking.tdb, across kinds.
verdict_is 'locking.tdb, all locks' 'wait time' better
line_of 'locking.tdb, all locks' waits | grep -qE '^  waits +15000 → 24000 ' ||
	fail "file total: $(line_of 'locking.tdb, all locks' waits)"
grep -q '^other.tdb, all locks' out.txt && fail "a file of one lock has a total"
echo "ok: file total"

# A store's key with no kind in it, one for both kinds: one row too.
for r in before after; do
	jq -c '(.intervals[], .final).locks[] |= (.key |=
		sub("^(fcntl|futex):/srv/locking.tdb chain"; "tdb:/srv/locking.tdb chain"))' \
		"$r.rec" >"$r-tdb.rec"
done
diff_ok --ops 20000,40000 before-tdb.rec after-tdb.rec
verdict_is 'tdb:locking.tdb chain 7 (fcntl → futex)' 'wait time' better
verdict_is 'locking.tdb, all locks' 'wait time' better
echo "ok: a key of no kind pairs the same"

# Rows of a handful of waits stay out of the top, and --limit 0 shows them.
grep -q 'other.tdb+0x40' out.txt && fail "a row of 10 waits is in the top"
grep -qE '^LOCKS \(2 of 3, most wait time first; 1 too small to change a verdict .* left out\)$' out.txt ||
	fail "LOCKS header: $(grep '^LOCKS' out.txt)"
diff_ok --ops 20000,40000 --limit 0 before.rec after.rec
grep -q '^futex:other.tdb+0x40$' out.txt || fail "--limit 0 leaves out a small row"
echo "ok: small rows"

# The same in Markdown and JSON.
diff_ok --ops 20000,40000 --markdown before.rec after.rec
grep -qF '**Throughput 2000/s → 4000/s (+100.0%)**, 20000 → 40000 operations.' out.txt ||
	fail "Markdown headline: $(head -5 out.txt)"
grep -qF "| \`$chain\` | wait time | 10.00s | 15.00s | +50.0% | 500.0us | 375.0us | -25.0% | **better** |" out.txt ||
	fail "Markdown row: $(grep 'chain 7' out.txt)"
diff_ok --ops 20000,40000 --json before.rec after.rec
jq -e '.per_op and .before.ops == 20000 and .after.ops_per_s == 4000 and
	(.locks[0] | .key == "locking.tdb chain 7" and .kind == "mixed" and
	 .kinds_before == ["fcntl"] and .kinds_after == ["futex"] and
	 .metrics.wait_time.per_op_before == 500000 and
	 .metrics.wait_time.verdict == "better") and
	(.files[0].file == "locking.tdb") and
	([.locks[] | select(.small)] | length == 1)' out.txt >/dev/null ||
	fail "JSON: $(jq -c '{per_op, l: .locks[0], f: .files}' out.txt)"
echo "ok: Markdown and JSON"

# --fail-if on a figure per operation: the chain's wait time per
# operation fell by 25%, its total rose by 50%.
rc=0
"$locktop" diff --ops 20000,40000 --fail-if 'wait_time/op>-20%' \
	before.rec after.rec >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 0 ] || fail "wait_time/op>-20% exited $rc: $(cat err.txt)"
rc=0
"$locktop" diff --ops 20000,40000 --fail-if 'wait_time/op<-30%' \
	before.rec after.rec >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 1 ] && grep -qF "crossed: all wait time per op 600.0us → 400.0us (-33.3%)" err.txt ||
	fail "wait_time/op<-30%: exit $rc, $(cat err.txt)"
rc=0
"$locktop" diff --fail-if 'waits/op>1' before.rec after.rec >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q 'needs both runs' err.txt ||
	fail "a gate per op without operations: exit $rc, $(cat err.txt)"
rc=0
"$locktop" diff --ops 1,1 --fail-if 'p99/op>1' before.rec after.rec >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 2 ] || fail "p99/op: exit $rc"
echo "ok: --fail-if per operation"

# A record's own count (locktop record --ops-file), and --ops over it.
jq -c '.ops = 20000' before.rec >b-ops.rec
jq -c '.ops = 40000' after.rec >a-ops.rec
diff_ok b-ops.rec a-ops.rec
sed -n 1p out.txt | grep -q '^throughput .* 20000 → 40000 operations$' ||
	fail "the records' ops: $(head -2 out.txt)"
diff_ok --ops 1,1 b-ops.rec a-ops.rec
sed -n 1p out.txt | grep -q '^throughput .* 1 → 1 operations$' ||
	fail "--ops does not win: $(head -2 out.txt)"
diff_ok b-ops.rec after.rec
sed -n 1p out.txt | grep -q '^elapsed ' || fail "one count: $(head -2 out.txt)"
grep -q 'holds an operation count and after.rec none' err.txt ||
	fail "no warning for one count: $(cat err.txt)"
for bad in 0,1 1 1,2,3 -1,5 1.5,2 x,y; do
	rc=0
	"$locktop" diff --ops "$bad" before.rec after.rec >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 2 ] || fail "--ops $bad exited $rc"
done
jq -c '.ops = -3' before.rec >bad.rec
rc=0
"$locktop" diff bad.rec after.rec >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 2 ] || fail "a negative ops loaded: exit $rc"
echo "ok: a record's operations"

# The CPU time of --pid's processes: added to the command's, a line of
# its own, per operation, and the note on processes nobody waited for.
jq -c '.pids_cpu_user_s = 3 | .pids_cpu_sys_s = 1 | .pids_unwaited = 2' \
	b-ops.rec >b-cpu.rec
jq -c '.pids_cpu_user_s = 2 | .pids_cpu_sys_s = 2 | .pids_unwaited = 0' \
	a-ops.rec >a-cpu.rec
diff_ok b-cpu.rec a-cpu.rec
grep -qE '^CPU user\+sys +4\.00s → 4\.00s +\+0\.0%  user 3\.00s → 2\.00s, sys 1\.00s → 2\.00s$' out.txt ||
	fail "CPU: $(head -6 out.txt)"
grep -qE "^CPU of --pid's trees +4\.00s → 4\.00s " out.txt || fail "pid CPU: $(head -6 out.txt)"
grep -qE '^CPU per op +200\.0us → 100\.0us +-50\.0%$' out.txt || fail "CPU per op: $(head -6 out.txt)"
grep -q 'b-cpu.rec: 2 --pid processes ended with no parent traced' out.txt ||
	fail "no note on unwaited processes: $(head -8 out.txt)"
echo "ok: --pid CPU time"
echo PASS
