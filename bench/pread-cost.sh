#!/usr/bin/env bash
# What each tracer adds to one pread, side by side in one run:
# bench/pread-call untraced and under locktop (its defaults), locktop
# --no-io (lt-noio: the I/O probes left out), bpftrace keeping pread's
# and pwrite's calls, bytes and time per file descriptor (bt-io,
# bench/pread-figures.bt), and the floors: an empty program on every
# event locktop attaches to (floor) and the same reading the clock once
# (clock). Two kinds of call: a pread of one open file (one), and an
# open, a pread and a close of one of 32 files in turn (open32), the
# way smbd reads its peers' messaging lock files inside its share mode
# lock, where each file is new to a tracer's per-thread cache.
#
# Rounds alternate so that machine noise hits all alike; the medians
# and the nanoseconds each tracer adds per call are printed: figures,
# never a verdict (the script exits 0 either way). bt-io is left out
# without bpftrace.
#
#   bench/pread-cost.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
calls=400000
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
locktop=$build/tui/locktop
floor=$build/bench/attach-floor
prog=$build/bench/pread-call
tmp=$(mktemp -d)
tracer=

end_with_cleanup

[ "$(id -u)" -eq 0 ] || { echo "pread-cost: needs root" >&2; exit 77; }
[ -x "$prog" ] || { echo "pread-cost: no $prog (build first)" >&2; exit 1; }
if [ -n "${TRACERS:-}" ]; then
	tracers=$TRACERS
elif command -v bpftrace >/dev/null; then
	tracers="locktop lt-noio bt-io floor clock"
else
	tracers="locktop lt-noio floor clock"
fi
all_kinds="one open32"

# kind -> ns per call
run_kind() {
	local args=
	[ "$1" = open32 ] && args="--files 32 -n $((calls / 4))" || args="-n $calls"
	"$prog" $args -j | jq -r .ns_per_call
}

micro_rounds "$rounds" "$all_kinds" run_kind

echo "pread-call, $rounds rounds; median ns per call (one: a pread; open32: an open, a pread and a close), and ns added to untraced"
micro_table "$all_kinds" call
