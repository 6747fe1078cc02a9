#!/usr/bin/env bash
# Spinning seen by on-CPU sampling: spin rows named after the lock's file
# or program, one row for every process that spins on a shared lock,
# sched_yield counted exactly per call site, nothing left after exit.
# Usage: spin.sh LOCKTOP LOCKBENCH SPINNER YIELDER MODE
#   MODE spin-N: lockbench --lock spin with N workers;
#   adaptive: lockbench --lock adaptive; private: spinner and yielder;
#   record: locktop record and diff of lockbench --lock spin;
#   quiet: lockbench --lock mutex, where nothing spins: the sampling
#   events never run, only the scheduler tick looks.
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2 spinner=$3 yielder=$4 mode=$5
require_bpf

# The default rate, 997 samples a second on each CPU.
hz=997
# Two spinners on two CPUs spin little: a few hundred samples at the
# default rate, whose count alone varies by several percent. Five times
# the rate makes the comparison one of the estimate, not of chance.
[ "$mode" = spin-2 ] && hz=4999

# Spin rows of the final object whose name ends with $1's pattern.
spin_rows() {
	jq -c --arg s "$1" '[.locks[] | select(.kind == "spin" and
		(.name | test($s)))]' <<<"$final"
}
sum() { jq "map(.$1) | add // 0" <<<"$2"; }

# The sampled spin time against the spinners' own CPU clocks: within
# 10% (some thousand samples), or within $3%.
compare() {
	within "spin time" "$1" "$2" "${3:-10}"
}

no_leftovers() {
	[ -z "$(our_progs)" ] || fail "programs left after exit: $(our_progs)"
	if /usr/sbin/bpftool perf list 2>/dev/null | grep -q "lt_spin"; then
		fail "perf events left after exit"
	fi
}

lockbench_run() {
	"$locktop" --batch --json --delay 0.5 --spin-hz "$hz" \
		--output "$tmpdir/lt.json" -- \
		"$lockbench" "$@" -H 4 --hold-us 20 \
		--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" ||
		fail "lockbench under locktop failed"
	jq -e '.check == "OK"' "$tmpdir/lb.json" >/dev/null ||
		fail "lockbench's check failed"
	final=$(tail -n 1 "$tmpdir/lt.json")
	jq -c '{elapsed_s, spin_cpu_ns, contended}' "$tmpdir/lb.json"
	awk -v e="$(jq .elapsed_s "$tmpdir/lb.json")" 'BEGIN { exit !(e >= 2) }' ||
		fail "the run was shorter than 2 s"
}

case $mode in
spin-*)
	n=${mode#spin-}
	lockbench_run --lock spin -n "$n" -l $((240000 / n))
	rows=$(spin_rows 'table\.tdb\+0x[0-9a-f]+$')
	[ "$(jq length <<<"$rows")" -ge 1 ] ||
		fail "no spin row named after the table file: $final"
	compare "$(sum wait_ns "$rows")" "$(jq .spin_cpu_ns "$tmpdir/lb.json")"
	top=$(jq -c 'max_by(.wait_ns)' <<<"$rows")
	[ "$(jq '.pids | length' <<<"$top")" -ge 2 ] ||
		fail "the busiest spin lock is not one row of several processes: $top"
	[ "$(jq .samples <<<"$top")" -gt 100 ] || fail "too few samples: $top"
	# The tick met the spinning and the sampling events ran from then
	# on: for most of the run, and still at its end.
	jq -e --argjson e "$(jq .elapsed_s "$tmpdir/lb.json")" \
		'.spin_sampler == "on" and .spin_sampler_s > $e / 2' \
		<<<"$final" >/dev/null ||
		fail "the sampler did not run: $(jq -c '[.spin_sampler, .spin_sampler_s]' <<<"$final")"
	echo "busiest: $(jq -c '{name, samples, wait_ns, pids: (.pids | length)}' <<<"$top")"
	# The busiest chain, by its offset in the table file.
	off=$(jq '.locks | max_by(.spin_cpu_ns) | .offset' "$tmpdir/lb.json")
	suffix=$(printf 'table.tdb+0x%x' "$off")
	jq -e --arg s "$suffix" 'map(select(.name | endswith($s))) | length == 1' \
		<<<"$rows" >/dev/null ||
		fail "lockbench's busiest lock ($suffix) has no spin row: $rows"
	;;
quiet)
	lockbench_run --lock mutex -n 4 -l 40000
	# (sched_yield call sites may show: the sanitizers' runtime yields.)
	sampled=$(jq -c 'map(select(.samples > 0))' <<<"$(spin_rows .)")
	[ "$(jq length <<<"$sampled")" -eq 0 ] ||
		fail "spin samples where nothing spins: $sampled"
	# Every interval only ticked; the events ran for the moment between
	# their attachment and their stop, if at all.
	jq -s -e 'length >= 3 and all(.[]; .spin_sampler == "tick") and
		.[-1].spin_sampler_s < 0.05' "$tmpdir/lt.json" >/dev/null ||
		fail "the sampler ran where nothing spins: $(jq -c '[.spin_sampler, .spin_sampler_s]' "$tmpdir/lt.json" | uniq -c)"
	echo "sampler: $(jq -r .spin_sampler "$tmpdir/lt.json" | uniq -c | xargs), $(jq .spin_sampler_s <<<"$final") s on"
	;;
