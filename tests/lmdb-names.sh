#!/usr/bin/env bash
# LMDB: writer processes contending on one environment (python3-lmdb,
# the system's liblmdb) wait on its lock file's writer mutex, named
# "DIR/lock.mdb writer mutex" with the key "lmdb:lock.mdb writer mutex";
# its waits agree within 1% with a bpftrace count of the same futex
# calls in the same run (tests/futex-truth.bt: every process maps the
# lock file from its start, so the mutex's address is 0x40 in a page).
# Usage: lmdb-names.sh LOCKTOP
. "$(dirname "$0")/lib.sh"
locktop=$1
require_bpf
command -v bpftrace >/dev/null || skip "bpftrace is not installed"
/usr/bin/python3 -c 'import lmdb' 2>/dev/null || skip "python3-lmdb is not installed"

mkdir "$tmpdir/env"
start_truth "$(dirname "$0")/futex-truth.bt" ltmdb
"$locktop" --batch --json --delay 1 --output "$tmpdir/lt.json" -- \
	/usr/bin/python3 "$(dirname "$0")/lmdb-writers.py" "$tmpdir/env" \
	4 3000 200 ltmdb >"$tmpdir/out.json" || fail "the writers failed"
kill -INT "$bt"
wait "$bt" || true
gone

final=$(tail -n 1 "$tmpdir/lt.json")
want="$tmpdir/env/lock.mdb writer mutex"
row=$(jq -c --arg n "$want" '[.locks[] | select(.name == $n)]' <<<"$final")
[ "$(jq length <<<"$row")" = 1 ] ||
	fail "no one row '$want': $(jq -c '[.locks[] | {name, kind}]' <<<"$final")"
row=$(jq -c '.[0]' <<<"$row")
echo "row: $(jq -c '{name, key, kind, waits, pids}' <<<"$row")"
[ "$(jq -r .kind <<<"$row")" = futex ] || fail "kind: $row"
[ "$(jq -r .key <<<"$row")" = "lmdb:lock.mdb writer mutex" ] || fail "key: $row"
[ "$(jq '.pids | length' <<<"$row")" -ge 2 ] || fail "not shared by the writers: $row"
truth=$(awk '$1 ~ /^@waits\[/ { a = $1; gsub(/[^0-9]/, "", a)
	if (a % 4096 == 64) s += $2 } END { print s + 0 }' "$tmpdir/bt.out")
[ "$truth" -gt 100 ] || fail "too little contention to judge: $truth"
within waits "$(jq .waits <<<"$row")" "$truth" 1 "bpftrace"
echo PASS
