#!/usr/bin/env bash
# What on-CPU sampling for spinning costs a traced workload: lockbench
# --lock mutex and --lock fcntl, each run under locktop with sampling on
# (--spin-hz 997) and off (--spin-hz 0), in alternating rounds. Prints
# the median elapsed time (lockbench's own) of each, and on/off.
#   spin-cost.sh [BUILD_DIR] [ROUNDS]
# Loads BPF programs: run it under the shared lock.
set -eu
build=${1:-build-h}
rounds=${2:-5}
locktop=$build/tui/locktop
lockbench=$build/workloads/lockbench
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # BACKEND HZ: lockbench's elapsed seconds under locktop
	"$locktop" --batch --json --delay 1 --spin-hz "$2" --output /dev/null -- \
		"$lockbench" --lock "$1" -n 8 -l 6000 -H 16 --hold-us 20 \
		--path "$tmp/table.tdb" --json | jq .elapsed_s
}

printf '%-8s %10s %10s %8s\n' backend "on (s)" "off (s)" on/off
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
	done
	on=$(median <"$tmp/on")
	off=$(median <"$tmp/off")
	awk -v b="$backend" -v a="$on" -v o="$off" 'BEGIN {
		printf "%-8s %10.3f %10.3f %8.4f\n", b, a, o, a / o }'
done
