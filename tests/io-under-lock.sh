#!/usr/bin/env bash
# pread under an fcntl chain lock is charged to that lock as I/O under
# lock, and the table file shows its pread traffic.
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf

"$locktop" --batch --json --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$lockbench" --lock fcntl --io pread --hold-us 50 -n 4 -l 1000 -H 16 \
	--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" || fail "run failed"
final=$(tail -n 1 "$tmpdir/lt.json")
chains=$(jq '[.locks[] | select(.kind == "fcntl" and (.name | contains("table.tdb"))
	and .io_under_lock_ns > 0)] | length' <<<"$final")
[ "$chains" -ge 8 ] || fail "only $chains locks carry I/O under lock"
file=$(jq -c '[.files[] | select(.name | contains("table.tdb"))][0]' <<<"$final")
[ "$(jq .reads <<<"$file")" -gt 1000 ] || fail "pread count: $file"
[ "$(jq .io_under_lock_ns <<<"$file")" -gt 0 ] || fail "file I/O under lock: $file"
# All of that I/O happened under a lock: lockbench does I/O only then.
jq -e '.io_under_lock_ns >= .io_ns * 0.9' <<<"$file" >/dev/null ||
	fail "I/O under lock is less than 90% of the file's I/O: $file"
echo "ok: $chains locks; file $(jq -c '{reads, writes, io_ns, io_under_lock_ns}' <<<"$file")"
echo PASS
