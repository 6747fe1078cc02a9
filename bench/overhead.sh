#!/usr/bin/env bash
# Tracing overhead, measured side by side in one run: lockbench elapsed
# time (-n 64 -l 2000 -H HASH) untraced and under each of these tracers:
#
#   locktop   locktop -b -d 1, every probe
#   lt-user   the same with --no-kernel-locks --spin-hz 0: user-space
#             locks only, the events bt-waits sees (and pread)
#   lt-kfloor lt-user beside empty programs on the kernel lock events
#             (attach-floor --kernel-locks): against locktop, what its
#             kernel lock probe's own work costs beyond the events' floor;
#             only when TRACERS names it
#   bt-waits  bpftrace summing futex and fcntl wait time per lock
#             (bench/futex-fcntl-wait.bt)
#   bt-figs   bpftrace keeping locktop's per-lock fcntl figures and no
#             more: acquisitions, try-lock failures, wait and hold time
#             (bench/fcntl-lock-figures.bt; fcntl only)
#   floor     an empty program on every event locktop attaches to: what
#             tracing those points costs before any work, such as the
#             slow path every system call takes once a syscall
#             tracepoint is on (bench/attach-floor)
#   clock     the same programs each reading the kernel clock once: the
#             least any tracer that times a wait pays (attach-floor
#             --clock)
#
# Runs alternate so that machine noise hits all alike; the medians and
# their ratios to the untraced median are printed, never absolute
# judgements. bpftrace's columns are left out without bpftrace.
#
#   bench/overhead.sh [BUILD_DIR] [ROUNDS] [HASH]
#
# HASH is lockbench's hash chains, 1000 by default as in tdbtorture's
# reference runs; 64 is lockbench's own default.
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
hash=${3:-1000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
lockbench=$build/workloads/lockbench
locktop=$build/tui/locktop
floor=$build/bench/attach-floor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null || true' EXIT

[ "$(id -u)" -eq 0 ] || { echo "overhead: needs root" >&2; exit 77; }
tracers=$(all_tracers)

# backend -> elapsed seconds. A mutex run at -n 64 -l 2000 lasts a fraction
# of a second, so it is run eight times back to back and the times summed:
# a ratio of such sums is steadier than one of single runs.
run_lb() {
	local reps=1 i
	[ "$1" = mutex ] && reps=8
	for i in $(seq "$reps"); do
		"$lockbench" --lock "$1" -n 64 -l 2000 -H "$hash" --json |
			jq -r .elapsed_s
	done | awk '{ t += $1 } END { print t }'
}

# Whether tracer $1 measures anything on backend $2.
applies() { [ "$1" != bt-figs ] || [ "$2" = fcntl ]; }

echo "lockbench -n 64 -l 2000 -H $hash, $rounds rounds; medians, and ratios to untraced"
printf '%-8s %9s' backend untraced
for t in $tracers; do printf ' %9s' "$t"; done
echo
for backend in mutex fcntl; do
	: >"$tmp/base"
	for t in $tracers; do : >"$tmp/$t"; done
	for r in $(seq "$rounds"); do
		echo "round $r/$rounds $backend" >&2
		run_lb "$backend" >>"$tmp/base"
		for t in $tracers; do
			applies "$t" "$backend" || continue
			start_tracer "$t"
			run_lb "$backend" >>"$tmp/$t"
			stop_tracer
			sleep 0.5
		done
	done
	b=$(median <"$tmp/base")
	printf '%-8s %8.2fs' "$backend" "$b"
	for t in $tracers; do
		if [ -s "$tmp/$t" ]; then
			printf ' %9.3f' "$(median <"$tmp/$t" |
				awk -v b="$b" '{ print $1 / b }')"
		else
			printf ' %9s' -
		fi
	done
	echo
done
