#!/usr/bin/env bash
# What each tracer adds to one uncontended fcntl lock+unlock pair, side
# by side in one run: bench/fcntl-pair (one process, -n 1000000 pairs
# on one byte) untraced and under each tracer of overhead.sh (locktop,
# lt-user, bt-waits, bt-figs, floor, clock), with POSIX locks and with
# OFD locks, and with POSIX locks cycling over 4096 ranges (posix-4k):
# a store like tdb, whose record locks move, meets a new range on most
# calls, which then misses every cache a tracer keeps per thread.
# Nothing waits here, so this is the cost per lock and per unlock that
# a tracer puts on every call, beside the floors: what attaching alone
# costs (floor) and what one clock read per event costs (clock).
#
# Runs alternate so that machine noise hits all alike (micro_rounds in
# lib.sh: an untraced run after each tracer's); the medians and
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

all_kinds="posix ofd posix-4k"

# kind (posix, ofd or posix-4k) -> ns per pair
run_pair() {
	local args=
	case $1 in
	ofd) args=--ofd ;;
	posix-4k) args="--offsets 4096" ;;
	esac
	"$pair" -n "$pairs" $args -p "$tmp/lock" -j | jq -r .ns_per_pair
}

micro_rounds "$rounds" "$all_kinds" run_pair

echo "fcntl-pair -n $pairs, $rounds rounds; median ns per pair, and ns added to untraced"
micro_table "$all_kinds" lock

# locktop beside the clock floor and beside the wait-sum bpftrace
# script, per kind: figures, not assertions.
compare() {
	local other=$1 what=$2 verdict=yes detail= k lt ot
	case " $tracers " in *" locktop "*" $other "*) ;; *) return 0 ;; esac
	for k in $all_kinds; do
		lt=$(cat "$tmp/$k.locktop.added")
		ot=$(cat "$tmp/$k.$other.added")
		awk -v a="$lt" -v b="$ot" 'BEGIN { exit !(a <= b) }' || verdict=no
		detail="$detail${detail:+, }$k $(printf '%+.1f vs %+.1f' "$lt" "$ot")"
	done
	echo "locktop added no more than $what added: $verdict ($detail ns per pair)"
}
compare clock "the clock floor"
compare bt-waits "the wait-sum bpftrace script (bt-waits)"
