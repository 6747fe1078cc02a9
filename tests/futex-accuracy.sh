#!/usr/bin/env bash
# A pthread mutex that four threads fight over is one lock, its waits are
# counted, and its total wait agrees with what the threads measured.
. "$(dirname "$0")/lib.sh"
locktop=$1 contend=$2
require_bpf

"$locktop" --batch --json --delay 0.3 --output "$tmpdir/lt.json" -- \
	"$contend" -t 4 -n 3000 -h 20 >"$tmpdir/truth.json" ||
	fail "locktop or contend failed (exit $?)"

addr=$(jq -r .address "$tmpdir/truth.json")
pid=$(jq -r .pid "$tmpdir/truth.json")
truth_waits=$(jq -r .waits "$tmpdir/truth.json")
truth_ns=$(jq -r .wait_ns "$tmpdir/truth.json")
[ "$truth_waits" -gt 10 ] && [ "$truth_ns" -gt 50000000 ] ||
	fail "contend saw too little contention ($truth_waits waits, $truth_ns ns)"

final=$(tail -n 1 "$tmpdir/lt.json")
[ "$(jq -r .final <<<"$final")" = true ] || fail "last line is not final: $final"
[ "$(jq -r .exit_status <<<"$final")" = 0 ] || fail "exit_status missing: $final"

rows=$(jq -c --arg a "$addr" --argjson p "$pid" \
	'[.locks[] | select(.address == $a and (.pids | index($p)))]' <<<"$final")
[ "$(jq length <<<"$rows")" = 1 ] || fail "mutex $addr is not one lock: $rows"
row=$(jq -c '.[0]' <<<"$rows")
[ "$(jq -r .kind <<<"$row")" = futex ] || fail "kind: $row"
waits=$(jq -r .waits <<<"$row")
wait_ns=$(jq -r .wait_ns <<<"$row")
[ "$waits" -gt 0 ] || fail "no waits: $row"
echo "truth: $truth_waits waits, $truth_ns ns; probe: $waits waits, $wait_ns ns"

# Total wait within 20% of the threads' own measurement.
awk -v a="$wait_ns" -v b="$truth_ns" 'BEGIN {
	r = a / b; printf "ratio %.3f\n", r; exit !(r > 0.8 && r < 1.2) }' ||
	fail "total wait $wait_ns ns is not within 20% of $truth_ns ns"

# The intervals add up to the final totals.
sum=$(jq -s --arg a "$addr" '[.[] | select(.final != true) | .locks[] |
	select(.address == $a) | .waits] | add // 0' "$tmpdir/lt.json")
[ "$sum" = "$waits" ] || fail "intervals sum to $sum waits, final says $waits"

# The max is a real wait: no more than the total, no less than the mean.
max=$(jq -r .max_wait_ns <<<"$row")
[ "$max" -le "$wait_ns" ] && [ "$max" -ge $((wait_ns / waits)) ] ||
	fail "max_wait_ns $max out of range"

# The name says where the mutex lives: the contend binary's data.
jq -r .name <<<"$row" | grep -qE '^(contend\+0x|shared_lock \(contend\))' || fail "name: $row"

# The command's exit status is locktop's.
set +e
"$locktop" -b -o /dev/null -- sh -c 'exit 3'
st=$?
set -e
[ "$st" = 3 ] || fail "exit status $st, want 3"
echo PASS
