#!/usr/bin/env bash
# What tracing kernel locks costs, side by side in one run:
#  - kcontend's three workloads (append: one file's i_rwsem; mmap: a
#    process's mmap_lock; dir: a directory's i_rwsem), 4 workers for
#    2 s each, untraced and under locktop: operations per second;
#  - bench/fcntl-pair (one process, uncontended POSIX lock+unlock pairs)
#    untraced, under locktop --no-kernel-locks and under locktop with
#    the kernel lock probe: ns per pair.
#
# Rounds alternate the order of untraced and traced runs so that machine
# noise hits all alike; medians and ratios are printed: a comparison,
# never a verdict (the script exits 0 either way).
#
#   bench/kernel-cost.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
pairs=1000000
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
locktop=$build/tui/locktop
kcontend=$build/workloads/kcontend
pair=$build/bench/fcntl-pair
tmp=$(mktemp -d)
tracer=

end_with_cleanup

[ "$(id -u)" -eq 0 ] || { echo "kernel-cost: needs root" >&2; exit 77; }
for x in "$locktop" "$kcontend" "$pair"; do
	[ -x "$x" ] || { echo "kernel-cost: no $x (build first)" >&2; exit 1; }
done
modes="append mmap dir"
mkdir "$tmp/d"

# Operations per second of one workload.
run_work() {
	local args=()
	case $1 in
	append) args=(--path "$tmp/app.dat") ;;
	dir) args=(--path "$tmp/d") ;;
	esac
	"$kcontend" --mode "$1" -n 4 -t 2 "${args[@]}" |
		awk '{ n += $NF } END { printf "%.0f\n", n / 2 }'
}

run_pair() {
	"$pair" -n "$pairs" -p "$tmp/lock" -j | jq -r .ns_per_pair
}

# locktop with (kernel) or without (nokernel) the kernel lock probe,
# ready once its probes are in (the kernel lock probe attaches right
# after the pread probe's last program).
start_locktop() {
	local opt=()
	[ "$1" = nokernel ] && opt=(--no-kernel-locks)
	"$locktop" -b -d 1 -o /dev/null "${opt[@]}" &
	tracer=$!
	wait_progs '^lt_pwritev2_x$' ||
		{ echo "kernel-cost: locktop did not attach" >&2; exit 1; }
	sleep 1.2 # past the first sampling window of the BPF statistics
}

# One setting: base (untraced), kernel or nokernel.
run_setting() {
	[ "$1" = base ] || start_locktop "$1"
	if [ "$1" != nokernel ]; then
		for m in $modes; do run_work "$m" >>"$tmp/$m.$1"; done
	fi
	run_pair >>"$tmp/pair.$1"
	[ "$1" = base ] || stop_tracer
	sleep 0.5
}

for r in $(seq "$rounds"); do
	echo "round $r/$rounds" >&2
	order="base kernel nokernel"
	[ $((r % 2)) = 0 ] && order="nokernel kernel base"
	for s in $order; do run_setting "$s"; done
done

echo "kcontend, 4 workers, 2 s, $rounds rounds: median operations per second"
printf '%-8s %12s %12s %8s\n' workload untraced locktop ratio
for m in $modes; do
	b=$(median <"$tmp/$m.base")
	k=$(median <"$tmp/$m.kernel")
	awk -v m="$m" -v b="$b" -v k="$k" 'BEGIN {
		printf "%-8s %12.0f %12.0f %8.3f\n", m, b, k, (b > 0 ? k / b : 0) }'
done
echo
echo "fcntl-pair -n $pairs, $rounds rounds: median ns per pair"
b=$(median <"$tmp/pair.base")
n=$(median <"$tmp/pair.nokernel")
k=$(median <"$tmp/pair.kernel")
printf '%-16s %10s %10s\n' setting ns/pair ratio
awk -v b="$b" -v n="$n" -v k="$k" 'BEGIN {
	printf "%-16s %10.1f %10.3f\n", "untraced", b, 1
	printf "%-16s %10.1f %10.3f\n", "no-kernel-locks", n, n / b
	printf "%-16s %10.1f %10.3f\n", "kernel locks", k, k / b
	printf "kernel probe on vs off: %+.1f ns per pair (%.3f)\n", k - n, k / n }'
