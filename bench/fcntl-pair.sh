#!/usr/bin/env bash
# What each tracer adds to one uncontended fcntl lock+unlock pair, side
# by side in one run: bench/fcntl-pair (one process, -n 1000000 pairs
# on one byte) untraced and under each tracer of overhead.sh (locktop,
# lt-user, bt-waits, bt-figs, floor, clock), with POSIX locks and with
# OFD locks.
# Nothing waits here, so this is the cost per lock and per unlock that
# a tracer puts on every call, beside the floors: what attaching alone
# costs (floor) and what one clock read per event costs (clock).
#
# Runs alternate so that machine noise hits all alike; the medians and
# the nanoseconds each tracer adds per pair are printed, and a last line
# compares locktop's figure with the clock floor's: a comparison, never
# a verdict (the script exits 0 either way). bpftrace's columns are left
# out without bpftrace.
#
#   bench/fcntl-pair.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
pairs=1000000
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
locktop=$build/tui/locktop
floor=$build/bench/attach-floor
pair=$build/bench/fcntl-pair
tmp=$(mktemp -d)
tracer=

end_with_cleanup

[ "$(id -u)" -eq 0 ] || { echo "fcntl-pair: needs root" >&2; exit 77; }
[ -x "$pair" ] || { echo "fcntl-pair: no $pair (build first)" >&2; exit 1; }
tracers=$(all_tracers)

# kind (posix or ofd) -> ns per pair
run_pair() {
	local ofd=
	[ "$1" = ofd ] && ofd=--ofd
	"$pair" -n "$pairs" $ofd -p "$tmp/lock" -j | jq -r .ns_per_pair
}

# Both kinds run under each tracer started, in turn first.
for k in posix ofd; do
	: >"$tmp/$k.base"
	for t in $tracers; do : >"$tmp/$k.$t"; done
done
for r in $(seq "$rounds"); do
	echo "round $r/$rounds" >&2
	kinds="posix ofd"
	[ $((r % 2)) = 0 ] && kinds="ofd posix"
	for k in $kinds; do run_pair "$k" >>"$tmp/$k.base"; done
	for t in $tracers; do
		start_tracer "$t"
		for k in $kinds; do run_pair "$k" >>"$tmp/$k.$t"; done
		stop_tracer
		sleep 0.5
	done
done

echo "fcntl-pair -n $pairs, $rounds rounds; median ns per pair, and ns added to untraced"
printf '%-8s %9s' lock untraced
for t in $tracers; do printf ' %9s' "$t"; done
echo
for k in posix ofd; do
	b=$(median <"$tmp/$k.base")
	printf '%-8s %9.1f' "$k" "$b"
	for t in $tracers; do
		m=$(median <"$tmp/$k.$t")
		printf ' %9.1f' "$m"
		awk -v m="$m" -v b="$b" 'BEGIN { printf "%.1f\n", m - b }' \
			>"$tmp/$k.$t.added"
	done
	echo
	printf '%-8s %9s' "  added" -
	for t in $tracers; do printf ' %+9.1f' "$(cat "$tmp/$k.$t.added")"; done
	echo
done

# locktop beside the clock floor, per kind: a figure, not an assertion.
case " $tracers " in *" locktop "*" clock "*) ;; *) exit 0 ;; esac
verdict=yes
detail=
for k in posix ofd; do
	lt=$(cat "$tmp/$k.locktop.added")
	cl=$(cat "$tmp/$k.clock.added")
	awk -v a="$lt" -v b="$cl" 'BEGIN { exit !(a <= b) }' || verdict=no
	detail="$detail${detail:+, }$k $(printf '%+.1f vs %+.1f' "$lt" "$cl")"
done
echo "locktop added no more than the clock floor added: $verdict ($detail ns per pair)"
