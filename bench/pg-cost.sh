#!/usr/bin/env bash
# What tracing PostgreSQL costs it: pgbench's tps at 16 clients (-j 2,
# scale 1) untraced and under tracers, in alternating rounds so that
# machine noise hits all alike. Prints each round, the medians, their
# ratio to untraced (1 is free), the server's CPU time per transaction
# (its ratio too: what a CPU-bound server keeps), the tracer's own
# CPU time, and with bt-usdt the server's probe hits per transaction.
#
#   bench/pg-cost.sh [BUILD_DIR] [ROUNDS] [SECONDS]
#
# The tracers, in CONFIGS (space-separated; "locktop" alone unless set):
#   locktop       locktop -b -d 1: every probe, the server's own included
#   spin-always   ... with --spin-always: the spin sampler's events run
#                 all the time, not only after the tick met spinning
#   no-klock      ... with --no-kernel-locks
#   no-spin       ... with --spin-hz 0
#   no-both       ... with both
#   bt-usdt       bpftrace on the server's probes alone (the ones locktop
#                 attaches, counted): what their uprobes cost by themselves
# e.g. CONFIGS="locktop no-klock no-spin no-both bt-usdt".
#
# The cluster is the bench's own (tests/pglib.sh): initdb in a
# temporary directory, a Unix socket there, stopped on exit.
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
secs=${3:-10}
configs=${CONFIGS:-locktop}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
locktop=$build/tui/locktop
tmpdir=$(mktemp -d)
tracer=

skip() {
	echo "pg-cost: $*" >&2
	exit 77
}
fail() {
	echo "pg-cost: $*" >&2
	exit 1
}
end_jobs() {
	[ -z "$tracer" ] || stop_tracer
	kill $(jobs -p) 2>/dev/null || true
}
trap 'end_jobs; rm -rf "$tmpdir"' EXIT
. "$here/../tests/pglib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -x "$locktop" ] || skip "no $locktop"
pg_require
case " $configs " in
*" bt-usdt "*) command -v bpftrace >/dev/null || skip "no bpftrace" ;;
esac
pg_start
pg_bench -i -s 1 -q >"$tmpdir/init.log" 2>&1 || fail "pgbench -i failed"
cat >"$tmpdir/usdt.bt" <<BT
usdt:$pg_postgres:postgresql:lwlock__wait__start,
usdt:$pg_postgres:postgresql:lwlock__wait__done,
usdt:$pg_postgres:postgresql:lock__wait__start,
usdt:$pg_postgres:postgresql:lock__wait__done,
usdt:$pg_postgres:postgresql:deadlock__found { @n = count(); }
BT

# The server's CPU time so far in microseconds: the postmaster's own and
# its reaped children's (every backend of a finished round). What the
# probes cost in the server's threads (uprobes, syscall tracepoints, BPF
# programs) is in it, and other load on the machine is not.
server_us() {
	awk -v hz="$(getconf CLK_TCK)" \
		'{ printf "%.0f", ($14 + $15 + $16 + $17) * 1e6 / hz }' \
		"/proc/$(pg_postmaster_pid)/stat"
}

# One round: "TPS US N" with US the server's CPU time per transaction
# and N the transactions.
round() {
	local c0 c1
	c0=$(server_us)
	pg_bench -v -c 16 -j 2 -T "$secs" >"$tmpdir/bench.log" 2>&1 ||
		fail "pgbench failed: $(cat "$tmpdir/bench.log")"
	sleep 0.5 # the backends are reaped
	c1=$(server_us)
	awk -v c="$((c1 - c0))" '/^tps/ { tps = $3 }
		/^number of transactions actually processed/ { n = $NF }
		END { printf "%.1f %.1f %d\n", tps, c / n, n }' "$tmpdir/bench.log"
}

