#!/usr/bin/env bash
# locktop diff's verdicts where the records hold little: runs of two
# intervals, a kind new with many waits, a handful of waits, and noise
# that hides a threefold change. None of these is "same". The output
# opens with the elapsed time and the CPU time, before → after. No BPF:
# the records are synthetic.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/difflib.sh"
locktop=$(realpath "$1") mkrecord=$(realpath "$2")
cd "$tmpdir"

# never_same_on_3x FILE: in a JSON diff, no figure that changed threefold
# or more either way is "same".
never_same_on_3x() {
	jq -e '[.kinds[], .locks[] | .metrics[] |
		select((.before > 0 and (.after >= 3 * .before or
		.before >= 3 * .after)) or (.before == 0 and .after > 0)) |
		.verdict] | all(. != "same")' "$1" >/dev/null ||
		fail "a threefold change is 'same': $(jq -c '[.kinds[] |
			{kind, m: (.metrics | map_values({before, after,
			verdict}))}]' "$1")"
}

# A fcntl lock over two intervals, and three times the waits after, with
# a mean wait that puts p99 at 134.2ms before and at 4.29s after.
mk two.rec --intervals 2 --noise 0.5 --seed 1 \
	--lock 'fcntl,/srv/t.tdb+0x1000,1000,100000000000'
mk two-3x.rec --intervals 2 --noise 0.5 --seed 2 \
	--lock 'fcntl,/srv/t.tdb+0x1000,3000,9900000000000'

# A threefold change over two intervals: unclear (2 intervals), not same.
diff_ok two.rec two-3x.rec
for row in all fcntl fcntl:t.tdb+0x1000; do
	for m in waits 'wait time' 'p99 wait'; do
		verdict_is "$row" "$m" 'unclear (2 intervals)'
	done
done
line_of all 'p99 wait' | grep -q '134.2ms → 4.29s ' ||
	fail "p99: $(line_of all 'p99 wait')"
grep -E '^  .*→' out.txt | grep -vE ' 0\.0%  same$' | grep -qE ' same$' &&
	fail "a threefold change is 'same': $(cat out.txt)"
diff_ok --json two.rec two-3x.rec
never_same_on_3x out.txt
jq -e '.kinds[] | select(.kind == "all") | .metrics.p99 |
	.verdict == "unclear" and .reason == "2 intervals"' out.txt \
	>/dev/null || fail "JSON p99: $(jq -c '.kinds[0].metrics.p99' out.txt)"
diff_ok --markdown two.rec two-3x.rec
grep -q '^| `all` | waits | .* | unclear (2 intervals) |$' out.txt ||
	fail "markdown: $(cat out.txt)"
echo "ok: a threefold change over two intervals is unclear (2 intervals)"

# The other way, and tenfold: still unclear with two intervals a side.
diff_ok two-3x.rec two.rec
verdict_is all waits 'unclear (2 intervals)'
diff_ok --json two-3x.rec two.rec
never_same_on_3x out.txt
echo "ok: a threefold drop over two intervals is unclear too"

# The same threefold change over ten intervals a side is worse: the
# verdict is withheld for want of data, not for the size of the change.
mk ten.rec --intervals 10 --noise 0.5 --seed 1 \
	--lock 'fcntl,/srv/t.tdb+0x1000,1000,100000000000'
mk ten-3x.rec --intervals 10 --noise 0.5 --seed 2 \
	--lock 'fcntl,/srv/t.tdb+0x1000,3000,9900000000000'
diff_ok ten.rec ten-3x.rec
for m in waits 'wait time' 'p99 wait'; do
	verdict_is all "$m" worse
done
# One read that came late makes one interval three times as long; the
# other nine still count, and a partial last interval does not.
jq -c '.intervals[4].interval_s = 3 |
	.intervals += [.intervals[9] | .interval_s = 0.2]' ten.rec >late.rec
diff_ok late.rec ten-3x.rec
verdict_is all waits worse
echo "ok: ten intervals a side judge it worse"

# A record of two intervals against itself is the same throughout.
diff_ok --json two.rec two.rec
jq -e '[.kinds[], .locks[] | .metrics[] | .verdict] | length > 0 and
	all(. == "same")' out.txt >/dev/null || fail "self-diff: $(cat out.txt)"
echo "ok: two intervals against themselves are the same"

# A kind new in the after run with 31,070 waits over two intervals is
# worse (its change is "new"), never same; the fcntl kind that goes
# away is better.
mk new.rec --intervals 2 --noise 0 --seed 3 \
	--lock 'fcntl,/srv/t.tdb+0x1000,1000,100000000000' \
	--lock 'futex,/srv/t.tdb+0x1000,15535,1553500000'
diff_ok new.rec new.rec
diff_ok two.rec new.rec
line_of futex waits | grep -qE '^  waits +0 → 31070 +new  worse$' ||
	fail "new kind: $(line_of futex waits)"
verdict_is futex 'wait time' worse
verdict_is 'futex:t.tdb+0x1000 (after only)' waits worse
diff_ok --json two.rec new.rec
never_same_on_3x out.txt
jq -e '.kinds[] | select(.kind == "futex") | .metrics.waits |
	.before == 0 and .after == 31070 and .verdict == "worse"' out.txt \
	>/dev/null || fail "new kind JSON: $(jq -c .kinds out.txt)"
mk gone.rec --intervals 2 --noise 0 --seed 3 \
	--lock 'futex,/srv/t.tdb+0x1000,15535,1553500000'
