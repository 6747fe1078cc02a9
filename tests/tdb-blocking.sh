#!/usr/bin/env bash
# A tdb-like store that calls fcntl as tdb does (lockbench --tdb
# --blocking: every lock one F_SETLKW, every unlock an F_SETLKW). With no
# try first lockbench cannot tell its waits, so the kernel's own
# tracepoint counts them beside locktop in the same run
# (tests/file-truth.bt): the waits and their time agree, and so do the
# acquisitions and refused probes with lockbench's count; nothing is lost.
# Usage: tdb-blocking.sh LOCKTOP LOCKBENCH BACKEND
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2 backend=$3
require_bpf
command -v bpftrace >/dev/null || skip "bpftrace is not installed"

start_truth "$(dirname "$0")/file-truth.bt" lockbench

"$locktop" --batch --json --delay 1 --output "$tmpdir/lt.json" -- \
	"$lockbench" --tdb --blocking --lock "$backend" -n 16 -l 4000 -H 100 \
	--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" ||
	fail "lockbench --tdb --blocking under locktop failed"
kill -INT "$bt"
wait "$bt" || true
gone

jq -e '.check == "OK" and .blocking' "$tmpdir/lb.json" >/dev/null ||
	fail "lockbench's check failed"
final=$(tail -n 1 "$tmpdir/lt.json")
jq -e '.drops == 0' <<<"$final" >/dev/null ||
	fail "drops: $(jq -c .drops <<<"$final")"
rows='[.locks[] | select(.kind == "fcntl" or .kind == "ofd") |
	select(.name | test("table\\.tdb(\\+0x| \\(other ranges\\))"))]'
ours() { jq "[${rows}[] | .$1] | add // 0" <<<"$final"; }
ino=$(jq .inode "$tmpdir/lb.json")
truth() {
	awk -v m="@$1[$ino]:" '$1 == m { print $2; found = 1 }
		END { if (!found) print 0 }' "$tmpdir/bt.out"
}

within acquisitions "$(ours acquires)" "$(jq .file_locks.acquires "$tmpdir/lb.json")" 0
within "refused probes" "$(ours trylock_failures)" \
	"$(jq .file_locks.trylock_failures "$tmpdir/lb.json")" 0
[ "$(truth waits)" -gt 500 ] || fail "too little contention to judge: $(truth waits)"
within waits "$(ours waits)" "$(truth waits)" 1 "the kernel's tracepoint"
within "wait time" "$(ours wait_ns)" "$(truth wait_ns)" 3 "the kernel's tracepoint"
echo PASS
