#!/usr/bin/env bash
# What on-CPU sampling for spinning costs a traced workload where
# nothing spins: lockbench --lock mutex and --lock fcntl, each run under
# locktop with sampling on (--spin-hz 997: the scheduler tick looks, the
# sampling events wait for spinning), always on (--spin-always: the
# events run all along), and off (--spin-hz 0), and off beside the floor
# of sampling (attach-floor --sample-hz 997: the same events with an
# empty program, what the events cost before any work), in rounds whose
# order turns. Prints each round, then the median elapsed time
# (lockbench's own) of each, their ratios to off, and what the spin
# probe itself did in the always-on runs (its runs and ns per run from
# the kernel's BPF statistics, median over the rounds).
#   spin-cost.sh [BUILD_DIR] [ROUNDS] [LOOPS]
# Loads BPF programs: run it under the shared lock.
set -eu
build=${1:-build}
rounds=${2:-9}
loops=${3:-30000}
locktop=$build/tui/locktop
lockbench=$build/workloads/lockbench
floor=$build/bench/attach-floor
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

# BACKEND: lockbench's elapsed seconds under locktop --spin-hz 0, with
# the empty sampler of attach-floor at 997 Hz.
run_floor() {
	local f
	"$floor" --sample-hz 997 >"$tmp/floor.out" &
	f=$!
	for _ in $(seq 100); do
		grep -q attached "$tmp/floor.out" && break
		sleep 0.1
	done
	grep -q attached "$tmp/floor.out" || { echo "spin-cost: no floor" >&2; exit 1; }
	run "$1" 0
	kill -INT "$f"
	wait "$f"
}

run() { # BACKEND HZ [OPTION]: lockbench's elapsed seconds under locktop
	"$locktop" --batch --json --delay 1 --spin-hz "$2" ${3:+"$3"} \
		--output "$tmp/lt.json" -- \
		"$lockbench" --lock "$1" -n 8 -l "$loops" -H 16 --hold-us 20 \
		--path "$tmp/table.tdb" --json | jq .elapsed_s
	[ "${3:-}" = --spin-always ] || return 0
	tail -n 1 "$tmp/lt.json" | jq -r '.probes.programs[] |
		select(.name == "spin") | "\(.runs) \(.ns_per_run)"' >>"$tmp/probe"
}

# One run of each, the order turning with the round.
one() { # BACKEND WHICH
	case $2 in
	on) run "$1" 997 >>"$tmp/on" ;;
	always) run "$1" 997 --spin-always >>"$tmp/always" ;;
	off) run "$1" 0 >>"$tmp/off" ;;
	floor) run_floor "$1" >>"$tmp/floor" ;;
	esac
}

printf '%-8s %6s %10s %10s %10s %10s\n' backend round "on (s)" \
	"always (s)" "off (s)" "floor (s)"
for backend in mutex fcntl; do
	: >"$tmp/on"
	: >"$tmp/always"
	: >"$tmp/off"
	: >"$tmp/floor"
	for r in $(seq "$rounds"); do
		case $((r % 4)) in
		1) order="on always off floor" ;;
		2) order="always off floor on" ;;
		3) order="off floor on always" ;;
		0) order="floor on always off" ;;
		esac
		for w in $order; do one "$backend" "$w"; done
		printf '%-8s %6d %10.3f %10.3f %10.3f %10.3f\n' "$backend" "$r" \
			"$(tail -n 1 "$tmp/on")" "$(tail -n 1 "$tmp/always")" \
			"$(tail -n 1 "$tmp/off")" "$(tail -n 1 "$tmp/floor")"
	done
	median <"$tmp/on" >"$tmp/on.$backend"
	median <"$tmp/always" >"$tmp/always.$backend"
	median <"$tmp/off" >"$tmp/off.$backend"
	median <"$tmp/floor" >"$tmp/floor.$backend"
	awk '{ print $1 }' "$tmp/probe" | median >"$tmp/runs.$backend"
	awk '{ print $2 }' "$tmp/probe" | median >"$tmp/ns.$backend"
	: >"$tmp/probe"
done
echo
printf '%-8s %8s %10s %8s %9s %8s %11s %11s %12s %8s\n' backend "on (s)" \
	"always (s)" "off (s)" "floor (s)" on/off always/off floor/off \
	"probe runs" "ns/run"
for backend in mutex fcntl; do
	awk -v b="$backend" -v a="$(cat "$tmp/on.$backend")" \
		-v w="$(cat "$tmp/always.$backend")" \
		-v o="$(cat "$tmp/off.$backend")" -v f="$(cat "$tmp/floor.$backend")" \
		-v r="$(cat "$tmp/runs.$backend")" \
		-v n="$(cat "$tmp/ns.$backend")" 'BEGIN {
		printf "%-8s %8.3f %10.3f %8.3f %9.3f %8.4f %11.4f %11.4f %12d %8.0f\n",
			b, a, w, o, f, a / o, w / o, f / o, r, n }'
done
