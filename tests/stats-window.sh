#!/usr/bin/env bash
# The kernel's BPF statistics tax every BPF program on the host, so
# locktop keeps them on only in short sampling windows (when the probes
# load, then every ten reads). The probes count every event themselves;
# the statistics measure a part of them, and the cost per event is theirs.
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf

"$locktop" --batch --json --delay 0.1 --output "$tmpdir/lt.json" -- \
	"$lockbench" --lock fcntl -n 4 -l 60000 -H 16 --path "$tmpdir/t.tdb" --json \
	>"$tmpdir/lb.json" || fail "the run failed"
final=$(tail -n 1 "$tmpdir/lt.json")
fl() { jq --arg f "$1" '[.probes.programs[] | select(.name == "filelock") | .[$f]] | add' <<<"$final"; }
runs=$(fl runs) sampled=$(fl sampled_runs) nsper=$(fl ns_per_run)
# Lock calls (a refused try before each contended one) and unlocks.
calls=$(jq '2 * .acquires + .contended' "$tmpdir/lb.json")
secs=$(jq .elapsed_s "$tmpdir/lb.json")
echo "filelock: $runs runs counted, $sampled measured, $nsper ns per run; lockbench: $calls lock calls in $secs s"
# Each runs the lock tracepoint at least once.
[ "$runs" -ge "$calls" ] || fail "the probes counted fewer runs than the calls make"
[ "$sampled" -gt 0 ] || fail "no run was measured"
# On all the time, the statistics would have measured every run.
awk -v s="$sampled" -v r="$runs" 'BEGIN { exit !(s < 0.6 * r) }' ||
	fail "the statistics were on most of the time"
awk -v n="$nsper" 'BEGIN { exit !(n > 0) }' || fail "no cost per run"
echo PASS
