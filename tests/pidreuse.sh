#!/usr/bin/env bash
# A process's own lock whose process ends leaves the kernel's map; when
# its PID comes back and waits at the same address, the lock's figures
# start from zero there, so every interval's histogram still counts the
# waits the interval had, and the totals are both runs' waits.
. "$(dirname "$0")/lib.sh"
locktop=$1 samelock=$2
require_bpf
[ -w /proc/sys/kernel/ns_last_pid ] || skip "cannot choose the next PID"

"$locktop" record --interval 0.3 --duration 8 -o "$tmpdir/r.rec" &
lt=$!
wait_attached "$lt" || fail "the probes did not attach"
first=$("$samelock" 1000 | jq .pid)
# Two reads: the first takes its last figures, the next forgets it.
sleep 1
again=0 runs=1
for _ in $(seq 20); do
	# Straight after: the shell forks the program itself, nothing else.
	echo $((first - 1)) >/proc/sys/kernel/ns_last_pid
	"$samelock" 10 >"$tmpdir/again.json"
	runs=$((runs + 1))
	if [ "$(jq .pid "$tmpdir/again.json")" = "$first" ]; then
		again=1
		break
	fi
done
wait "$lt" || fail "locktop record failed"
[ "$again" = 1 ] || fail "could not run again as PID $first"
# Every run's word is named alike; a run under another PID (when the
# chosen one was taken) is a row of its own, with the same key.
key=$(jq -r '[.final.locks[] | select(.kind == "futex" and
	(.name | test("samelock")))][0].key // ""' "$tmpdir/r.rec")
[ -n "$key" ] || fail "no samelock lock: $(jq -c '[.final.locks[].key]' "$tmpdir/r.rec")"
echo "lock $key, $runs runs"
jq -c --arg k "$key" '.intervals[] | .locks[] | select(.key == $k) |
	{waits, hist: (.wait_hist | add)}' "$tmpdir/r.rec"
bad=$(jq --arg k "$key" '[.intervals[] | .locks[] | select(.key == $k) |
	select((.wait_hist | add) != .waits)] | length' "$tmpdir/r.rec")
[ "$bad" = 0 ] || fail "$bad intervals whose histogram is not their waits"
want=$((1000 + 10 * (runs - 1)))
total=$(jq --arg k "$key" '[.final.locks[] | select(.key == $k) | .waits] | add' "$tmpdir/r.rec")
hist=$(jq --arg k "$key" '[.final.locks[] | select(.key == $k) | .wait_hist | add] | add' "$tmpdir/r.rec")
echo "final: $total waits, $hist in the histogram, $want made"
[ "$total" = "$want" ] || fail "total waits $total, not $want"
[ "$hist" = "$want" ] || fail "histogram total $hist, not $want"
echo PASS
