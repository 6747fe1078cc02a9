#!/usr/bin/env bash
# The seed's story on a real Samba: workloads/compare-locks samba starts
# the machine's smbd privately with its tdb chains locked by fcntl, then
# by robust mutexes, records each under smbtorture with
# `locktop record -p SMBD_MASTER -- smbtorture ...`, and diffs the two
# per open (locktop diff --ops). The diff must open with the throughput,
# before → after, and the lock that changed most; show locking.tdb as
# one total across kinds, with fewer waits per open under mutexes; keep
# the rows too small to change a verdict out of the top; and both
# records must hold smbd's CPU time.
# Usage: samba.sh LOCKTOP COMPARE_LOCKS
. "$(dirname "$0")/../lib.sh"
locktop=$(realpath "$1") compare=$(realpath "$2")
here=$(cd "$(dirname "$0")/.." && pwd)
require_bpf
command -v jq >/dev/null || skip "jq is not installed"
. "$here/smblib.sh"
smb_require

# One line per locking.tdb chain, its fcntl lock and its mutex paired,
# needs keys that name the chain whatever its kind ("locking.tdb chain
# N"). With true, such a line must be there; with false, it is checked
# when the keys have it, and the file's total stands in for it.
want_chain_line=${LOCKTOP_WANT_CHAIN_LINE:-true}

cd "$tmpdir"
LOCKTOP=$locktop "$compare" samba -o cmp --conns 32 --seconds 8 \
	>out.txt 2>err.txt || fail "compare-locks samba exited $?: $(cat err.txt)"
cat err.txt
for f in before.rec after.rec diff.txt diff.md diff.json; do
	[ -s "cmp/$f" ] || fail "compare-locks wrote no $f"
done
ops_b=$(cat cmp/before.ops) ops_a=$(cat cmp/after.ops)
[ "$ops_b" -gt 1000 ] && [ "$ops_a" -gt 1000 ] ||
	fail "too few opens to judge: $ops_b, $ops_a"
sed -n '1,/^KINDS/p' cmp/diff.txt

# The records: made with -p on smbd and a command, so both CPU times.
for r in before after; do
	jq -e '.pids_cpu_user_s > 0 and .pids_cpu_sys_s > 0 and
		.cpu_user_s != null and (.pids | length) == 2' "cmp/$r.rec" \
		>/dev/null || fail "$r.rec: no CPU time of smbd: $(jq -c \
		'{pids, cpu_user_s, pids_cpu_user_s, pids_cpu_sys_s}' "cmp/$r.rec")"
done
grep -qE '^CPU of --pid.s trees +[0-9.]+m?s → [0-9.]+m?s ' cmp/diff.txt ||
	fail "no CPU time of smbd in the diff"
grep -qE '^CPU per op +[0-9.]+[mun]?s → [0-9.]+[mun]?s ' cmp/diff.txt ||
	fail "no CPU time per open in the diff"
echo "ok: both records hold smbd's CPU time"

# The headline: throughput before → after from the opens, then the lock
# that changed most.
sed -n 1p cmp/diff.txt | grep -qE "^throughput +[0-9]+/s → [0-9]+/s +[-+][0-9.]+%  $ops_b → $ops_a operations$" ||
	fail "line 1 is not the throughput: $(head -2 cmp/diff.txt)"
sed -n 2p cmp/diff.txt | grep -qE '^changed most: .*: wait time per op ' ||
	fail "line 2 does not name the lock that changed most: $(head -3 cmp/diff.txt)"
grep -qE "^\*\*Throughput [0-9]+/s → [0-9]+/s \([-+][0-9.]+%\)\*\*, $ops_b → $ops_a operations\.$" \
	cmp/diff.md || fail "Markdown has no throughput headline: $(head -5 cmp/diff.md)"
jq -e --argjson b "$ops_b" --argjson a "$ops_a" '.per_op and
	.before.ops == $b and .after.ops == $a and .changed_most.key != null' \
	cmp/diff.json >/dev/null || fail "JSON: $(jq -c '{per_op, changed_most}' cmp/diff.json)"
