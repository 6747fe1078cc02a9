#!/usr/bin/env bash
# How a recording ends: --duration, SIGINT, SIGTERM with a command, the
# command's exit status; the file appears only when whole. Then the seed
# experiment end to end through workloads/compare-locks. A kernel lock's
# type and caller, from record to diff.
. "$(dirname "$0")/../lib.sh"
locktop=$(realpath "$1") lockbench=$(realpath "$2") compare=$(realpath "$3")
kcontend=$(realpath "$4")
require_bpf
cd "$tmpdir"

# wait_gone PID SECONDS
wait_gone() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# --duration, everything on the machine, while lockbench runs.
"$lockbench" --lock ofd -n 2 -l 200000 -H 4 --path "$tmpdir/bg.tdb" >/dev/null 2>&1 &
bg=$!
rc=0
"$locktop" record -o d.rec --duration 1.2 --interval 0.3 2>err.txt || rc=$?
kill "$bg" 2>/dev/null || true
wait "$bg" 2>/dev/null || true
[ "$rc" -eq 0 ] || fail "record --duration exited $rc: $(cat err.txt)"
jq -e '.ended_by == "duration" and .exit_status == null and
	.duration_s == 1.2 and (.intervals | length >= 3) and
	.final.elapsed_s >= 1.0 and .final.elapsed_s < 3' d.rec >/dev/null ||
	fail "d.rec: $(jq -c 'del(.intervals, .final)' d.rec)"
echo "ok: --duration"

# SIGINT: a clean end, the file written; before it, only a temporary file.
"$locktop" record -o s.rec --interval 0.2 2>err.txt &
lt=$!
# Each interval reaches the temporary file as it ends: wait for two.
for ((i = 0; i < 300; i++)); do
	tmp=$(ls -A | grep '^\.s\.rec\.' | head -1)
	[ -n "$tmp" ] && [ "$(grep -o '"elapsed_s"' "$tmp" | wc -l)" -ge 2 ] && break
	sleep 0.1
done
[ -e s.rec ] && fail "s.rec exists before the recording ended"
[ -n "$tmp" ] || fail "no temporary file while recording: $(ls -A)"
kill -INT "$lt"
rc=0
wait "$lt" || rc=$?
[ "$rc" -eq 0 ] || fail "record after SIGINT exited $rc: $(cat err.txt)"
jq -e '.ended_by == "signal" and (.final | type == "object") and
	(.intervals | length >= 2)' s.rec >/dev/null ||
	fail "s.rec: $(jq -c 'del(.intervals, .final)' s.rec)"
ls -A | grep -q '^\.s\.rec\.' && fail "temporary file left after SIGINT"
echo "ok: SIGINT"

# SIGTERM with a command: it is passed on, and its status is ours.
"$locktop" record -o t.rec --interval 0.2 -- sleep 30 2>err.txt &
lt=$!
sleep 1
kill -TERM "$lt"
rc=0
wait "$lt" || rc=$?
[ "$rc" -eq 143 ] || fail "record -- sleep after SIGTERM exited $rc, want 143"
jq -e '.ended_by == "signal" and .exit_status == 143 and
	.command == ["sleep", "30"]' t.rec >/dev/null ||
	fail "t.rec: $(jq -c 'del(.intervals, .final)' t.rec)"
echo "ok: SIGTERM"

# The command's own status, and --duration ending a command that runs on.
rc=0
"$locktop" record -o e.rec -- sh -c 'exit 3' 2>err.txt || rc=$?
[ "$rc" -eq 3 ] || fail "record -- sh -c 'exit 3' exited $rc"
jq -e '.exit_status == 3 and .ended_by == "command"' e.rec >/dev/null ||
	fail "e.rec: $(jq -c 'del(.intervals, .final)' e.rec)"
rc=0
timeout 20 "$locktop" record -o l.rec --duration 0.5 -- sleep 30 2>err.txt || rc=$?
[ "$rc" -eq 143 ] || fail "record --duration 0.5 -- sleep 30 exited $rc, want 143"
jq -e '.ended_by == "duration" and .exit_status == 143' l.rec >/dev/null ||
	fail "l.rec: $(jq -c 'del(.intervals, .final)' l.rec)"
echo "ok: exit status"

# --pid (the process must outlive locktop's load, which takes seconds)
sleep 60 &
sl=$!
"$locktop" record -o p.rec --pid "$sl" --duration 0.4 --interval 0.2 2>err.txt ||
	fail "record --pid exited $?: $(cat err.txt)"
kill "$sl" 2>/dev/null || true
jq -e --argjson p "$sl" '.pids == [$p] and .command == null' p.rec >/dev/null ||
	fail "p.rec: $(jq -c 'del(.intervals, .final)' p.rec)"
