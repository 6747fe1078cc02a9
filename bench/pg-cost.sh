#!/usr/bin/env bash
# What tracing PostgreSQL costs it: pgbench's tps at 16 clients (-j 2,
# scale 1) untraced and under locktop (-b -d 1, every probe, the
# server's own lock probes included), in alternating rounds so that
# machine noise hits both alike. Prints each round, the medians and
# their ratio, traced over untraced (1 is free).
#
#   bench/pg-cost.sh [BUILD_DIR] [ROUNDS] [SECONDS]
#
# The cluster is the bench's own (tests/pglib.sh): initdb in a
# temporary directory, a Unix socket there, stopped on exit.
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
secs=${3:-10}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
locktop=$build/tui/locktop
tmpdir=$(mktemp -d)

skip() {
	echo "pg-cost: $*" >&2
	exit 77
}
fail() {
	echo "pg-cost: $*" >&2
	exit 1
}
end_jobs() { kill $(jobs -p) 2>/dev/null || true; }
trap 'end_jobs; rm -rf "$tmpdir"' EXIT
. "$here/../tests/pglib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -x "$locktop" ] || skip "no $locktop"
pg_require
pg_start
pg_bench -i -s 1 -q >"$tmpdir/init.log" 2>&1 || fail "pgbench -i failed"

# One round's tps.
tps() {
	pg_bench -c 16 -j 2 -T "$secs" 2>&1 |
		awk '/^tps/ { print $3 }'
}

printf '%-6s %12s %12s\n' round untraced traced
for r in $(seq "$rounds"); do
	u=$(tps)
	"$locktop" -b -d 1 -o /dev/null &
	tracer=$!
	wait_progs '^lt_usdt$' || fail "locktop did not attach"
	sleep 1.2 # its first statistics window is over
	t=$(tps)
	stop_tracer
	echo "$u" >>"$tmpdir/untraced"
	echo "$t" >>"$tmpdir/traced"
	printf '%-6s %12.1f %12.1f\n' "$r" "$u" "$t"
done
mu=$(median <"$tmpdir/untraced")
mt=$(median <"$tmpdir/traced")
printf '%-6s %12.1f %12.1f\n' median "$mu" "$mt"
awk -v u="$mu" -v t="$mt" 'BEGIN { printf "ratio traced/untraced %.3f\n", t / u }'