echo "ok: the headline is the throughput, $(sed -n 1p cmp/diff.txt | awk '{ print $2, $3, $4, $5 }')"

# locking.tdb as one total across kinds: fewer acquisitions that had to
# sleep (contended) per open with mutexes than with fcntl locks, judged
# per open. Waits are not compared across kinds: a futex wait is one
# sleep, and a mutex waiter that loses the lock to a running thread
# sleeps again, where a file lock call sleeps until it is granted.
file=$(jq -c '.files[] | select(.file == "locking.tdb")' cmp/diff.json)
[ -n "$file" ] || fail "no locking.tdb total: $(jq -c '[.files[].file]' cmp/diff.json)"
jq -e '(.kinds_before | index("fcntl")) and (.kinds_after | index("futex")) and
	.metrics.contended.verdict != "worse" and
	.metrics.contended.per_op_after < .metrics.contended.per_op_before' \
	<<<"$file" >/dev/null || fail "locking.tdb, all locks: $file"
grep -qx 'locking.tdb, all locks' cmp/diff.txt ||
	fail "no 'locking.tdb, all locks' in the text: $(cat cmp/diff.txt)"
grep -A5 -x 'locking.tdb, all locks' cmp/diff.txt |
	grep -qE '^  contended .* -[0-9.]+%  (better|same)$' ||
	fail "locking.tdb's contended acquisitions per open are not fewer: $(grep -A5 -x 'locking.tdb, all locks' cmp/diff.txt)"
echo "ok: locking.tdb, all locks: contended per open" \
	"$(jq -r '.metrics.contended | "\(.per_op_before) → \(.per_op_after), \(.verdict)"' <<<"$file");" \
	"wait time per open $(jq -r '.metrics.wait_time |
	"\(.per_op_before | floor)ns → \(.per_op_after | floor)ns, \(.verdict)"' <<<"$file")"

# The hot chain as ONE line: its fcntl lock before and its mutex after
# under one key.
chain=$(jq -c '[.locks[] | select(.layout_key // "" | test("locking\\.tdb chain [0-9]+$")) |
	select((.kinds_before | index("fcntl")) and (.kinds_after | index("futex")))] |
	max_by(.metrics.waits.before + .metrics.waits.after) // empty' cmp/diff.json)
if [ -n "$chain" ]; then
	label=$(jq -r .label <<<"$chain")
	grep -qxF "$label" cmp/diff.txt || fail "no line '$label' in the text"
	case $label in
	*"locking.tdb chain "*" (fcntl → futex)") ;;
	*) fail "the hot chain's line is '$label'" ;;
	esac
	jq -e '.before and .after and .metrics.contended.verdict != "worse" and
		.metrics.contended.per_op_after < .metrics.contended.per_op_before' \
		<<<"$chain" >/dev/null || fail "the hot chain: $chain"
	echo "ok: the hot chain is one line: $label"
elif [ "$want_chain_line" = true ]; then
	fail "no locking.tdb chain paired across kinds: $(jq -c '[.locks[] | .label]' cmp/diff.json)"
else
	echo "note: the keys do not name tdb chains yet; checked the file's total"
fi

# Rows too small to change a verdict stay out of the top.
shown=$(sed -n 's/^LOCKS (\([0-9]*\) of .*/\1/p' cmp/diff.txt)
big=$(jq '[.locks[] | select(.small | not)] | length' cmp/diff.json)
[ "$shown" -eq "$big" ] || [ "$shown" -eq 20 ] ||
	fail "$shown locks shown, $big not small"
jq -e '[.locks[] | select(.small | not) | .metrics.waits |
	select(.before < 10 and .after < 10)] | length == 0' cmp/diff.json \
	>/dev/null || fail "a row of a handful of waits is not small"
echo "ok: $shown locks shown of $(jq '.locks | length' cmp/diff.json)"
gone
echo PASS
