#!/usr/bin/env bash
# The probes' own cost per event, from the kernel's BPF statistics (in
# locktop's sampling windows), under lockbench at -n 64 -l 2000: ns per
# event for each probe object, beside
# the measuring stick locktop takes when it loads (what the statistics
# charge a probe that does nothing, and one kernel clock read here).
#
#   bench/probe-cost.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
[ "$(id -u)" -eq 0 ] || { echo "probe-cost: needs root" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-8s %-9s %10s %9s\n' backend probe events ns/event
for backend in fcntl ofd mutex; do
	"$build/tui/locktop" -b --json -d 1 -o "$tmp/$backend.json" -- \
		"$build/workloads/lockbench" --lock "$backend" -n 64 -l 2000 \
		-H 1000 --path "$tmp/t.tdb" >/dev/null
	tail -n 1 "$tmp/$backend.json" | jq -r --arg b "$backend" '
		.probes.programs[] | select(.sampled_runs > 0) |
		[$b, .name, .runs, (.sampled_ns / .sampled_runs)] |
		@tsv' | awk -F'\t' '{ printf "%-8s %-9s %10d %9.0f\n", $1, $2, $3, $4 }'
done
tail -n 1 "$tmp/fcntl.json" | jq -r '.probes |
	"measuring stick: an empty probe costs \(.floor_ns | floor) ns as the statistics see it; one clock read \(.clock_ns | floor) ns"'
