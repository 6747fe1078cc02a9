#!/usr/bin/env bash
# Tracing overhead on a tdb store, side by side in one run: elapsed time
# untraced and under each tracer of overhead.sh (locktop, lt-user, bt-waits,
# bt-figs, floor, clock), on two workloads:
#
#   tdb       the system's libtdb under tdbtorture's mix, fcntl locking
#             (workloads/tdbstress -n PROCS -l LOOPS -H 1000)
#   tdb-like  lockbench imitating it (--lock fcntl --tdb, same sizes)
#
# Runs alternate so that machine noise hits all alike; the medians and
# their ratios to the untraced median are printed, and the median of
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

# workload -> elapsed seconds
run_w() {
	case $1 in
	tdb) "$tdbstress" -n "$procs" -l "$loops" -H 1000 -p "$tmp/s.tdb" |
		jq -r .elapsed_s ;;
	tdb-like) "$lockbench" --lock fcntl --tdb -n "$procs" -l "$loops" \
		-H 1000 --path "$tmp/l.tdb" --json | jq -r .elapsed_s ;;
	esac
}

echo "-n $procs -l $loops -H 1000, $rounds rounds; medians, and ratios to untraced"
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
	b=$(median <"$tmp/base")
	printf '%-8s %8.2fs' "$w" "$b"
	for t in $tracers; do
		printf ' %9.3f' "$(median <"$tmp/$t" | awk -v b="$b" '{ print $1 / b }')"
	done
	echo
	printf '%-8s %9s' "" paired
	for t in $tracers; do
		printf ' %9.3f' "$(paste "$tmp/base" "$tmp/$t" |
			awk '{ print $2 / $1 }' | median)"
	done
	echo
	# How far apart the untraced runs alone fell: differences between
	# tracers smaller than this spread are noise, not verdicts.
	sort -g "$tmp/base" | awk '{ a[NR] = $1 }
		END { printf "%-8s untraced runs %.2f-%.2fs (%d)\n", "", a[1], a[NR], NR }'
done
