#!/usr/bin/env bash
# Sampled hold time agrees with hold time timed in full, in the same run.
# A busy file lock's uncontended holds on a quiet CPU are timed one time
# in 16 and the others estimated (holds_estimated); a second locktop
# with --exact-holds, tracing everything, times every hold of the same
# run. The estimate must be within 2% of the full timing, and both must
# lie where lockbench puts the hold: from inside its first call's return
# to its second call's start (hold_ns) and the two calls whole
# (hold_span_ns). The holds are long (100 us of work) so that each
# tracer's programs, which run inside the other's timed holds, weigh
# little. Usage: hold-sampling.sh LOCKTOP LOCKBENCH
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf

# case NAME BACKEND PROCS MIN_PCT: one lockbench run under both tracers;
# at least MIN_PCT of its holds must have been estimated.
case_run() {
	local name=$1 backend=$2 procs=$3 min_pct=$4 exact sampled
	"$locktop" record --exact-holds -o "$tmpdir/exact.rec" --interval 1 &
	exact=$!
	wait_attached "$exact" || fail "$name: the exact locktop did not attach"
	"$locktop" record -o "$tmpdir/sampled.rec" --interval 1 -- \
		"$lockbench" --lock "$backend" -n "$procs" -l $((20000 / procs)) \
		-H 16 --hold-us 100 --path "$tmpdir/table.tdb" --json \
		>"$tmpdir/lb.json" || fail "$name: lockbench under locktop failed"
	kill -INT "$exact"
	wait "$exact" || fail "$name: the exact locktop failed"
	jq -e '.check == "OK"' "$tmpdir/lb.json" >/dev/null ||
		fail "$name: lockbench's check failed"

	sum() {
		jq --arg f "$2" '[.intervals[].locks[] |
			select(.name | contains("table.tdb")) | .[$f]] |
			add // 0' "$tmpdir/$1.rec"
	}
	truth() { jq ".$1" "$tmpdir/lb.json"; }
	local acq est
	acq=$(truth acquires)
	within "$name: acquisitions, sampled" "$(sum sampled acquires)" "$acq" 0
	within "$name: acquisitions, exact" "$(sum exact acquires)" "$acq" 0
	[ "$(sum exact holds_estimated)" = 0 ] ||
		fail "$name: --exact-holds estimated $(sum exact holds_estimated) holds"
	# The sampling has to have happened for the comparison to mean
	# anything. A hold granted while another task waits for the CPU is
	# timed in full, so a busy machine leaves fewer estimated: one
	# process alone is estimated most of the time, two less.
	est=$(sum sampled holds_estimated)
	echo "$name: $est of $acq holds estimated"
	[ "$est" -ge $((acq * min_pct / 100)) ] ||
		fail "$name: only $est of $acq holds were estimated"
	awk -v n="$name" -v s="$(sum sampled hold_ns)" \
		-v e="$(sum exact hold_ns)" -v lo="$(truth hold_ns)" \
		-v hi="$(truth hold_span_ns)" 'BEGIN {
		d = (s - e) / e * 100
		printf "%s: hold sampled %.0f, exact %.0f (%+.2f%%), lockbench %.0f to %.0f\n", n, s, e, d, lo, hi
		exit !(d >= -2 && d <= 2 && s >= lo && s <= hi && e >= lo && e <= hi) }' ||
		fail "$name: sampled hold time is off"
}

case_run "fcntl, 1 process" fcntl 1 20
case_run "ofd, 2 processes" ofd 2 1
echo "ok"
