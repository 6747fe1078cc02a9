#!/usr/bin/env bash
# lockbench benchmarks: each comparison is measured side by side in one
# invocation and printed as a ratio. Nothing here asserts an absolute
# time; the figures depend on the machine.
#
#   bench/lockbench-bench.sh [LOCKBENCH] [--quick]
#
# LOCKBENCH defaults to build/workloads/lockbench. --quick runs a tenth of
# the loops (for a smoke run; the ratios get noisier).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lb=$top/build/workloads/lockbench
scale=1
for a in "$@"; do
	case $a in
	--quick) scale=10 ;;
	-h | --help)
		sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) lb=$a ;;
	esac
done
[ -x "$lb" ] || { echo "lockbench-bench: no lockbench at $lb; build first" >&2; exit 2; }
command -v jq >/dev/null || { echo "lockbench-bench: needs jq" >&2; exit 2; }

ncpu=$(nproc)
# run NAME ARGS...: one lockbench run; its JSON goes to $out/NAME.json.
out=$(mktemp -d "${TMPDIR:-/tmp}/lockbench-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT
run() {
	local name=$1
	shift
	printf '  %-34s' "$name ($*)" >&2
	"$lb" --json -s 1 --stuck-timeout 300 "$@" >"$out/$name.json" || {
		echo " FAILED (exit $?)" >&2
		exit 1
	}
	jq -r '"  \(.elapsed_s | .*1000|round/1000) s elapsed, \(.sys_s | .*1000|round/1000) s sys, \(.ops_per_s | round) ops/s"' \
		"$out/$name.json" >&2
}
f() { jq -r ".$2" "$out/$1.json"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }

echo "lockbench $("$lb" --version | cut -d' ' -f2) on $ncpu CPUs, kernel $(uname -r)"
echo

loops=$((2000 / scale))
echo "1. fcntl against robust mutex: -n 250 -l $loops -H 1000 (the tdbtorture experiment)"
run fcntl --lock fcntl -n 250 -l "$loops" -H 1000
run mutex --lock mutex -n 250 -l "$loops" -H 1000
printf '   elapsed fcntl/mutex = %sx   sys fcntl/mutex = %sx\n' \
	"$(ratio "$(f fcntl elapsed_s)" "$(f mutex elapsed_s)")" \
	"$(ratio "$(f fcntl sys_s)" "$(f mutex sys_s)")"
printf '   contended waits: fcntl %s, mutex %s; p99 wait fcntl %s us, mutex %s us\n' \
	"$(f fcntl contended)" "$(f mutex contended)" \
	"$(($(f fcntl wait_p99_ns) / 1000))" "$(($(f mutex wait_p99_ns) / 1000))"
echo "   (Samba tdbtorture on the reference machine: 6.8x elapsed, 7.7x sys)"
echo

loops=$((20000 / scale))
echo "2. pread/pwrite against lseek+read/write: -n 16 -l $loops -H 1000 --lock mutex"
run pread --io pread --lock mutex -n 16 -l "$loops" -H 1000
run lseek --io lseek --lock mutex -n 16 -l "$loops" -H 1000
printf '   ops/s pread/lseek = %sx   sys lseek/pread = %sx\n' \
	"$(ratio "$(f pread ops_per_s)" "$(f lseek ops_per_s)")" \
	"$(ratio "$(f lseek sys_s)" "$(f pread sys_s)")"
echo

loops=$((5000 / scale))
echo "3. spinlock against process count on $ncpu CPUs: -l $loops -H 16 --hold-us 2"
for n in 2 16 64; do
	run "spin-$n" --lock spin -n "$n" -l "$loops" -H 16 --hold-us 2
	run "mutex-$n" --lock mutex -n "$n" -l "$loops" -H 16 --hold-us 2
done
printf '   %5s %14s %14s %12s %14s\n' procs "spin ops/s" "mutex ops/s" spin/mutex "spin p99 wait"
for n in 2 16 64; do
	printf '   %5s %14.0f %14.0f %11sx %11s us\n' "$n" \
		"$(f "spin-$n" ops_per_s)" "$(f "mutex-$n" ops_per_s)" \
		"$(ratio "$(f "spin-$n" ops_per_s)" "$(f "mutex-$n" ops_per_s)")" \
		"$(($(f "spin-$n" wait_p99_ns) / 1000))"
done
printf '   spin ops/s at 16 vs 2 procs = %sx, at 64 vs 2 = %sx\n' \
	"$(ratio "$(f spin-16 ops_per_s)" "$(f spin-2 ops_per_s)")" \
	"$(ratio "$(f spin-64 ops_per_s)" "$(f spin-2 ops_per_s)")"
