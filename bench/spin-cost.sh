#!/usr/bin/env bash
# What on-CPU sampling for spinning costs a traced workload: lockbench
# --lock mutex and --lock fcntl, each run under locktop with sampling on
# (--spin-hz 997) and off (--spin-hz 0), in alternating rounds (on/off,
# then off/on). Prints each round, then the median elapsed time
# (lockbench's own) of each, on/off, and what the sampler itself did in
# the on runs (its runs and ns per run from the kernel's BPF statistics,
# median over the rounds).
#   spin-cost.sh [BUILD_DIR] [ROUNDS] [LOOPS]
# Loads BPF programs: run it under the shared lock.
set -eu
build=${1:-build}
rounds=${2:-9}
loops=${3:-30000}
locktop=$build/tui/locktop
lockbench=$build/workloads/lockbench
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # BACKEND HZ: lockbench's elapsed seconds under locktop
	"$locktop" --batch --json --delay 1 --spin-hz "$2" \
		--output "$tmp/lt.json" -- \
		"$lockbench" --lock "$1" -n 8 -l "$loops" -H 16 --hold-us 20 \
		--path "$tmp/table.tdb" --json | jq .elapsed_s
	[ "$2" = 0 ] && return
	tail -n 1 "$tmp/lt.json" | jq -r '.probes.programs[] |
		select(.name == "spin") | "\(.runs) \(.ns_per_run)"' >>"$tmp/probe"
}

printf '%-8s %6s %10s %10s\n' backend round "on (s)" "off (s)"
for backend in mutex fcntl; do
	: >"$tmp/on"
	: >"$tmp/off"
	for r in $(seq "$rounds"); do
		if [ $((r % 2)) = 1 ]; then
			run "$backend" 997 >>"$tmp/on"
			run "$backend" 0 >>"$tmp/off"
		else
			run "$backend" 0 >>"$tmp/off"
			run "$backend" 997 >>"$tmp/on"
		fi
		printf '%-8s %6d %10.3f %10.3f\n' "$backend" "$r" \
			"$(tail -n 1 "$tmp/on")" "$(tail -n 1 "$tmp/off")"
	done
	median <"$tmp/on" >"$tmp/on.$backend"
	median <"$tmp/off" >"$tmp/off.$backend"
	awk '{ print $1 }' "$tmp/probe" | median >"$tmp/runs.$backend"
	awk '{ print $2 }' "$tmp/probe" | median >"$tmp/ns.$backend"
	: >"$tmp/probe"
done
echo
printf '%-8s %10s %10s %8s %12s %10s\n' backend "on (s)" "off (s)" on/off \
	"sampler runs" "ns/run"
for backend in mutex fcntl; do
	awk -v b="$backend" -v a="$(cat "$tmp/on.$backend")" \
		-v o="$(cat "$tmp/off.$backend")" -v r="$(cat "$tmp/runs.$backend")" \
		-v n="$(cat "$tmp/ns.$backend")" 'BEGIN {
		printf "%-8s %10.3f %10.3f %8.4f %12d %10.0f\n", b, a, o, a / o, r, n }'
done
