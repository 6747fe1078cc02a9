#!/usr/bin/env bash
# pmlogger records pmdalocktop's metrics: one 10 s archive while
# lockbench uses fcntl locks, one while it uses mutexes; pmdiff and
# pmrep compare them, as docs/pcp.md shows.
# locktop --archive replays one of them on its batch screen.
# Usage: archive.sh PMDALOCKTOP PMDA_SRC_DIR LOCKBENCH LOCKTOP
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
pmda_setup "$1" "$2"
lockbench=$(realpath "$3")
locktop=$(realpath "$4")

install_agent
wait_ready 20 || fail "the agent did not become ready"

cat >"$tmpdir/pmlogger.conf" <<'EOF'
log mandatory on 1 sec {
	locktop.lock.kind
	locktop.lock.wait.count
	locktop.lock.wait.time
	locktop.kind.wait.count
	locktop.kind.wait.time
	locktop.probe.events
	locktop.probe.drops
	locktop.hist.wait
}
EOF

record() {
	local lock=$1 p
	background lockbench_loop "$lockbench" --lock "$lock" -n 8 \
		-l 20000 -H 16 -p "$tmpdir/$lock.tdb"
	p=${bg_pids##* }
	sleep 1
	pmlogger -T 10s -t 1 -c "$tmpdir/pmlogger.conf" \
		-l "$tmpdir/$lock.log" "$tmpdir/$lock" ||
		{ cat "$tmpdir/$lock.log" >&2; fail "pmlogger failed ($lock)"; }
	kill "$p"
	pkill -P "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	[ -f "$tmpdir/$lock.0" ] || fail "no archive for $lock"
}
record fcntl
record mutex

# The mutex archive holds futex wait time: a non-zero rate in some sample.
pmrep -a "$tmpdir/mutex" -t 1 -o csv -i futex locktop.kind.wait.time \
	>"$tmpdir/mutex.csv" 2>&1 || { cat "$tmpdir/mutex.csv" >&2; fail "pmrep failed"; }
awk -F, 'NR > 1 && $2 + 0 > 0 { found = 1 } END { exit !found }' \
	"$tmpdir/mutex.csv" ||
	{ cat "$tmpdir/mutex.csv" >&2; fail "no futex wait time in the mutex archive"; }
pmrep -a "$tmpdir/mutex" -t 1 -o csv locktop.lock.wait.time >/dev/null 2>&1 ||
	fail "pmrep cannot read lock wait time from the archive"

# pmdiff compares the two runs and reports locktop's metrics.
pmdiff -q 1.01 "$tmpdir/fcntl" "$tmpdir/mutex" >"$tmpdir/pmdiff" 2>&1 ||
	{ cat "$tmpdir/pmdiff" >&2; fail "pmdiff failed"; }
echo "pmdiff fcntl mutex:"
grep 'locktop\.' "$tmpdir/pmdiff" | head -n 20
grep -q 'locktop\.' "$tmpdir/pmdiff" ||
	{ cat "$tmpdir/pmdiff" >&2; fail "pmdiff reports no locktop metric"; }

# The fcntl archive holds fcntl waits, and pmdiff sees the kinds change.
pmrep -a "$tmpdir/fcntl" -t 1 -o csv -i fcntl -r locktop.kind.wait.count \
	>"$tmpdir/fcntl.csv" 2>&1
fcntl_waits=$(awk -F, 'NR > 1 && $2 + 0 > m { m = $2 + 0 } END { print m + 0 }' \
	"$tmpdir/fcntl.csv")
[ "${fcntl_waits%.*}" -gt 0 ] 2>/dev/null ||
	{ cat "$tmpdir/fcntl.csv" >&2; fail "no fcntl waits in the fcntl archive"; }
grep -q 'locktop.kind.wait' "$tmpdir/pmdiff" ||
	{ cat "$tmpdir/pmdiff" >&2; fail "pmdiff misses the kind change"; }

# locktop replays the fcntl archive: the table file's locks, as fcntl.
"$locktop" --archive "$tmpdir/fcntl" --batch --json >"$tmpdir/replay.json" \
	2>"$tmpdir/replay.err" || { cat "$tmpdir/replay.err" >&2; fail "locktop --archive failed"; }
jq -s -e '[.[] | .locks[]? | select(.kind == "fcntl")] | length > 0' \
	"$tmpdir/replay.json" >/dev/null ||
	{ head -c 2000 "$tmpdir/replay.json" >&2; fail "the replay shows no fcntl lock"; }
echo "ok: locktop --archive replayed $(wc -l <"$tmpdir/replay.json") intervals"

remove_agent || { cat "$tmpdir/remove.log" >&2; fail "Remove failed"; }
check_agent_log
echo "OK"
