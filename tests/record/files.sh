#!/usr/bin/env bash
# locktop diff on synthetic records (no BPF): verdicts within and beyond
# the noise, --fail-if, the three formats and the plot, key
# normalisation, and every kind of bad file giving a clear error (exit 2)
# and never a crash.
. "$(dirname "$0")/../lib.sh"
locktop=$(realpath "$1") mkrecord=$(realpath "$2")
cd "$tmpdir"

mk() { python3 "$mkrecord" "$@" || fail "mkrecord.py $*"; }

# no_crash LOG: nothing from the sanitizers, no signal.
no_crash() {
	if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$1"; then
		cat "$1" >&2
		fail "sanitizer report"
	fi
}

# diff_rc EXPECTED ARGS...: run locktop diff, check its status.
diff_rc() {
	local want=$1 rc=0
	shift
	"$locktop" diff "$@" >out.txt 2>err.txt || rc=$?
	no_crash err.txt
	[ "$rc" -eq "$want" ] || {
		cat out.txt err.txt >&2
		fail "locktop diff $* exited $rc, want $want"
	}
}

# A fcntl-heavy run, the same load again with other noise, one where the
# waits are cut tenfold, and one where fcntl is gone and futex appears.
fcntl_lock='fcntl,/tmp/run/t.tdb+0x1000,1000,50000000,2000000,30'
chain_lock='fcntl,/tmp/run/t.tdb+0x1040,200,8000000,500000'
mk base.rec --seed 1 --lock "$fcntl_lock" --lock "$chain_lock"
mk again.rec --seed 7 --lock "$fcntl_lock" --lock "$chain_lock"
mk better.rec --seed 2 --lock 'fcntl,/tmp/run/t.tdb+0x1000,100,5000000,2000000,3' \
	--lock "$chain_lock"
mk futex.rec --seed 3 --lock 'futex,/tmp/run/t.tdb+0x1000,300,3000000,1000000'

# A record against itself: the same everywhere.
diff_rc 0 base.rec base.rec
grep -q 'better\|worse' out.txt && fail "self-diff is not the same: $(cat out.txt)"
diff_rc 0 --json base.rec base.rec
jq -e '[.kinds[], .locks[] | .metrics[] | .verdict] | length > 0 and
	all(. == "same")' out.txt >/dev/null || fail "self-diff JSON: $(cat out.txt)"
diff_rc 0 --fail-if 'wait_time>+0%' --fail-if 'waits<-0%' base.rec base.rec
echo "ok: a record against itself"

# The same load with other noise: same, within the spread.
diff_rc 0 --json base.rec again.rec
jq -e '.kinds[] | select(.kind == "all") | .metrics |
	.waits.verdict == "same" and .wait_time.verdict == "same"' out.txt \
	>/dev/null || fail "noise alone is not the same: $(jq -c '.kinds[0]' out.txt)"
echo "ok: noise is the same"

# Fewer waits: better; the reverse: worse. --fail-if follows the direction.
diff_rc 0 --json base.rec better.rec
jq -e '.kinds[] | select(.kind == "all") | .metrics |
	.waits.verdict == "better" and .wait_time.verdict == "better" and
	.wait_time.change_pct < -50' out.txt >/dev/null ||
	fail "better is not better: $(jq -c '.kinds[0]' out.txt)"
jq -e '.locks[] | select(.key == "fcntl:t.tdb+0x1040") |
	.metrics.wait_time.verdict == "same"' out.txt >/dev/null ||
	fail "an unchanged lock is not the same: $(jq -c '.locks' out.txt)"
