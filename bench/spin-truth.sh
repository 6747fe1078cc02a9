#!/usr/bin/env bash
# Spin time as locktop samples it against lockbench's own: lockbench
# --lock spin at 2, 16 and 64 processes, each under locktop at the
# default rate. For each: the elapsed time and acquisitions per second
# (throughput collapses as spinners outnumber the CPUs), locktop's spin
# time (the spin rows of the table file: samples times the period) and
# its samples, lockbench's spin_cpu_ns (thread CPU time around each
# spin), their ratio, and spin time per second of the run.
#   spin-truth.sh [BUILD_DIR] [PROCS...]
# Loads BPF programs: run it under the shared lock.
set -eu
build=${1:-build}
shift || true
procs=${*:-2 16 64}
locktop=$build/tui/locktop
lockbench=$build/workloads/lockbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%5s %8s %10s %12s %8s %14s %8s %8s\n' procs "elapsed" "acq/s" \
	"locktop (s)" samples "lockbench (s)" ratio "spin/s"
for p in $procs; do
	# About 120000 acquisitions in all, fewer where they get slow.
	loops=$((120000 / p))
	[ "$p" -gt 16 ] && loops=$((25600 / p))
	"$locktop" --batch --json --delay 1 --output "$tmp/lt.json" -- \
		"$lockbench" --lock spin -n "$p" -l "$loops" -H 4 --hold-us 20 \
		--path "$tmp/table.tdb" --json >"$tmp/lb.json"
	rows=$(tail -n 1 "$tmp/lt.json" | jq -c '[.locks[] |
		select(.kind == "spin" and (.name | test("table\\.tdb\\+0x")))]')
	awk -v p="$p" -v e="$(jq .elapsed_s "$tmp/lb.json")" -v l="$loops" \
		-v ns="$(jq 'map(.wait_ns) | add // 0' <<<"$rows")" \
		-v s="$(jq 'map(.samples) | add // 0' <<<"$rows")" \
		-v t="$(jq .spin_cpu_ns "$tmp/lb.json")" 'BEGIN {
		printf "%5d %8.2f %10.0f %12.3f %8d %14.3f %8.3f %8.2f\n",
			p, e, p * l / e, ns / 1e9, s, t / 1e9,
			(t > 0 ? ns / t : 0), ns / 1e9 / e }'
done