echo "ok: --pid"

# The seed experiment in one command, at a small size; two chains and a
# hold keep the fcntl runs contended.
rc=0
LOCKTOP=$locktop LOCKBENCH=$lockbench "$compare" -o cmp --interval 0.2 \
	--common '-n 4 -l 1000 -H 2 --hold-us 20' 2>err.txt || rc=$?
[ "$rc" -eq 0 ] || fail "compare-locks exited $rc: $(cat err.txt)"
for f in before.rec after.rec before.json after.json diff.txt diff.json \
	diff.md waits.svg report.md; do
	[ -s "cmp/$f" ] || fail "compare-locks did not write $f"
done
grep -q '](waits.svg)' cmp/report.md || fail "report.md has no chart"
grep -q '^| `fcntl` | wait time | .* | \*\*better\*\* |$' cmp/report.md ||
	fail "report.md: $(cat cmp/report.md)"
grep -q '<svg' cmp/waits.svg || fail "waits.svg is not SVG"
rc=0
LOCKTOP=$locktop LOCKBENCH=$lockbench "$compare" -o cmp2 --interval 0.2 \
	--common '-n 4 -l 500 -H 2 --hold-us 20' --fail-if 'fcntl.wait_time>+10%' mutex fcntl \
	2>err.txt || rc=$?
# The mutex run has no fcntl waits, so the gate is crossed whatever the
# machine's load does to the two runs' totals.
[ "$rc" -eq 1 ] ||
	fail "compare-locks mutex fcntl --fail-if exited $rc, want 1: $(cat cmp2/diff.txt err.txt)"
echo "ok: compare-locks"

# A kernel lock: kcontend's appends contend on the file's i_rwsem. The
# record and the diff carry its type and caller as locktop --json gives
# them. One locktop traces the other's recording, so both have seen the
# lock's first wait, which its caller comes from.
"$locktop" --batch --json --delay 1 --output k.json -- \
	"$locktop" record -o k.rec --interval 0.5 -- \
	"$kcontend" --mode append -n 4 -t 2 --path "$tmpdir/app.dat" \
	>/dev/null 2>err.txt || fail "record of kcontend failed: $(cat err.txt)"
key='kernel:i_rwsem of app.dat'
sel='[.[] | select(.kind == "kernel" and .key == $k)] | max_by(.waits) //
	empty | {kernel_type, caller}'
live=$(tail -n 1 k.json | jq -c --arg k "$key" ".locks | $sel")
rec=$(jq -c --arg k "$key" ".final.locks | $sel" k.rec)
[ -n "$live" ] || fail "locktop --json has no $key: $(tail -n 1 k.json |
	jq -c '[.locks[] | select(.kind == "kernel") | .key]')"
echo "live: $live record: $rec"
jq -e '.kernel_type | test("^rwsem-(read|write)$")' <<<"$live" >/dev/null ||
	fail "locktop --json: $key is not an rwsem: $live"
jq -e '.caller != ""' <<<"$live" >/dev/null || fail "no caller: $live"
[ "$rec" = "$live" ] || fail "k.rec has $rec for $key, locktop --json $live"
"$locktop" diff --json k.rec k.rec >kd.json || fail "diff of k.rec failed"
diffed=$(jq -c --arg k "$key" '.locks | '"$sel" kd.json)
[ "$diffed" = "$live" ] || fail "diff --json has $diffed for $key"
want="$key [$(jq -r .kernel_type <<<"$live"), caller $(jq -r .caller <<<"$live")]"
"$locktop" diff --limit 0 k.rec k.rec | grep -qxF "$want" ||
	fail "diff does not show '$want': $("$locktop" diff k.rec k.rec | grep kernel)"
# A record written before kernel locks kept them still loads; the diff
# takes them from the side that has them.
jq -c 'walk(if type == "object" then del(.kernel_type, .caller) else . end)' \
	k.rec >old.rec
"$locktop" diff --json old.rec k.rec >kd.json || fail "diff of old.rec failed"
diffed=$(jq -c --arg k "$key" '.locks | '"$sel" kd.json)
[ "$diffed" = "$live" ] || fail "diff old.rec k.rec has $diffed for $key"
"$locktop" diff --json old.rec old.rec >kd.json || fail "old.rec alone failed"
jq -e --arg k "$key" '[.locks[] | select(.key == $k)] | length == 1 and
	.[0].kernel_type == "" and .[0].caller == ""' kd.json >/dev/null ||
	fail "old.rec: $(jq -c --arg k "$key" '.locks[] | select(.key == $k)' kd.json)"
echo "ok: kernel lock"
