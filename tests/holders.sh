#!/usr/bin/env bash
# Process A holds an fcntl lock and a robust mutex while B waits on each:
# B's waits name A as the holder. In mode thread A holds them from a
# thread of its own, and the mutex's holder names that thread, by TID and
# name, as well as A.
# Usage: holders.sh LOCKTOP HOLDER [thread]
. "$(dirname "$0")/lib.sh"
locktop=$1 holder=$2 mode=${3:-}
require_bpf

"$locktop" --batch --json --delay 0.2 --output "$tmpdir/lt.json" -- \
	"$holder" ${mode:+-t} "$tmpdir/held.dat" 400 >"$tmpdir/truth.json" ||
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

if [ "$mode" = thread ]; then
	tid=$(jq .a_tid "$tmpdir/truth.json")
	[ "$tid" != "$a" ] || fail "A's holding thread is its main thread"
	row=$(jq -c '.locks[] | select(.kind == "futex" and
		(.name | test("held\\.dat\\+0x100$")))' <<<"$final")
	jq -e --argjson a "$a" --argjson t "$tid" '
		.holders[0].pid == $a and .holders[0].comm == "holder" and
		.holders[0].tid == $t and .holders[0].thread == "a-holder" and
		.holder.pid == $a and .holder.tid == $t and
		.holder.thread == "a-holder"' <<<"$row" >/dev/null ||
		fail "the mutex's holder is not A's thread $tid/a-holder: \
$(jq -c '{holder, holders}' <<<"$row")"
	echo "ok: thread: $(jq -c '.holders[0] | {pid, comm, tid, thread}' <<<"$row")"
	# The file lock is held by the process: no thread.
	jq -e '.locks[] | select(.kind == "fcntl") |
		all(.holders[]; .tid == 0 and .thread == "")' <<<"$final" \
		>/dev/null || fail "a file lock's holder names a thread"
fi
echo PASS
