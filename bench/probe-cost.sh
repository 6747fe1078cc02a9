#!/usr/bin/env bash
# The probes' cost per event in steady state, from the kernel's BPF
# statistics, side by side in one run with three references on the same
# events: an empty program (what the statistics charge for nothing: the
# dispatch and their own two clock reads), the empty program reading the
# kernel clock once (the least any tracer that times a wait pays), and
# the bpftrace script that sums futex and fcntl wait time per lock
# (bench/futex-fcntl-wait.bt).
#
# Each phase turns kernel.bpf_stats_enabled on for the whole of one
# lockbench run (-n 64) after a warm-up run, and puts it back after.
# An event is one futex call (mutex) or one fcntl lock call (fcntl); ns
# per event sums every program of that tracer that ran. The fcntl calls
# are lockbench's own count (a try, the blocking call a refused try
# leads to, and the unlock), since locktop has no probe on their return.
# Phases alternate over ROUNDS rounds and the medians are printed; then,
# per probe, each of locktop's programs with its own ns per run. With
# BEFORE_BUILD, a second locktop (an earlier tree's, say) runs in the
# same rounds as the column `before`, so that a change is judged against
# what it replaced on the same machine at the same time.
#
#   bench/probe-cost.sh [BUILD_DIR] [ROUNDS] [BEFORE_BUILD]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
before=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
lockbench=$build/workloads/lockbench
locktop=$build/tui/locktop
[ "$(id -u)" -eq 0 ] || { echo "probe-cost: needs root" >&2; exit 77; }
command -v bpftool >/dev/null || { echo "probe-cost: needs bpftool" >&2; exit 77; }
have_bt=0
command -v bpftrace >/dev/null && have_bt=1
tmp=$(mktemp -d)
was=$(sysctl -n kernel.bpf_stats_enabled)
tracer=
cleanup() {
	[ -n "$tracer" ] && kill -INT "$tracer" 2>/dev/null
	wait 2>/dev/null || true
	sysctl -qw kernel.bpf_stats_enabled="$was"
	rm -rf "$tmp"
}
trap cleanup EXIT

# The empty programs, on the events each backend's probes see; then the
# same with one clock read each, the least a tracer that times anything
# pays (the comparison keeps the read from being optimised away).
cat >"$tmp/empty-mutex.bt" <<'EOF'
tracepoint:syscalls:sys_enter_futex { }
tracepoint:syscalls:sys_exit_futex { }
EOF
cat >"$tmp/empty-fcntl.bt" <<'EOF'
tracepoint:filelock:posix_lock_inode { }
EOF
for b in mutex fcntl; do
	sed 's/{ }/{ if (nsecs == 0) { @never = 1; } }/' "$tmp/empty-$b.bt" \
		>"$tmp/clock-$b.bt"
done

# "name run_cnt run_time_ns" for each loaded program matching $1, sorted.
# Phases run one tracer at a time, so names tell them apart.
each() {
	bpftool prog show -j 2>/dev/null | jq -r --arg n "$1" '
		.[] | select((.name // "") | test($n)) |
		"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' | sort
}

# run_cnt and run_time_ns summed over the programs matching $1.
prog_sum() {
	each "$1" | awk '{ n += $2; t += $3 } END { print n + 0, t + 0 }'
}

# Runs of the programs whose names match $1: the calls.
calls_of() {
	prog_sum "$1" | cut -d' ' -f1
}

# The programs a tracer loads, by name.
ours() {
	case $1 in
	locktop | before) echo '^lt_(futex|futex2|fcntl|posix|flock|lock_signal|fork|exit|pread|pwrite)' ;;
	*) echo 'futex|fcntl|posix_lock' ;;
	esac
}

start() {	# tracer backend
	case $1 in
	locktop) "$locktop" -b -d 1 -o /dev/null & ;;
	before) "$before/tui/locktop" -b -d 1 -o /dev/null & ;;
	empty | clock) bpftrace "$tmp/$1-$2.bt" >/dev/null 2>&1 & ;;
	bpftrace) bpftrace "$here/futex-fcntl-wait.bt" >/dev/null 2>&1 & ;;
	esac
	tracer=$!
	if [ "$1" = locktop ] || [ "$1" = before ]; then
		wait_progs '^lt_pwritev2_x$' # its last object, attached last
	else
		wait_progs "$(ours "$1")"
	fi
	sleep 1
}

