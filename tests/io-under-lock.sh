#!/usr/bin/env bash
# pread under an fcntl chain lock is charged to that lock as I/O under
# lock, and the table file shows its pread traffic: as many calls and
# bytes as lockbench made. lockbench's processes show those calls too.
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf

"$locktop" --batch --json --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$lockbench" --lock fcntl --io pread --hold-us 50 -n 4 -l 1000 -H 16 \
	--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" || fail "run failed"
final=$(tail -n 1 "$tmpdir/lt.json")
[ "$(jq -r .file_io <<<"$final")" = traced ] || fail "file_io: $(jq .file_io <<<"$final")"
chains=$(jq '[.locks[] | select(.kind == "fcntl" and (.name | contains("table.tdb"))
	and .io_under_lock_ns > 0)] | length' <<<"$final")
[ "$chains" -ge 8 ] || fail "only $chains locks carry I/O under lock"
file=$(jq -c '[.files[] | select(.name | contains("table.tdb"))][0]' <<<"$final")
# The file's calls and bytes are lockbench's own count of them, exactly.
for f in reads:io_reads writes:io_writes read_bytes:io_read_bytes \
	write_bytes:io_write_bytes; do
	got=$(jq ".${f%%:*}" <<<"$file")
	want=$(jq ".${f#*:}" "$tmpdir/lb.json")
	[ "$want" -gt 0 ] || fail "lockbench counted no ${f#*:}"
	[ "$got" = "$want" ] || fail "${f%%:*}: $got seen, lockbench made $want"
done
[ "$(jq .io_under_lock_ns <<<"$file")" -gt 0 ] || fail "file I/O under lock: $file"
# All of that I/O happened under a lock: lockbench does I/O only then.
jq -e '.io_under_lock_ns >= .io_ns * 0.9' <<<"$file" >/dev/null ||
	fail "I/O under lock is less than 90% of the file's I/O: $file"
# Per process: lockbench's calls, and at most a few of its own setup.
calls=$(jq '.io_reads + .io_writes' "$tmpdir/lb.json")
procs=$(jq '[.procs[] | select(.comm == "lockbench") | .io_count] | add // 0' <<<"$final")
echo "lockbench's processes: $procs calls; lockbench made $calls"
[ "$procs" -ge "$calls" ] && [ "$procs" -le $((calls + 10)) ] ||
	fail "the processes show $procs calls, lockbench made $calls"
jq -e --argjson f "$(jq .io_ns <<<"$file")" \
	'[.procs[] | select(.comm == "lockbench") | .io_ns] | add >= $f' \
	<<<"$final" >/dev/null || fail "the processes' I/O time is below the file's"
echo "ok: $chains locks; file $(jq -c '{reads, writes, read_bytes, write_bytes, io_ns, io_under_lock_ns}' <<<"$file")"

"$locktop" --batch --json --delay 0.5 --no-io --output "$tmpdir/off.json" -- \
	"$lockbench" --lock fcntl --io pread --hold-us 50 -n 4 -l 1000 -H 16 \
	--path "$tmpdir/off.tdb" --json >"$tmpdir/lb-off.json" || fail "--no-io run failed"
off=$(tail -n 1 "$tmpdir/off.json")
[ "$(jq -r .file_io <<<"$off")" = off ] || fail "--no-io: file_io $(jq .file_io <<<"$off")"
[ "$(jq '.files | length' <<<"$off")" = 0 ] || fail "--no-io: files $(jq -c .files <<<"$off")"
jq -e '[.locks[].io_under_lock_ns] | add // 0 | . == 0' <<<"$off" >/dev/null ||
	fail "--no-io: I/O under a lock"
jq -e '[.procs[].io_count] | add // 0 | . == 0' <<<"$off" >/dev/null ||
	fail "--no-io: a process has I/O calls"
waits=$(jq '[.locks[] | select(.kind == "fcntl" and (.name | contains("off.tdb"))) | .contended] | add // 0' <<<"$off")
[ "$waits" -gt 0 ] || fail "--no-io: no fcntl lock waits on off.tdb"
echo "ok: --no-io: no files, $waits fcntl lock waits"
echo PASS