diff_rc 0 --fail-if 'wait_time>+10%' base.rec better.rec
diff_rc 1 --fail-if 'wait_time>+10%' better.rec base.rec
grep -q "fail-if 'wait_time>+10%' crossed" err.txt || fail "no message: $(cat err.txt)"
diff_rc 1 --fail-if 'waits<-50%' base.rec better.rec
diff_rc 1 --fail-if 'fcntl.wait_time<-100ms' base.rec better.rec
diff_rc 0 --fail-if 'fcntl.wait_time<-100s' base.rec better.rec
diff_rc 1 --fail-if 'p99>1us' base.rec better.rec
diff_rc 0 --fail-if 'p99>1s' --fail-if 'futex.waits>0' base.rec better.rec
diff_rc 1 --fail-if 'trylock_failures>+0' better.rec base.rec
echo "ok: better, worse and --fail-if"

# One kind replaced by another: fcntl goes to 0, futex appears.
diff_rc 0 --json base.rec futex.rec
jq -e '(.kinds[] | select(.kind == "fcntl") | .metrics.wait_time |
	.after == 0 and .verdict == "better") and
	(.kinds[] | select(.kind == "futex") | .metrics.wait_time |
	.before == 0 and .after > 0 and .verdict == "worse")' out.txt \
	>/dev/null || fail "kinds: $(jq -c .kinds out.txt)"
diff_rc 1 --fail-if 'futex.waits>+10%' base.rec futex.rec
echo "ok: kinds"

# Text and Markdown carry the same verdicts; the plot is an SVG.
diff_rc 0 base.rec better.rec
grep -qE '^  wait time .*→.* better$' out.txt || fail "text: $(cat out.txt)"
grep -q '^fcntl:t.tdb+0x1000$' out.txt || fail "text locks: $(cat out.txt)"
diff_rc 0 --markdown --plot waits.svg base.rec better.rec
grep -q '^| `all` | waits | .* | \*\*better\*\* |$' out.txt ||
	fail "markdown: $(cat out.txt)"
grep -q '<svg' waits.svg || fail "no SVG from --plot"
grep -q 'better.rec' waits.svg || fail "the SVG does not name the records"
diff_rc 0 --limit 1 --json base.rec better.rec
jq -e '.locks | length == 1' out.txt >/dev/null || fail "--limit 1"
echo "ok: formats and plot"

# lockbench's random table names, deleted files, and a path named in
# full or by its base name match across runs.
mk r1.rec --seed 1 --lock 'fcntl,/tmp/lockbench-Ab3dE9.tdb (deleted)+0x1000,100,1000000' \
	--lock 'futex,/srv/db/t.tdb+0x1000,10,10000'
mk r2.rec --seed 2 --lock 'fcntl,lockbench-zz81Qx.tdb+0x1000,100,1000000' \
	--lock 'futex,t.tdb+0x1000,10,10000'
diff_rc 0 --json r1.rec r2.rec
jq -e '(.locks | length == 2) and all(.locks[]; .before and .after) and
	([.locks[].key] | sort == ["fcntl:lockbench-*.tdb+0x1000",
	 "futex:t.tdb+0x1000"])' out.txt >/dev/null ||
	fail "keys not normalised: $(jq -c .locks out.txt)"
echo "ok: keys"

# Lost events are said, not hidden.
jq -c '.final.drops = 5' base.rec >drops.rec
diff_rc 0 base.rec drops.rec
grep -q 'drops.rec dropped 5 events' err.txt || fail "no drops warning: $(cat err.txt)"
grep -q '5 events dropped' out.txt || fail "no drops in the header: $(head -3 out.txt)"
echo "ok: drops"

