#!/usr/bin/env bash
# Process A holds an fcntl lock and a robust mutex while B waits on each:
# B's waits name A as the holder.
. "$(dirname "$0")/lib.sh"
locktop=$1 holder=$2
require_bpf

"$locktop" --batch --json --delay 0.2 --output "$tmpdir/lt.json" -- \
	"$holder" "$tmpdir/held.dat" 400 >"$tmpdir/truth.json" ||
	fail "holder failed"
a=$(jq .a "$tmpdir/truth.json")
b=$(jq .b "$tmpdir/truth.json")
final=$(tail -n 1 "$tmpdir/lt.json")

check() {
	local kind=$1 pat=$2 row
	row=$(jq -c --arg k "$kind" --arg p "$pat" \
		'[.locks[] | select(.kind == $k and (.name | test($p)))]' <<<"$final")
	[ "$(jq length <<<"$row")" = 1 ] || fail "$kind: not one lock: $row"
	row=$(jq -c '.[0]' <<<"$row")
	[ "$(jq '.holders[0].pid' <<<"$row")" = "$a" ] ||
		fail "$kind: holder is not A ($a): $row"
	[ "$(jq '[.waiters[].pid] == [$b]' --argjson b "$b" <<<"$row")" = true ] ||
		fail "$kind: waiter is not B ($b): $row"
	# B waited about as long as A held it.
	[ "$(jq .wait_ns <<<"$row")" -gt 300000000 ] || fail "$kind: short wait: $row"
	echo "ok: $kind: $(jq -c '{name, holder: .holders[0].pid, waiter: .waiters[0].pid, wait_ns}' <<<"$row")"
}
check fcntl 'held\.dat\+0x40$'
check futex 'held\.dat\+0x100$'
echo PASS