adaptive)
	lockbench_run --lock adaptive -n 6 -l 40000
	spin=$(spin_rows 'table\.tdb\+0x[0-9a-f]+$')
	[ "$(jq length <<<"$spin")" -ge 1 ] || fail "no spin rows: $final"
	futex=$(jq -c '[.locks[] | select(.kind == "futex" and
		(.name | test("table\\.tdb\\+0x")))]' <<<"$final")
	[ "$(jq length <<<"$futex")" -ge 1 ] || fail "no futex rows: $final"
	# The same lock, spun on and slept on, has one name in both kinds.
	both=$(jq -n --argjson a "$spin" --argjson b "$futex" \
		'[$a[].name] - ([$a[].name] - [$b[].name]) | length')
	[ "$both" -ge 1 ] || fail "no lock is named alike as spin and futex"
	echo "locks both spun and slept on: $both"
	;;
record)
	# locktop record: the spin rows, their samples and spin time, in the
	# record and through locktop diff, against lockbench's own clocks.
	"$locktop" record -o "$tmpdir/spin.rec" --interval 0.5 --spin-hz "$hz" -- \
		"$lockbench" --lock spin -n 8 -l 30000 -H 4 --hold-us 20 \
		--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" ||
		fail "lockbench under locktop record failed"
	jq -e '.check == "OK"' "$tmpdir/lb.json" >/dev/null ||
		fail "lockbench's check failed"
	truth=$(jq .spin_cpu_ns "$tmpdir/lb.json")
	rows=$(jq -c '[.final.locks[] | select(.kind == "spin" and
		(.key | test("table\\.tdb\\+0x[0-9a-f]+$")))]' "$tmpdir/spin.rec")
	[ "$(jq length <<<"$rows")" -ge 1 ] ||
		fail "no spin row named after the table file in the record"
	samples=$(sum samples "$rows")
	echo "record: samples $samples, spin time $(sum wait_ns "$rows"), truth $truth"
	# Each sample stands for one period of the CPU clock: the samples
	# alone, and the spin time, estimate lockbench's spinning.
	compare "$(awk -v n="$samples" -v h="$hz" 'BEGIN { printf "%.0f", n * 1e9 / h }')" \
		"$truth"
	compare "$(sum wait_ns "$rows")" "$truth"
	jq -e '([.intervals[].locks[] | select(.kind == "spin") | .samples] | add) ==
		([.final.locks[] | select(.kind == "spin") | .samples] | add) and
		([.intervals[].kinds.spin.samples // 0] | add) == .final.kinds.spin.samples and
		.final.kinds.spin.wait_ns > 0' "$tmpdir/spin.rec" >/dev/null ||
		fail "the record's spin samples do not add up: $(jq -c .final.kinds.spin "$tmpdir/spin.rec")"
	"$locktop" diff --json "$tmpdir/spin.rec" "$tmpdir/spin.rec" >"$tmpdir/diff.json" ||
		fail "self-diff exited $?"
	jq -e --argjson n "$(jq .final.kinds.spin.samples "$tmpdir/spin.rec")" \
		'.kinds[] | select(.kind == "spin") | .metrics |
		.samples.before == $n and .samples.after == $n and
		.wait_time.before > 0 and .wait_time.verdict == "same"' \
		"$tmpdir/diff.json" >/dev/null ||
		fail "diff's spin kind: $(jq -c '.kinds[] | select(.kind == "spin")' "$tmpdir/diff.json")"
	"$locktop" diff "$tmpdir/spin.rec" "$tmpdir/spin.rec" >"$tmpdir/diff.txt"
	grep -qE '^  spin time ' "$tmpdir/diff.txt" &&
		grep -qE '^  spin samples ' "$tmpdir/diff.txt" ||
		fail "diff's text has no spin time or samples: $(cat "$tmpdir/diff.txt")"
	# The gate on the after figure itself: crossed at n + 1, not at n.
	n=$(jq .final.kinds.spin.samples "$tmpdir/spin.rec")
	"$locktop" diff --fail-if "spin.samples<$n" "$tmpdir/spin.rec" \
		"$tmpdir/spin.rec" >/dev/null || fail "--fail-if spin.samples<$n exited $?"
	rc=0
	"$locktop" diff --fail-if "spin.samples<$((n + 1))" "$tmpdir/spin.rec" \
		"$tmpdir/spin.rec" >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || fail "--fail-if spin.samples<$((n + 1)) exited $rc"
	;;
private)
	"$locktop" --batch --json --delay 0.5 --spin-hz "$hz" \
		--output "$tmpdir/lt.json" -- bash -c \
		"'$spinner' 2 2.5 >'$tmpdir/sp.json' && '$yielder' 5000 >'$tmpdir/y.json'" ||
		fail "spinner or yielder under locktop failed"
	final=$(tail -n 1 "$tmpdir/lt.json")
	pid=$(jq .pid "$tmpdir/sp.json")
	# Its word, in the program's own data: named after the program.
	rows=$(jq -c --argjson p "$pid" --arg a "$(jq -r .lock "$tmpdir/sp.json")" \
		'[.locks[] | select(.kind == "spin" and .pids == [$p] and
		.address == $a)]' <<<"$final")
	[ "$(jq length <<<"$rows")" -eq 1 ] ||
		fail "not one spin row for the spinner's lock: $final"
	jq -e '.[0].samples > 0 and (.[0].name | test("spinner|lock"))' \
		<<<"$rows" >/dev/null || fail "the spin row is not named after the spinner: $rows"
	echo "spinner: $(jq -c '.[0] | {name, samples, wait_ns}' <<<"$rows")"
	# The spinner holds its lock in a loop of clock_gettime: the vDSO's
	# seqcount read, whose PAUSE loop is no lock. No other spin row.
	other=$(jq -c --argjson p "$pid" --arg a "$(jq -r .lock "$tmpdir/sp.json")" \
		'[.locks[] | select(.kind == "spin" and .pids == [$p] and
		.samples > 0 and .address != $a) | {name, address, samples}]' <<<"$final")
	[ "$(jq length <<<"$other")" -eq 0 ] ||
		fail "spin rows of the spinner besides its lock: $other"
	# Printed, not judged: its spinning is short next to its clock reads.
	awk -v a="$(sum wait_ns "$rows")" -v b="$(jq .spin_cpu_ns "$tmpdir/sp.json")" \
		'BEGIN { printf "spin time: ours %.0f, spinner %.0f\n", a, b }'
	ypid=$(jq .pid "$tmpdir/y.json")
	# Its loop's one call site (a sanitizer's runtime may yield too).
	y=$(jq -c --argjson p "$ypid" '[.locks[] | select(.kind == "spin" and
		.pids == [$p] and (.name | test("yield")))]' <<<"$final")
	[ "$(jq length <<<"$y")" -eq 1 ] || fail "not one yield site: $final"
	[ "$(jq '.[0].yields' <<<"$y")" -eq 5000 ] || fail "yields: $y"
	echo "yielder: $(jq -c '.[0] | {name, yields}' <<<"$y")"
	# --spin-hz 0 turns the spin kind off: sched_yield is not counted.
	"$locktop" --batch --json --delay 0.5 --spin-hz 0 \
		--output "$tmpdir/off.json" -- "$yielder" 5000 >"$tmpdir/y0.json" ||
		fail "yielder under locktop --spin-hz 0 failed"
	off=$(tail -n 1 "$tmpdir/off.json" | jq -c '[.locks[] | select(.kind == "spin")]')
	[ "$(jq length <<<"$off")" -eq 0 ] || fail "spin rows with --spin-hz 0: $off"
	echo "ok: --spin-hz 0 counts no yields"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
no_leftovers
echo PASS