diff_ok new.rec gone.rec
verdict_is fcntl waits better
verdict_is fcntl 'p99 wait' better
echo "ok: a kind new with many waits is worse, one gone is better"

# A handful of waits a side: unclear, with how many.
mk few.rec --intervals 4 --noise 0 --lock 'fcntl,/srv/t.tdb+0x1000,1,1000000'
mk few-2x.rec --intervals 4 --noise 0 --lock 'fcntl,/srv/t.tdb+0x1000,2,8000000'
diff_ok few.rec few-2x.rec
verdict_is all waits 'unclear (8 waits)'
verdict_is all 'wait time' 'unclear (8 waits)'
verdict_is all 'p99 wait' 'unclear (4 waits)'
diff_ok --json few.rec few-2x.rec
never_same_on_3x out.txt
echo "ok: a handful of waits is unclear"

# All of a run's waits in one of its ten intervals: the noise hides a
# threefold change, so unclear, with the noise band.
burst() {
	jq -c '.final as $f | .intervals |= (to_entries | map(.value +
		(if .key == 0 then {locks: $f.locks, kinds: $f.kinds}
		 else {locks: [], kinds: {}} end)))' "$1" >"$2"
}
burst ten.rec ten-burst.rec
burst ten-3x.rec ten-3x-burst.rec
diff_ok ten-burst.rec ten-3x-burst.rec
verdict_is all waits 'unclear (noise ±[1-9][0-9][0-9]%)'
diff_ok --json ten-burst.rec ten-3x-burst.rec
never_same_on_3x out.txt
echo "ok: noise that hides a threefold change is unclear"

# The gates compare the figures whatever the verdict: exit codes hold.
rc=0
"$locktop" diff --fail-if 'waits>+100%' two.rec two-3x.rec >/dev/null \
	2>err.txt || rc=$?
[ "$rc" -eq 1 ] || fail "--fail-if on an unclear change exited $rc"
"$locktop" diff --fail-if 'waits>+1000%' two.rec two-3x.rec >/dev/null ||
	fail "--fail-if above the change exited $?"
echo "ok: --fail-if"

# The output opens with the elapsed time and the CPU time, before →
# after, in text and in Markdown; JSON has the CPU time of each record.
jq -c '.cpu_user_s = 1.5 | .cpu_sys_s = 0.5' two.rec >cpu.rec
jq -c '.cpu_user_s = 0.25 | .cpu_sys_s = 0.25' two-3x.rec >cpu-3x.rec
diff_ok cpu.rec cpu-3x.rec
sed -n 1p out.txt | grep -qE '^elapsed +2\.00s → 2\.00s +\+0\.0%$' ||
	fail "line 1 is not the elapsed time: $(head -3 out.txt)"
sed -n 2p out.txt |
	grep -qE '^CPU user\+sys +2\.00s → 500\.0ms +-75\.0%  user 1\.50s → 250\.0ms, sys 500\.0ms → 250\.0ms$' ||
	fail "line 2 is not the CPU time: $(head -3 out.txt)"
sed -n 3p out.txt | grep -q '^before  cpu.rec: ' ||
	fail "line 3: $(head -3 out.txt)"
diff_ok --markdown cpu.rec cpu-3x.rec
sed -n 3,8p out.txt >head.md
diff -u - head.md <<'EOF' || fail "Markdown does not open with the run"
| run | before | after | change |
| --- | ---: | ---: | ---: |
| elapsed | 2.00s | 2.00s | +0.0% |
| CPU user+sys | 2.00s | 500.0ms | -75.0% |
| CPU user | 1.50s | 250.0ms | -83.3% |
| CPU sys | 500.0ms | 250.0ms | -50.0% |
EOF
diff_ok --json cpu.rec two.rec
jq -e '.before.cpu_user_s == 1.5 and .before.cpu_sys_s == 0.5 and
	.after.cpu_user_s == null and .after.cpu_sys_s == null' out.txt \
	>/dev/null || fail "JSON CPU: $(jq -c '.before, .after' out.txt)"
# A record without CPU time (an older one, or one without a command):
# still read, and the opening says what it lacks.
diff_ok cpu.rec two.rec
sed -n 2p out.txt | grep -qE '^CPU user\+sys +2\.00s → \? +\?$' ||
	fail "CPU unknown after: $(head -3 out.txt)"
sed -n 3p out.txt | grep -q 'two.rec holds no CPU time' ||
	fail "no note on the missing CPU time: $(head -4 out.txt)"
jq -c '.cpu_user_s = "fast"' cpu.rec >bad-cpu.rec
rc=0
"$locktop" diff cpu.rec bad-cpu.rec >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q '"cpu_user_s" is not a number' err.txt ||
	fail "a bad cpu_user_s: exit $rc, $(cat err.txt)"
echo "ok: elapsed and CPU first"

"$locktop" diff --help >"$tmpdir/help" || fail "diff --help failed"
grep -q 'unclear' "$tmpdir/help" || fail "diff --help says nothing of unclear"
# --help names every metric --fail-if takes (its error lists them all).
metrics=$("$locktop" diff --fail-if 'nosuch>1' a b 2>&1 |
	sed -n "s/.*unknown metric 'nosuch' (\([^;]*\);.*/\1/p")
[ -n "$metrics" ] || fail "no metric list in --fail-if's error"
tr '\n' ' ' <"$tmpdir/help" | tr -s ' ' | grep -qF "METRIC is one of $metrics;" ||
	fail "diff --help's metrics are not --fail-if's: $metrics"
echo "ok: --help"
