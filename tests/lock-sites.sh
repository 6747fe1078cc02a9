#!/usr/bin/env bash
# One row per lock site: sitelock's processes each take their own
# private mutex on the heap, at one offset. The JSON's final object
# lists one row for it, with procs and its members (each process's own
# row, not listed apart), whose waits add up to the row's; that sum is
# within 1% of a bpftrace count of the same futex waits in the same run.
# Each process's top lock is the site row; batch text shows it as
# NAME (N sitelock), and leaves out rows whose columns are all zero.
# Usage: lock-sites.sh LOCKTOP SITELOCK
. "$(dirname "$0")/lib.sh"
locktop=$1 prog=$2
require_bpf
command -v bpftrace >/dev/null || skip "bpftrace is not installed"
command -v jq >/dev/null || skip "jq is not installed"
procs=4
tmpdir=$(mktemp -d)
trap 'end_jobs; rm -rf "$tmpdir"' EXIT

start_truth "$(dirname "$0")/futex-truth.bt" sitelock
"$locktop" --batch --json --delay 1 --no-kernel-locks --spin-hz 0 \
	--output "$tmpdir/lt.json" -- "$prog" -p $procs -t 4 -n 5000 -h 20 \
	>"$tmpdir/out.json" || fail "sitelock under locktop failed"
kill -INT "$bt"
wait "$bt" || true
gone

final=$(tail -n 1 "$tmpdir/lt.json")
# fork() copies the layout: every process has the mutex at one address.
addr=$(jq -rs '[.[].address] | unique | if length == 1 then .[0] else "many" end' \
	"$tmpdir/out.json")
[ "$addr" != many ] || fail "the processes' mutexes differ: $(cat "$tmpdir/out.json")"
rows=$(jq -c '[.locks[] | select(.comm == "sitelock" and .kind == "futex")]' <<<"$final")
echo "rows: $(jq -c '[.[] | {name, key, procs, waits, members: (.members | length)}]' <<<"$rows")"
[ "$(jq length <<<"$rows")" = 1 ] || fail "not one row: $rows"
row=$(jq -c '.[0]' <<<"$rows")
name=$(jq -r .name <<<"$row")
# malloc's heap; under AddressSanitizer, whose allocator keeps its own
# anonymous mappings, the mapping every copy has and the offset in it.
if ldd "$prog" 2>/dev/null | grep -q libasan; then
	[[ $name =~ ^\[anon@(0x[0-9a-f]+)\]\+(0x[0-9a-f]+)$ ]] ||
		fail "name: $name"
	[ $((BASH_REMATCH[1] + BASH_REMATCH[2])) = $((addr)) ] ||
		fail "name $name is not the address $addr"
	# Its identity is the address: another copy's mapping may start
	# elsewhere.
	key=futex:$addr
else
	[[ $name == "[heap]+0x"* ]] || fail "name: $name"
	key=futex:$name
fi
[ "$(jq -r .key <<<"$row")" = "$key" ] || fail "key: $row"
[ "$(jq .procs <<<"$row")" = $procs ] || fail "procs: $row"
[ "$(jq '.members | length' <<<"$row")" = $procs ] || fail "members: $row"
[ "$(jq '[.members[].pid] | unique | length' <<<"$row")" = $procs ] ||
	fail "members' processes: $row"
[ "$(jq '.pids | length' <<<"$row")" = $procs ] || fail "pids: $row"
sum=$(jq '[.members[].waits] | add' <<<"$row")
[ "$sum" = "$(jq .waits <<<"$row")" ] || fail "members' waits $sum: $row"
sum_ns=$(jq '[.members[].wait_ns] | add' <<<"$row")
[ "$sum_ns" = "$(jq .wait_ns <<<"$row")" ] || fail "members' wait_ns $sum_ns: $row"
# No member is a row of its own.
for id in $(jq '.members[].id' <<<"$row"); do
	[ "$(jq --argjson id "$id" '[.locks[] | select(.id == $id)] | length' \
		<<<"$final")" = 0 ] || fail "member $id listed apart"
done
# Every interval's row sums to the final one.
iv=$(jq -s --arg k "$key" '[.[] | select(.final | not) | .locks[] |
	select(.key == $k and .comm == "sitelock") | .waits] | add' "$tmpdir/lt.json")
[ "$iv" = "$(jq .waits <<<"$row")" ] || fail "intervals add to $iv: $row"
truth=$(awk -v m="@waits[$((addr))]:" '$1 == m { print $2; f = 1 }
	END { if (!f) print 0 }' "$tmpdir/bt.out")
[ "$truth" -gt 100 ] || fail "too little contention to judge: $truth"
within waits "$(jq .waits <<<"$row")" "$truth" 1 "bpftrace"
# Each process's top lock is the site row.
id=$(jq .id <<<"$row")
top=$(jq -c --argjson id "$id" '[.procs[] | select(.comm == "sitelock" and .waits > 0) |
	.top_lock == $id] | unique' <<<"$final")
[ "$top" = "[true]" ] || fail "top locks: $(jq -c '.procs' <<<"$final")"

# Batch text: the site's label, once; no row of zeros.
"$locktop" --batch --delay 5 --no-kernel-locks --spin-hz 0 -- \
	"$prog" -p $procs -t 4 -n 3000 -h 20 >"$tmpdir/text" 2>&1 ||
	fail "batch text run failed"
gone
summary=$(sed -n '/^locktop summary/,$p' "$tmpdir/text")
echo "$summary" | head -5
# Another run: the same heap offset, or in AddressSanitizer's anonymous
# mappings a name of the same form.
if [ "$key" = "futex:$name" ]; then
	same=$(sed 's/[][\.+*^$]/\\&/g' <<<"$name")
else
	same='(\[anon|\.\.)[@0-9a-fx]*\]\+0x[0-9a-f]+'
fi
n=$(grep -cE "$same " <<<"$summary" || true)
[ "$n" = 1 ] || fail "the site is $n rows: $summary"
grep -qE "$same \($procs sitelock\)" <<<"$summary" ||
	fail "no label ($procs sitelock): $summary"
awk '$1 != "LOCK" && NF >= 6 && $3 == "0" && $4 == "0" { bad = 1; print }
	END { exit bad }' <<<"$(sed '1,2d' <<<"$summary")" ||
	fail "a row of zeros: $summary"
echo PASS
