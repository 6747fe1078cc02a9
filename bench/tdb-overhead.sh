#!/usr/bin/env bash
# Tracing overhead on a tdb store, side by side in one run: elapsed time
# untraced and under each tracer of overhead.sh (locktop, lt-user, bt-waits,
# bt-figs, floor, clock), on two workloads:
#
#   tdb       the system's libtdb under tdbtorture's mix, fcntl locking
#             (workloads/tdbstress -n PROCS -l LOOPS -H 1000)
#   tdb-like  lockbench imitating it (--lock fcntl --tdb --blocking, same
#             sizes): tdb's locks, taken with tdb's own calls (one F_SETLKW
#             each, F_SETLKW unlocks), which a tracer filtering on the
#             command sees as it sees tdb's
#
# Runs alternate so that machine noise hits all alike; the medians and
# their ratios to the untraced median are printed, for elapsed time and
# for the workload's CPU time (steadier: convoys of 100 processes on a
# few CPUs move elapsed time by tens of percent), and the median of
# each round's own ratio (paired: a round's tracers run next to its
# untraced run, so drift over the run cancels), never absolute
# judgements. bpftrace's columns are left out without bpftrace.
# TRACERS picks tracers (see bench/lib.sh), WORKLOADS="tdb-like" one
# workload.
#
#   bench/tdb-overhead.sh [BUILD_DIR] [ROUNDS] [PROCS] [LOOPS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
procs=${3:-100}
loops=${4:-2000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
locktop=$build/tui/locktop
floor=$build/bench/attach-floor
tdbstress=$build/workloads/tdbstress
lockbench=$build/workloads/lockbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null || true' EXIT

[ "$(id -u)" -eq 0 ] || { echo "tdb-overhead: needs root" >&2; exit 77; }
[ -x "$tdbstress" ] || { echo "tdb-overhead: no $tdbstress (libtdb-dev missing at build time)" >&2; exit 77; }
tracers=$(all_tracers)
workloads=${WORKLOADS:-tdb tdb-like}
for w in $workloads; do
	case $w in
	tdb | tdb-like) ;;
	*) echo "tdb-overhead: unknown workload '$w' (tdb, tdb-like)" >&2; exit 2 ;;
	esac
done

# workload -> "elapsed cpu" in seconds: cpu is the workload's user and
# system time, which the probes' own time (run in its tasks) is part of.
run_w() {
	case $1 in
	tdb) "$tdbstress" -n "$procs" -l "$loops" -H 1000 -p "$tmp/s.tdb" ;;
	tdb-like) "$lockbench" --lock fcntl --tdb --blocking -n "$procs" -l "$loops" \
		-H 1000 --path "$tmp/l.tdb" --json ;;
	esac | jq -r '"\(.elapsed_s) \(.user_s + .sys_s)"'
}

# row LABEL COLUMN UNIT: the untraced median of COLUMN (1 elapsed, 2 CPU)
# and each tracer's median over it, then each tracer's paired ratio (the
# median of its rounds' own ratios: drift over the run cancels).
row() {
	local b
	b=$(cut -d' ' -f"$2" "$tmp/base" | median)
	printf '%-8s %8.2fs' "$1" "$b"
	for t in $tracers; do
		printf ' %9.3f' "$(cut -d' ' -f"$2" "$tmp/$t" | median |
			awk -v b="$b" '{ print $1 / b }')"
	done
	echo
	printf '%-8s %9s' "" paired
	for t in $tracers; do
		printf ' %9.3f' "$(paste -d' ' "$tmp/base" "$tmp/$t" |
			awk -v c="$2" '{ print $(c + 2) / $c }' | median)"
	done
	echo
}

echo "-n $procs -l $loops -H 1000, $rounds rounds; medians, and ratios to untraced:"
echo "elapsed time, then the workload's CPU time (user+system, probes included)"
printf '%-8s %9s' workload untraced
for t in $tracers; do printf ' %9s' "$t"; done
echo
for w in $workloads; do
	: >"$tmp/base"
	for t in $tracers; do : >"$tmp/$t"; done
	for r in $(seq "$rounds"); do
		echo "round $r/$rounds $w" >&2
		run_w "$w" >>"$tmp/base"
		for t in $tracers; do
			start_tracer "$t"
			run_w "$w" >>"$tmp/$t"
			stop_tracer
			sleep 0.5
		done
	done
	row "$w" 1
	row "  cpu" 2
	# How far apart the untraced runs alone fell: differences between
	# tracers smaller than this spread are noise, not verdicts.
	cut -d' ' -f1 "$tmp/base" | sort -g | awk '{ a[NR] = $1 }
		END { printf "%-8s untraced runs %.2f-%.2fs (%d)\n", "", a[1], a[NR], NR }'
done
