#!/usr/bin/env bash
# The collector's own CPU at a 1 s interval while 10,000 distinct locks
# are active: locktop's user+system time in steady state (after the first
# intervals, which name every new lock), as % of one core. The probes'
# time is the kernel's, reported apart as probe cost.
#
# With BEFORE_BUILD, that build's locktop is measured in the same run,
# alternating with this one over ROUNDS rounds (medians side by side),
# so that a change is judged against what it replaced.
#
#   bench/collector-cpu.sh [BUILD_DIR] [SECONDS] [LOCKS] [BEFORE_BUILD] [ROUNDS]
set -euo pipefail
build=${1:-build}
secs=${2:-10}
n=${3:-10000}
before=${4:-}
rounds=${5:-3}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "collector-cpu: needs root" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CPU time of every thread of process $1 in ns, from the scheduler's
# own accounting (finer than the clock ticks of /proc/PID/stat).
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ t += $1 } END { print t }'; }

# One measure of build $1's locktop: "percent locks".
measure() {
	local t0 t1 start end work lt locks
	"$build/tests/manylocks" "$n" $((secs + 15)) >/dev/null &
	work=$!
	"$1/tui/locktop" -b -d 1 --all --json --limit 20 -o "$tmp/lt.json" &
	lt=$!
	# Loading takes seconds; then the first intervals name every lock.
	wait_progs '^lt_pwritev2_x$' || { echo "collector-cpu: locktop did not attach" >&2; exit 1; }
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
	awk -v a="$t0" -v b="$t1" -v s="$start" -v e="$end" -v l="$locks" \
		'BEGIN { printf "%.3f %d\n", (b - a) / 1e9 / (e - s) * 100, l }'
}

if [ -z "$before" ]; then
	read -r pct locks < <(measure "$build")
	echo "collector CPU: $pct% of a core over ${secs} s, $locks locks in the kernel map"
	exit 0
fi
: >"$tmp/after"
: >"$tmp/before"
for r in $(seq "$rounds"); do
	echo "round $r/$rounds" >&2
	measure "$build" >>"$tmp/after"
	measure "$before" >>"$tmp/before"
done
printf '%-10s %10s %10s   (collector CPU, %% of a core, median of %d; %s locks)\n' \
	"" this before "$rounds" "$(cut -d' ' -f2 "$tmp/after" | median)"
printf '%-10s %10s %10s\n' "$n locks" "$(cut -d' ' -f1 "$tmp/after" | median)" \
	"$(cut -d' ' -f1 "$tmp/before" | median)"