stop() {
	stop_tracer
	sleep 0.3
}

# One phase: ns per event of tracer $1 under backend $2.
phase() {
	local loops=2000 pattern n0 n1 t0 t1 c0 c1
	[ "$2" = mutex ] && loops=10000
	case $1:$2 in
	locktop:mutex | before:mutex) pattern='^lt_futex_enter$' ;;
	*:mutex) pattern='^sys_enter_futex$' ;;
	*:fcntl) pattern= ;;
	esac
	start "$1" "$2"
	"$lockbench" --lock "$2" -n 64 -l 200 -H 1000 --path "$tmp/t.tdb" >/dev/null
	sysctl -qw kernel.bpf_stats_enabled=1
	read -r n0 t0 < <(prog_sum "$(ours "$1")")
	c0=0
	[ -z "$pattern" ] || c0=$(calls_of "$pattern")
	each "$(ours "$1")" >"$tmp/each0"
	"$lockbench" --lock "$2" -n 64 -l "$loops" -H 1000 --path "$tmp/t.tdb" \
		--json >"$tmp/lb.json"
	read -r n1 t1 < <(prog_sum "$(ours "$1")")
	if [ -n "$pattern" ]; then
		c1=$(calls_of "$pattern")
	else
		c1=$(jq '2 * .acquires + .contended' "$tmp/lb.json")
	fi
	each "$(ours "$1")" >"$tmp/each1"
	# Each program's own ns per run, this round, for the per-probe table.
	join "$tmp/each0" "$tmp/each1" | awk -v tag="$1:$2" '$4 - $2 > 0 {
		printf "%s %s %d %.0f\n", tag, $1, $4 - $2, ($5 - $3) / ($4 - $2) }' \
		>>"$tmp/per-prog"
	sysctl -qw kernel.bpf_stats_enabled="$was"
	stop
	awk -v n=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN {
		if (n > 0) printf "%.0f\n", t / n; else print "nan" }'
}

cols="locktop${before:+ before} empty clock bpftrace"
printf '%-8s' backend
for t in $cols; do printf ' %12s' "$t"; done
printf '   (ns per event, median of %d)\n' "$rounds"
for backend in mutex fcntl; do
	for t in $cols; do : >"$tmp/$t"; done
	for _ in $(seq "$rounds"); do
		phase locktop "$backend" >>"$tmp/locktop"
		[ -n "$before" ] && phase before "$backend" >>"$tmp/before"
		if [ $have_bt = 1 ]; then
			phase empty "$backend" >>"$tmp/empty"
			phase clock "$backend" >>"$tmp/clock"
			phase bpftrace "$backend" >>"$tmp/bpftrace"
		fi
	done
	printf '%-8s' "$backend"
	for t in $cols; do printf ' %12s' "$(median <"$tmp/$t")"; done
	echo
done

# Per probe: each of locktop's programs that ran, its runs in the last
# round and the median of its ns per run over the rounds (and before's).
printf '\n%-8s %-18s %10s %10s%s   (locktop, each program)\n' backend \
	program runs ns/run "${before:+ $(printf '%10s' before)}"
for backend in mutex fcntl; do
	for prog in $(awk -v t="locktop:$backend" '$1 == t { print $2 }' \
		"$tmp/per-prog" | sort -u); do
		runs=$(awk -v t="locktop:$backend" -v p="$prog" \
			'$1 == t && $2 == p { r = $3 } END { print r }' "$tmp/per-prog")
		ns=$(awk -v t="locktop:$backend" -v p="$prog" \
			'$1 == t && $2 == p { print $4 }' "$tmp/per-prog" | median)
		printf '%-8s %-18s %10s %10s' "$backend" "$prog" "$runs" "$ns"
		[ -n "$before" ] && printf ' %10s' "$(awk -v t="before:$backend" \
			-v p="$prog" '$1 == t && $2 == p { print $4 }' \
			"$tmp/per-prog" | median)"
		echo
	done
done
