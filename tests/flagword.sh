#!/usr/bin/env bash
# A lock word that is a flag bit and a count (InnoDB's srw_mutex), waited
# on through syscall(2) from a stripped program: no symbol judges the
# site. The word is a lock (kind futex), shown by default; its holders
# are its own threads (the wakers), never a kernel thread or init,
# though the word's low bits are their PIDs; its waits agree within 1%
# with a bpftrace count of the same waits in the same run.
# Usage: flagword.sh LOCKTOP FLAGSTRIP
. "$(dirname "$0")/lib.sh"
locktop=$1 flagstrip=$2
require_bpf
command -v bpftrace >/dev/null 2>&1 || skip "bpftrace is not installed"
! nm "$flagstrip" 2>/dev/null | grep -q flag_lock || fail "$flagstrip has symbols"

start_truth "$(dirname "$0")/futex-truth.bt" "$(basename "$flagstrip")"
"$locktop" --batch --json --delay 0.5 --limit 0 --output "$tmpdir/lt.json" -- \
	"$flagstrip" 4 3000 >"$tmpdir/truth.json" || fail "flagword failed"
kill -INT "$bt"
wait "$bt" || true
pid=$(jq .pid "$tmpdir/truth.json")
word=$(jq -r .word "$tmpdir/truth.json")
final=$(tail -n 1 "$tmpdir/lt.json")

# Shown without --all, as one lock of kind futex.
rows=$(jq -c --arg a "$word" '[.locks[] | select(.address == $a)]' <<<"$final")
echo "word $word: $(jq -c 'map({kind, waits, wait_ns, holder, holders})' <<<"$rows")"
[ "$(jq length <<<"$rows")" = 1 ] || fail "the word is not one row shown: $rows"
[ "$(jq -r '.[0].kind' <<<"$rows")" = futex ] ||
	fail "the word is $(jq -r '.[0].kind' <<<"$rows"), not futex"

# Its holders are its own process, by thread.
jq -e --argjson p "$pid" '.[0] | (.holders | length) > 0 and
	all(.holders[]; .pid == $p and .tid > 0 and .thread != "") and
	(.holder == null or .holder.pid == $p)' <<<"$rows" >/dev/null ||
	fail "holders other than flagword ($pid): $(jq -c '.[0] | {holder, holders}' <<<"$rows")"

# No lock of any run names a kernel thread, or init and its first
# kernel threads, as a holder (a kernel lock's owner may be a kernel
# thread: the kernel's own).
for interval in $(jq -c '[.locks[] | select(.kind != "kernel") |
	(.holders[].pid, .holder.pid // empty)] | unique' "$tmpdir/lt.json" |
	jq -s -c 'add | unique | .[]'); do
	[ "$interval" -gt 4 ] || fail "holder PID $interval"
	[ "$interval" = "$pid" ] || fail "holder $interval is not flagword ($pid)"
done

# The same waits as bpftrace counted.
addr=$(printf '%u' "$word")
truth=$(awk -v m="@waits[$addr]:" '$1 == m { print $2; found = 1 }
	END { if (!found) print 0 }' "$tmpdir/bt.out")
[ "$truth" -gt 1000 ] || fail "too few waits to judge: $truth ($(head -c 300 "$tmpdir/bt.out"))"
within "waits" "$(jq '.[0].waits' <<<"$rows")" "$truth" 1 bpftrace
within "waits (flagword's own)" "$(jq '.[0].waits' <<<"$rows")" \
	"$(jq .waits "$tmpdir/truth.json")" 1 flagword
gone
echo PASS
