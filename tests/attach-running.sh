#!/usr/bin/env bash
# Tracing a running server: locktop -p on a parent whose workers already
# run counts their waits, as the kernel's own file lock tracepoint does
# in the same run (tests/file-truth.bt), at least 99% of them; and with
# --ready-file the file exists once the probes are attached, and a
# COMMAND given with -p starts only after it, both traced.
# Usage: attach-running.sh LOCKTOP LOCKBENCH
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf
command -v bpftrace >/dev/null || skip "bpftrace is not installed"

# The workers are forked, then stopped until both tracers are attached.
"$lockbench" --tdb --blocking --lock fcntl -n 8 -l 20000 -H 16 --hold-us 20 \
	--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" &
lb=$!
for _ in $(seq 100); do
	[ "$(pgrep -c -P "$lb")" -ge 8 ] && break
	sleep 0.05
done
workers=$(pgrep -d ' ' -P "$lb") || fail "lockbench forked no worker"
kill -STOP "$lb" $workers
start_truth "$(dirname "$0")/file-truth.bt" lockbench
"$locktop" --batch --json --delay 1 -p "$lb" --ready-file "$tmpdir/ready" \
	--output "$tmpdir/lt.json" 2>"$tmpdir/lt.err" &
lt=$!
for _ in $(seq 300); do
	[ -e "$tmpdir/ready" ] && break
	kill -0 "$lt" 2>/dev/null || fail "locktop ended: $(cat "$tmpdir/lt.err")"
	sleep 0.05
done
[ -e "$tmpdir/ready" ] || fail "no ready file in 15 s"
grep -q "^locktop: probes attached; tracing 9 processes$" "$tmpdir/lt.err" ||
	fail "locktop did not say it traces the parent and its 8 workers: \
$(cat "$tmpdir/lt.err")"
kill -CONT "$lb" $workers
wait "$lb" || fail "lockbench failed"
kill -INT "$lt" "$bt"
wait "$lt" || fail "locktop failed: $(cat "$tmpdir/lt.err")"
wait "$bt" || true
gone

jq -e '.check == "OK"' "$tmpdir/lb.json" >/dev/null || fail "lockbench's check"
final=$(tail -n 1 "$tmpdir/lt.json")
jq -e '.final and .drops == 0' <<<"$final" >/dev/null ||
	fail "drops: $(jq -c .drops <<<"$final")"
ino=$(jq .inode "$tmpdir/lb.json")
truth=$(awk -v m="@waits[$ino]:" '$1 == m { print $2; f = 1 }
	END { if (!f) print 0 }' "$tmpdir/bt.out")
ours=$(jq '[.locks[] | select(.kind == "fcntl") |
	select(.name | test("table\\.tdb")) | .waits] | add // 0' <<<"$final")
[ "$truth" -gt 100 ] || fail "too little contention to judge: $truth waits"
awk -v a="$ours" -v b="$truth" 'BEGIN {
	printf "waits: ours %d, bpftrace %d (%.2f%%)\n", a, b, a * 100 / b
	exit !(a >= b * 0.99 && a <= b * 1.01) }' ||
	fail "locktop -p PARENT missed its running workers' waits"

# A COMMAND with -p: it starts after the ready file, and both are traced.
rm -f "$tmpdir/ready"
sleep 30 &
idle=$!
"$locktop" --batch --json --delay 1 -p "$idle" --ready-file "$tmpdir/ready" \
	--output "$tmpdir/cmd.json" -- sh -c '
	[ -e "$1" ] && echo ready >"$2"
	exec "$3" --lock fcntl -n 4 -l 2000 -H 4 --path "$4"' sh \
	"$tmpdir/ready" "$tmpdir/seen" "$lockbench" "$tmpdir/t2.tdb" \
	>/dev/null 2>"$tmpdir/cmd.err" || fail "locktop -p PID -- COMMAND: \
$(cat "$tmpdir/cmd.err")"
kill "$idle"
gone
[ "$(cat "$tmpdir/seen" 2>/dev/null)" = ready ] ||
	fail "the command started before the ready file existed"
grep -q "^locktop: probes attached; tracing 2 processes$" "$tmpdir/cmd.err" ||
	fail "not the command and the PID: $(cat "$tmpdir/cmd.err")"
jq -e 'select(.final) | [.locks[] | select(.name | test("t2\\.tdb"))] |
	length > 0' "$tmpdir/cmd.json" >/dev/null ||
	fail "the command's locks are not traced"
echo "ok: -p with a COMMAND"