# Bad input: exit 2, one line that says what is wrong, no crash.
bad() {
	local want=$1 file=$2
	diff_rc 2 base.rec "$file"
	grep -q "locktop diff: $file: .*$want" err.txt ||
		fail "$file: want '$want', got: $(cat err.txt)"
	diff_rc 2 "$file" base.rec
}
: >empty.rec
bad 'empty file' empty.rec
head -c "$(($(wc -c <base.rec) / 2))" base.rec >truncated.rec
bad 'truncated' truncated.rec
{ head -c 3000 base.rec; printf '\001\377garbage'; tail -c +3010 base.rec; } >corrupt.rec
bad 'not valid JSON' corrupt.rec
jq -c '.version = 2' base.rec >v2.rec
bad 'version 2 is not supported' v2.rec
jq -c 'del(.version)' base.rec >nov.rec
bad '"version" is missing' nov.rec
jq -c '.format = "pcp-archive"' base.rec >fmt.rec
bad 'not a locktop record' fmt.rec
echo '[1, 2, 3]' >array.rec
bad 'not a locktop record' array.rec
jq -c 'del(.final)' base.rec >nofinal.rec
bad '"final" is missing' nofinal.rec
jq -c '.final.locks[0].waits = "many"' base.rec >type.rec
bad 'not a whole number' type.rec
jq -c '.intervals[1].locks[0].wait_ns = -5' base.rec >neg.rec
bad 'negative' neg.rec
jq -c '.final.locks[0].kind = "semaphore"' base.rec >kind.rec
bad 'unknown kind' kind.rec
jq -c '.final.locks[0].wait_hist = [range(41)]' base.rec >hist.rec
bad 'buckets' hist.rec
jq -c '.intervals[0].interval_s = 1e300' base.rec >range.rec
bad 'out of range' range.rec
{ cat base.rec; echo '{}'; } >trailing.rec
bad 'data after the record' trailing.rec
python3 -c 'import sys; sys.stdout.write("{\"format\":\"locktop-record\",\"version\":1,\"intervals\":" + "[" * 100000)' >deep.rec
bad 'nested deeper' deep.rec
# 200 MB of garbage: refused at its first bytes, not read whole.
head -c 4096 /dev/urandom | tr -d '{ \t\r\n' >huge.rec
truncate -s 200M huge.rec
bad 'does not start with' huge.rec
# A huge file that starts like a record: refused past the size cap.
{ printf '{'; head -c 300M /dev/zero | tr '\0' ' '; } >big.rec
bad 'too large' big.rec
rm -f huge.rec big.rec
bad 'No such file' missing.rec
mkdir dir.rec
bad 'is a directory' dir.rec
echo "ok: bad files"

# Bad usage: exit 2 too.
diff_rc 2 base.rec
diff_rc 2 base.rec base.rec base.rec
for expr in 'bogus>1' 'wait_time=1' 'wait_time>' 'wait_time>>1' \
	'waits>5ms' 'wait_time>1parsec' 'nokind.waits>1' 'p99>-1s5' \
	'wait_time>nan' 'waits>inf%'; do
	diff_rc 2 --fail-if "$expr" base.rec base.rec
	grep -q -- '--fail-if' err.txt || fail "'$expr': $(cat err.txt)"
done
diff_rc 2 --sigma -1 base.rec base.rec
diff_rc 2 --markdown --json base.rec base.rec
diff_rc 2 --plot /nonexistent/dir/x.svg base.rec better.rec
diff_rc 2 -o /nonexistent/dir/x.txt base.rec better.rec
echo "ok: usage"

# record refuses before tracing: no -o, a bad duration, an unwritable path.
rc=0
"$locktop" record --duration 1 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q 'needs -o' err.txt || fail "record without -o: $rc $(cat err.txt)"
rc=0
"$locktop" record -o x.rec --duration soon 2>err.txt || rc=$?
[ "$rc" -eq 2 ] || fail "record --duration soon: $rc"
rc=0
"$locktop" record -o /nonexistent/dir/x.rec --duration 1 2>err.txt || rc=$?
[ "$rc" -eq 1 ] && grep -q "cannot write '/nonexistent/dir/x.rec'" err.txt ||
	fail "record to an unwritable path: $rc $(cat err.txt)"
"$locktop" record --help | grep -q -- '--duration' || fail "record --help"
"$locktop" diff --help | grep -q -- '--fail-if' || fail "diff --help"
echo "ok: record options"
