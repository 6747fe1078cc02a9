#!/usr/bin/env bash
# Hold time ends where the kernel ends the hold: an unlock, a close (by
# the taker or another thread), the end of the taking thread (the process
# still holds it), a process's exit, and, for OFD and flock locks, the
# last close of the open file, in a forked child too. Each lock's hold is
# what holdend measured itself.
. "$(dirname "$0")/lib.sh"
locktop=$1 holdend=$2
require_bpf

"$locktop" --batch --json --delay 0.2 --output "$tmpdir/lt.json" -- \
	"$holdend" "$tmpdir" 150 >"$tmpdir/truth.json" || fail "holdend failed"
final=$(tail -n 1 "$tmpdir/lt.json")
n=$(jq '.cases | length' "$tmpdir/truth.json")
[ "$n" = 8 ] || fail "holdend ran $n cases"
for i in $(seq 0 $((n - 1))); do
	case=$(jq -c ".cases[$i]" "$tmpdir/truth.json")
	name=$(jq -r .name <<<"$case")
	file=$(jq -r .file <<<"$case")
	want=$(jq .hold_ns <<<"$case")
	rows=$(jq -c --arg f "$file" '[.locks[] | select(.kind != "kernel" and .kind != "spin") |
	select(.name | contains($f))]' <<<"$final")
	[ "$(jq length <<<"$rows")" = 1 ] || fail "$name: not one lock: $rows"
	row=$(jq -c '.[0] | {name, kind, acquires, hold_ns}' <<<"$rows")
	[ "$(jq .acquires <<<"$row")" = 1 ] || fail "$name: not one acquisition: $row"
	got=$(jq .hold_ns <<<"$row")
	# The program's clock runs from the lock call's return to the release
	# call's return; the kernel's from the grant to the release inside
	# them. An exit is only seen done once the parent's wait returns.
	awk -v g="$got" -v w="$want" 'BEGIN {
		d = g - w; if (d < 0) d = -d; exit !(d <= 10e6 + w * 0.05) }' ||
		fail "$name: hold $got ns, holdend measured $want ns: $row"
	echo "ok: $name: hold $got ns, measured $want ns ($(jq -r .kind <<<"$row"))"
done
echo PASS
