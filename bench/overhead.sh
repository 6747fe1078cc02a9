#!/usr/bin/env bash
# Tracing overhead, measured side by side in one run: lockbench elapsed
# time untraced, under locktop, under a bpftrace script that sums the
# same waits, and under empty programs on every event locktop attaches to
# (the floor: what tracing those points costs before any work, such as
# the slow path every system call takes once a syscall tracepoint is on).
# Runs alternate so that machine noise hits all alike; the ratios of
# medians are printed, never absolute judgements.
#
#   bench/overhead.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
lockbench=$build/workloads/lockbench
locktop=$build/tui/locktop
bt=$here/futex-fcntl-wait.bt
floor=$build/bench/attach-floor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null || true' EXIT

[ "$(id -u)" -eq 0 ] || { echo "overhead: needs root" >&2; exit 77; }
have_bt=0
command -v bpftrace >/dev/null && have_bt=1

# backend -> elapsed seconds. A mutex run at -n 64 -l 2000 lasts a fraction
# of a second, so it is run three times back to back and the times summed:
# a ratio of such sums is steadier than one of single runs.
run_lb() {
	local reps=1 i
	[ "$1" = mutex ] && reps=3
	for i in $(seq "$reps"); do
		"$lockbench" --lock "$1" -n 64 -l 2000 -H 1000 --json |
			jq -r .elapsed_s
	done | awk '{ t += $1 } END { print t }'
}

# A tracer started in the background, ready when its probes are in.
start_tracer() {
	case $1 in
	locktop)
		"$locktop" -b -d 1 -o /dev/null &
		;;
	bpftrace)
		bpftrace "$bt" >/dev/null 2>"$tmp/bt.err" &
		;;
	floor)
		"$floor" >/dev/null &
		;;
	esac
	tracer=$!
	case $1 in
	locktop) wait_progs '^lt_futex_enter$' ;;
	bpftrace) wait_progs 'sys_enter_futex|tracepoint__sys' ;;
	floor) wait_progs '^floor_exit$' ;;
	esac
	# Steady state: locktop's first sampling window of the kernel's
	# BPF statistics (at most a second) is over.
	sleep 1.2
}

printf '%-8s %10s %10s %10s %10s %9s %9s %9s\n' backend untraced locktop \
	bpftrace floor "lt/base" "bt/base" "fl/base"
for backend in mutex fcntl; do
	: >"$tmp/base" ; : >"$tmp/lt" ; : >"$tmp/bt" ; : >"$tmp/fl"
	for r in $(seq "$rounds"); do
		echo "round $r/$rounds $backend" >&2
		run_lb "$backend" >>"$tmp/base"
		start_tracer locktop
		run_lb "$backend" >>"$tmp/lt"
		stop_tracer
		sleep 0.5
		if [ $have_bt = 1 ]; then
			start_tracer bpftrace
			run_lb "$backend" >>"$tmp/bt"
			stop_tracer
			sleep 0.5
		fi
		start_tracer floor
		run_lb "$backend" >>"$tmp/fl"
		stop_tracer
		sleep 0.5
	done
	b=$(median <"$tmp/base")
	l=$(median <"$tmp/lt")
	t=$( [ -s "$tmp/bt" ] && median <"$tmp/bt" || echo nan)
	f=$( [ -s "$tmp/fl" ] && median <"$tmp/fl" || echo nan)
	awk -v k="$backend" -v b="$b" -v l="$l" -v t="$t" -v f="$f" 'BEGIN {
		printf "%-8s %9.2fs %9.2fs %9.2fs %9.2fs %9.3f %9.3f %9.3f\n",
			k, b, l, t, f, l / b, (t == "nan" ? 0 : t / b),
			(f == "nan" ? 0 : f / b) }'
done
