#!/usr/bin/env bash
# The collector's own CPU at a 1 s interval while 10,000 distinct locks
# are active: locktop's user+system time in steady state (after the first
# intervals, which name every new lock), as % of one core. The probes'
# time is the kernel's, reported apart as probe cost.
#
#   bench/collector-cpu.sh [BUILD_DIR] [SECONDS] [LOCKS]
set -euo pipefail
build=${1:-build}
secs=${2:-10}
n=${3:-10000}
[ "$(id -u)" -eq 0 ] || { echo "collector-cpu: needs root" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CPU time of every thread of process $1 in ns, from the scheduler's
# own accounting (finer than the clock ticks of /proc/PID/stat).
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ t += $1 } END { print t }'; }

"$build/tests/manylocks" "$n" $((secs + 6)) >/dev/null &
work=$!
"$build/tui/locktop" -b -d 1 --all --json --limit 20 -o "$tmp/lt.json" &
lt=$!
sleep 4
t0=$(cpu_ns "$lt")
start=$(date +%s.%N)
sleep "$secs"
t1=$(cpu_ns "$lt")
end=$(date +%s.%N)
kill -INT "$lt"
wait "$lt" || true
wait "$work" || true
locks=$(jq -s 'map(.lock_entries) | max' "$tmp/lt.json")
awk -v a="$t0" -v b="$t1" -v s="$start" -v e="$end" -v l="$locks" 'BEGIN {
	cpu = (b - a) / 1e9; wall = e - s
	printf "collector CPU: %.3f s over %.1f s = %.2f%% of a core, %d locks in the kernel map\n",
		cpu, wall, cpu / wall * 100, l }'
