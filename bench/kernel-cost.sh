#!/usr/bin/env bash
# What tracing kernel locks costs, side by side in one run, in three
# settings: untraced, locktop --no-kernel-locks, and locktop with the
# kernel lock probe:
#  - kcontend's three workloads (append: one file's i_rwsem; mmap: a
#    process's mmap_lock; dir: a directory's i_rwsem), 4 workers for
#    2 s each: operations per second;
#  - bench/fcntl-pair (one process, uncontended POSIX lock+unlock
#    pairs): ns per pair.
#
# Each round runs the three settings in another of their six orders, so
# that over six rounds each comes first, second and last alike, and
# machine noise and drift hit all three the same. Per workload it
# prints the medians, the ratios of the medians, and the median of the
# per-round ratios of the two locktop settings with their interquartile
# range: the kernel probe's own share, beside the noise. Last, the
# kernel probe's own CPU time as the kernel's BPF statistics measured it
# (locktop's "kernel" program object), in percent of the machine. A
# comparison, never a verdict: the script exits 0 either way.
#
# It raises its own priority (nice -10) so that niced builds sharing the
# machine disturb it less; every setting runs at that priority.
#
#   bench/kernel-cost.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-6}
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
renice -n -10 -p $$ >/dev/null 2>&1 || true
modes="append mmap dir"
settings="base nokernel kernel"
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
# its JSON into $2. It is ready once it has read its first interval:
# every probe is in then (the pread probe's last program attaches
# seconds before the kernel lock probe and the sampling are in).
start_locktop() {
	local opt=() i
	[ "$1" = nokernel ] && opt=(--no-kernel-locks)
	"$locktop" -b -j -d 1 -o "$2" "${opt[@]}" &
	tracer=$!
	wait_progs '^lt_pwritev2_x$' ||
		{ echo "kernel-cost: locktop did not attach" >&2; exit 1; }
	for i in $(seq 300); do
		[ -s "$2" ] && break
		sleep 0.1
	done
	[ -s "$2" ] || { echo "kernel-cost: locktop read nothing" >&2; exit 1; }
	sleep 0.5 # past the first sampling window of the BPF statistics
}

# One setting of round $2: base (untraced), nokernel or kernel. Each
# figure goes on line $2 of its file, for the per-round ratios.
run_setting() {
	local m
	[ "$1" = base ] || start_locktop "$1" "$tmp/lt.$1.$2.json"
	for m in $modes; do echo "$2 $(run_work "$m")" >>"$tmp/$m.$1"; done
	echo "$2 $(run_pair)" >>"$tmp/pair.$1"
	[ "$1" = base ] || stop_tracer
	sleep 0.5
}

# A first run of each, not counted: a new file and directory, cold
# caches.
for m in $modes; do run_work "$m" >/dev/null; done
run_pair >/dev/null

# The six orders of the three settings.
orders=("base nokernel kernel" "kernel base nokernel" "nokernel kernel base"
	"base kernel nokernel" "nokernel base kernel" "kernel nokernel base")
for r in $(seq "$rounds"); do
	order=${orders[$(((r - 1) % 6))]}
	echo "round $r/$rounds: $order" >&2
	for s in $order; do run_setting "$s" "$r"; done
done

med() { awk '{ print $2 }' "$1" | median; }
# The per-round ratios a/b of two settings' files, one a line.
ratios() {
	join <(sort -k1,1 "$1") <(sort -k1,1 "$2") |
		awk '$3 > 0 { printf "%.6f\n", $2 / $3 }'
}
# The p-th fraction (0..1) of the numbers on stdin.
quantile() {
	sort -g | awk -v p="$1" '{ a[NR] = $1 } END {
		i = int(p * (NR - 1) + 1.5); print a[i < 1 ? 1 : i] }'
}
# One table row: a label, the three medians, their ratios, and the
# per-round kernel/nokernel ratio with its interquartile range.
row() {
	local f=$1 label=$2 fmt=$3 b n k pr lo hi
	b=$(med "$tmp/$f.base") n=$(med "$tmp/$f.nokernel")
	k=$(med "$tmp/$f.kernel")
	ratios "$tmp/$f.kernel" "$tmp/$f.nokernel" >"$tmp/$f.pr"
	pr=$(median <"$tmp/$f.pr")
	lo=$(quantile 0.25 <"$tmp/$f.pr") hi=$(quantile 0.75 <"$tmp/$f.pr")
	awk -v l="$label" -v f="$fmt" -v b="$b" -v n="$n" -v k="$k" \
		-v pr="$pr" -v lo="$lo" -v hi="$hi" 'BEGIN {
		printf "%-8s " f " " f " " f " %7.3f %7.3f %7.3f   %.3f (%.3f-%.3f)\n",
			l, b, n, k, n / b, k / b, k / n, pr, lo, hi }'
}

echo "kcontend, 4 workers, 2 s, $rounds rounds: median operations per second"
echo "(nk: locktop --no-kernel-locks, k: locktop with the kernel lock probe;"
echo " per round: the median of the rounds' k/nk, and their quartiles)"
printf '%-8s %10s %10s %10s %7s %7s %7s   %s\n' workload untraced nk k \
	nk/base k/base k/nk 'per round k/nk'
for m in $modes; do row "$m" "$m" '%10.0f'; done
echo
echo "fcntl-pair -n $pairs, $rounds rounds: median ns per pair (less is better)"
printf '%-8s %10s %10s %10s %7s %7s %7s   %s\n' '' untraced nk k \
	nk/base k/base k/nk 'per round k/nk'
row pair pair '%10.1f'

# The kernel probe's own CPU time over each kernel session, from
# locktop's summary: runs, cost per run, and the share of all CPUs.
echo
cpus=$(nproc)
for f in "$tmp"/lt.kernel.*.json; do
	tail -n 1 "$f" | jq -r --argjson c "$cpus" '
		(.probes.programs[] | select(.name == "kernel")) as $k |
		"\($k.runs) \($k.run_ns) \(.elapsed_s) \($c)"'
done | awk '{ runs += $1; ns += $2; s += $3; c = $4 } END {
	if (!s) exit
	printf "kernel lock probe, %d sessions: %.0f runs/s, %.0f ns per run, " \
		"%.3f%% of %d CPUs (%.3f%% of one)\n", NR, runs / s,
		runs ? ns / runs : 0, ns / (s * 1e9 * c) * 100, c,
		ns / (s * 1e9) * 100 }'
