#!/usr/bin/env bash
# bench/servers.sh works: a --quick run on one server under locktop,
# bpftrace doing locktop's per-event work (bt-same, where bpftrace is
# installed), the empty programs and none (untraced again) prints its
# table whole (a rounds row, the loads a fast phase of the host left
# out, the untraced figures, one row per tracer with a ratio and its
# interval for throughput and for CPU per operation, the rounds the
# goal would take), locktop's programs with their ns per run, the
# programs' time per operation of locktop and of the empty programs as
# a share of the server's CPU per operation, and each program's ns per
# run under both builds with --before.
# Usage: bench-servers.sh BUILD_DIR [SERVER]
. "$(dirname "$0")/lib.sh"
build=$1 server=${2:-slapd}
bench=$(dirname "$0")/../bench
require_bpf

tracers="locktop floor none before"
! command -v bpftrace >/dev/null || tracers="locktop bt-same floor none before"
rc=0
# The build against itself as --before: its tracer, and the statistics
# of both side by side.
bash "$bench/servers.sh" --quick --fast 0 --servers "$server" \
	--tracers "${tracers// /,}" --before "$build" --stats-rounds 1 \
	"$build" >"$tmpdir/out" 2>"$tmpdir/err" || rc=$?
cat "$tmpdir/out"
[ "$rc" != 77 ] || skip "$(tail -n 1 "$tmpdir/err")"
[ "$rc" = 0 ] || { cat "$tmpdir/err" >&2; fail "servers.sh ended with $rc"; }

row() { awk -v r="$1" '$1 == r' "$tmpdir/out"; }
[ "$(row server | awk 'NR == 1 { print $2 }')" = "$server" ] ||
	fail "no column for $server"
row rounds | grep -qE '^rounds +2$' || fail "not 2 rounds: $(row rounds)"
# Two rounds of the tracers' blocks and the untraced ones (first, after
# every second tracer, last): none left out with --fast 0, which keeps
# every round's ratio.
n=$(wc -w <<<"$tracers")
loads=$((2 * (n + 1 + (n + 1) / 2)))
grep -qE "^left out +0 of $loads\$" "$tmpdir/out" ||
	fail "no count of the loads left out: $(grep '^left' "$tmpdir/out")"
row untraced | grep -qE '^untraced +[0-9]+/s [0-9.]+us/op$' ||
	fail "no untraced figures: $(row untraced)"
for t in $tracers; do
	row "$t" | grep -qE "^$t +[0-9]+\.[0-9]{3}\+-[0-9.]+ +[0-9]+\.[0-9]{3}\+-[0-9.]+$" ||
		fail "no ratios for $t: $(row "$t")"
done
grep -qE "^$server +lt_[a-z0-9_]+ +[0-9]+ +[0-9]+ +[0-9.]+$" "$tmpdir/out" ||
	fail "no program's ns per run"
grep -qE "^$server +all +[0-9]+ +[0-9]+ +[0-9.]+$" "$tmpdir/out" ||
	fail "no total of the programs"
grep -qE "^$server +server [0-9.]+ us/op; locktop itself" "$tmpdir/out" ||
	fail "no collector CPU"
gone
grep -qE "^for \+-2% +[0-9]+ rounds \(sd [0-9.]+%\)$" "$tmpdir/out" ||
	fail "no rounds for the goal: $(grep '^for' "$tmpdir/out")"
grep -qE "^$server +[0-9.]+us +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+%$" \
	"$tmpdir/out" || fail "no share of the server's CPU per operation"
grep -qE "^$server +all +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]{3} +[0-9.]+-[0-9.]+ +1$" \
	"$tmpdir/out" || fail "no ns per run beside --before's"
