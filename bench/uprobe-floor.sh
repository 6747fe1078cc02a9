#!/usr/bin/env bash
# What one uprobe hit costs on this machine, before any program runs:
# bench/uprobe-hit (calls of a function that starts with a one-byte nop,
# as a USDT site does) untraced and with a bpftrace uprobe counting the
# calls, in alternating rounds. The difference is the hit: the trap into
# the kernel, the step past the probed instruction, the return, and the
# least a program does. A server's probes cost it at least its hits per
# transaction times this (bench/pg-cost.sh prints those hits).
#
#   bench/uprobe-floor.sh [BUILD_DIR] [ROUNDS]
#
# Prints "ns per hit: N" last (the median of the rounds' differences).
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
hit=$build/bench/uprobe-hit
out=$(mktemp)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -f "$out"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "uprobe-floor: needs root" >&2; exit 77; }
command -v bpftrace >/dev/null || { echo "uprobe-floor: needs bpftrace" >&2; exit 77; }
[ -x "$hit" ] || { echo "uprobe-floor: no $hit (build first)" >&2; exit 1; }
hit=$(realpath "$hit")

calls() { "$hit" -n "${CALLS:-100000}" -j | jq -r .ns_per_call; }

# Until bpftrace says its probe is in (it prints "Attaching N probes").
traced_calls() {
	local i bt
	: >"$out"
	bpftrace -e "uprobe:$hit:lt_probe_site { @n = count(); }" \
		>"$out" 2>&1 &
	bt=$!
	for i in $(seq 100); do
		grep -q Attaching "$out" && break
		sleep 0.1
	done
	sleep 0.5
	calls
	kill -INT "$bt"
	wait "$bt" 2>/dev/null || true
}

printf '%-6s %10s %10s %10s\n' round untraced uprobe 'ns/hit'
diffs=
for r in $(seq "$rounds"); do
	u=$(calls)
	t=$(traced_calls)
	d=$(awk -v u="$u" -v t="$t" 'BEGIN { printf "%.0f", t - u }')
	printf '%-6s %10.1f %10.1f %10s\n' "$r" "$u" "$t" "$d"
	diffs="$diffs$d"$'\n'
done
printf 'ns per hit: %s\n' "$(printf '%s' "$diffs" | sort -g |
	awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