# start CONFIG: the tracer, in the background and attached; $tracer.
start() {
	local opts=()
	case $1 in
	bt-usdt)
		bpftrace "$tmpdir/usdt.bt" >"$tmpdir/bt.out" 2>&1 &
		tracer=$!
		wait_attaching "$tmpdir/bt.out" || fail "bpftrace did not attach"
		sleep 1.2 # its probes are in
		return
		;;
	no-klock) opts=(--no-kernel-locks) ;;
	no-spin) opts=(--spin-hz 0) ;;
	no-both) opts=(--no-kernel-locks --spin-hz 0) ;;
	spin-always) opts=(--spin-always) ;;
	locktop) ;;
	*) fail "no tracer $1" ;;
	esac
	"$locktop" -b -d 1 -o /dev/null "${opts[@]}" &
	tracer=$!
	wait_progs '^lt_usdt$' || fail "locktop did not attach"
	sleep 1.2 # its first statistics window is over
}

# The tracer's CPU time so far, in seconds (user and system).
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' \
		"/proc/$tracer/stat" 2>/dev/null || echo 0
}

printf '%-6s %16s' round untraced
for c in $configs; do printf ' %22s' "$c"; done
printf '\n%-6s %9s %6s' '' tps us/txn
for c in $configs; do printf ' %9s %6s %5s' tps us/txn cpu-s; done
echo
for r in $(seq "$rounds"); do
	read -r u us _ < <(round)
	echo "$u" >>"$tmpdir/untraced.tps"
	echo "$us" >>"$tmpdir/untraced.us"
	printf '%-6s %9.1f %6.1f' "$r" "$u" "$us"
	for c in $configs; do
		start "$c"
		c0=$(cpu_s)
		read -r t ts n < <(round)
		c1=$(cpu_s)
		stop_tracer
		# bpftrace's count of the server's probe hits, printed at its
		# exit: hits per transaction.
		[ "$c" != bt-usdt ] || awk -v n="$n" '$1 == "@n:" { print $2 / n }' \
			"$tmpdir/bt.out" >>"$tmpdir/hits"
		echo "$t" >>"$tmpdir/$c.tps"
		echo "$ts" >>"$tmpdir/$c.us"
		printf ' %9.1f %6.1f %5.2f' "$t" "$ts" "$(awk -v a="$c0" \
			-v b="$c1" 'BEGIN { print b - a }')"
	done
	echo
done
med() { median <"$tmpdir/$1"; }
printf '%-6s %9.1f %6.1f' median "$(med untraced.tps)" "$(med untraced.us)"
for c in $configs; do
	printf ' %9.1f %6.1f %5s' "$(med "$c.tps")" "$(med "$c.us")" ''
done
echo
# tps: traced over untraced; us/txn: untraced over traced (the share of
# the server's CPU left for its work, what a CPU-bound server keeps).
printf '%-6s %9s %6s' ratio 1 1
for c in $configs; do
	printf ' %9.3f %6.3f %5s' \
		"$(awk -v u="$(med untraced.tps)" -v t="$(med "$c.tps")" \
			'BEGIN { print t / u }')" \
		"$(awk -v u="$(med untraced.us)" -v t="$(med "$c.us")" \
			'BEGIN { print u / t }')" ''
done
echo
# The same per round, traced over the untraced run just before it, and
# the median of those: the server's state drifts from round to round
# (autovacuum, checkpoints), and a round's pair shares it.
printf '%-6s %9s %6s' paired 1 1
for c in $configs; do
	printf ' %9.3f %6.3f %5s' \
		"$(paste "$tmpdir/$c.tps" "$tmpdir/untraced.tps" |
			awk '{ print $1 / $2 }' | median)" \
		"$(paste "$tmpdir/untraced.us" "$tmpdir/$c.us" |
			awk '{ print $1 / $2 }' | median)" ''
done
echo
# What the server's probes cost at least: their hits per transaction,
# each a trap (bench/uprobe-floor.sh measures one here).
[ ! -s "$tmpdir/hits" ] ||
	printf 'uprobe hits per transaction (bt-usdt, median): %.1f\n' \
		"$(median <"$tmpdir/hits")"
