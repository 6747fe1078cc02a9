#!/usr/bin/env bash
# One PCP host (hosts.sh) read by locktop --host HOST, the fleet's path
# with one member: its locks, processes and files carry the host in
# JSON; a lock site's process count (locktop.lock.site_procs) is the
# number of processes sitelock runs, as the live view counts them, and
# the agent's own; the screen (a real terminal, tmux) has a HOST column
# in the Locks, Processes and Files views; when the host's pmcd stops,
# JSON, batch text and the screen mark it down and locktop goes on; it
# comes back.
# Usage: one.sh PMDALOCKTOP PMDA_SRC_DIR LOCKBENCH LOCKTOP SITELOCK
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hosts.sh"
. "$(dirname "$0")/../tui/tmux.sh"
require_bpf
agent=$(realpath "$1")
src=$(realpath "$2")
lockbench=$(realpath "$3")
locktop=$(realpath "$4")
sitelock=$(realpath "$5")
command -v tmux >/dev/null || skip "tmux is not installed"
fleet_setup "$agent" "$src"

port=24441 host=127.0.0.1:24441 procs=4
host_start fleet-one "$port"
# The workload, held until the go file appears, in a process group of
# its own: lockbench's fcntl locks and pread I/O, run after run until
# the stop file appears, and sitelock's lock site of private mutexes.
setsid bash -c '
	while [ ! -e "$1/go" ]; do sleep 0.1; done
	"$3" -p "$4" -t 4 -s 60 -h 20 >"$1/sl.out" &
	while [ ! -e "$1/stop" ]; do
		"$2" --lock fcntl --io pread -n 4 -l 2000 -H 4 --hold-us 20 \
			-p "$1/bench.tdb" >"$1/lb.out" || break
	done
	kill $! 2>/dev/null
	wait' sh "$tmpdir" "$lockbench" "$sitelock" "$procs" &
work=$!
one_cleanup() {
	local rc=$?
	touch "$tmpdir/stop"
	T kill-server 2>/dev/null || true
	kill -- -"$work" 2>/dev/null || true
	(exit "$rc")
	fleet_cleanup
}
trap one_cleanup EXIT
host_trace fleet-one "$port" "$work"

"$locktop" --host "$host" -b --json -d 1 -n 6 >"$tmpdir/one.json" \
	2>"$tmpdir/one.err" &
lt=$!
sleep 1.5
touch "$tmpdir/go"
wait "$lt" || fail "locktop --host failed: $(cat "$tmpdir/one.err")"
final=$(tail -n 1 "$tmpdir/one.json")
jq -e --arg h "$host" '.final and (.hosts | length == 1) and
	.hosts[0].name == $h and .hosts[0].state == "up" and
	(.locks | length > 0) and all(.locks[]; .host == $h) and
	(.procs | length > 0) and all(.procs[]; .host == $h) and
	(.files | length > 0) and all(.files[]; .host == $h)' <<<"$final" \
	>/dev/null || fail "one host's JSON: $(jq -c '{hosts, locks: [.locks[] |
	{host, name}], procs: [.procs[] | {host, comm}], files: [.files[] |
	{host, name}]}' <<<"$final")"
# One host's keys are the host's own: records of two hosts compare.
jq -e 'all(.locks[]; .key | contains("@") | not)' <<<"$final" >/dev/null ||
	fail "one host's keys name it: $(jq -c '[.locks[].key]' <<<"$final")"
echo "ok: every lock, process and file of one host carries its name"

# The lock site: as many processes as sitelock runs, as the agent says.
row=$(jq -c '[.locks[] | select(.comm == "sitelock" and .kind == "futex")] |
	max_by(.waits) // empty' <<<"$final")
[ -n "$row" ] || fail "no sitelock row: $(jq -c '[.locks[] | {name, comm}]' <<<"$final")"
inst=$(jq -r .name <<<"$row")
agent_procs=$(pminfo -h "$host" -f locktop.lock.site_procs |
	awk -v n="\"$inst\"" 'index($0, n "]") && /value/ { print $NF }')
echo "site $inst: procs $(jq .procs <<<"$row"), the agent's $agent_procs"
[ "$(jq .procs <<<"$row")" = "$procs" ] || fail "site row: $row"
[ "$agent_procs" = "$procs" ] || fail "the agent's site_procs: '$agent_procs'"
echo "ok: a lock site's processes through --host"

# The screen: a HOST column first in every view with rows of a host.
T new-session -d -s lt -x 200 -y 40 \
	"env TERM=tmux-256color LC_ALL=C.UTF-8 $locktop --host $host -d 1 2>$tmpdir/err; echo \$? >$tmpdir/rc; sleep 60"
wait_for "Locks view" "^HOST +LOCK "
wait_for "a lock row of the host" "^$host +.*(bench\\.tdb|heap)"
T send-keys -t lt F3
wait_for "Processes view" "^HOST +PID +COMMAND "
wait_for "a process row of the host" "^$host +[0-9]+ +(lockbench|sitelock)"
T send-keys -t lt F4
wait_for "Files view" "^HOST +FILE "
wait_for "a file row of the host" "^$host +.*bench\\.tdb"
T send-keys -t lt F2
echo "ok: the HOST column in the Locks, Processes and Files views"

# The host stops answering: marked down on the screen, in JSON and in
# batch text; locktop goes on, and the host comes back.
"$locktop" --host "$host" -b --json -d 1 >"$tmpdir/down.json" \
	2>"$tmpdir/down.err" &
lt=$!
"$locktop" --host "$host" -b -d 1 >"$tmpdir/down.txt" \
	2>"$tmpdir/down.txt.err" &
ltt=$!
sleep 3
host_stop fleet-one
wait_for "the host down on the screen" "$host DOWN since"
sleep 3
host_start fleet-one "$port"
wait_for "the host up again on the screen" "$host up: "
sleep 3
kill -INT "$lt" "$ltt"
wait "$lt" || fail "locktop --host ended when its host went down: $(cat "$tmpdir/down.err")"
wait "$ltt" || fail "batch text ended when its host went down: $(cat "$tmpdir/down.txt.err")"
jq -e -s --arg h "$host" '[.[] | select(.final != true) |
	select(.hosts[0].state == "down")] | length > 0 and
	all(.hosts[0].name == $h and (.hosts[0].why | length > 0) and
	(.locks | length == 0))' "$tmpdir/down.json" >/dev/null ||
	fail "while down: $(jq -c .hosts "$tmpdir/down.json")"
tail -n 2 "$tmpdir/down.json" | head -n 1 | jq -e '.hosts[0].state == "up"' \
	>/dev/null || fail "the host did not come back: $(jq -c .hosts "$tmpdir/down.json")"
grep -q "^host $host DOWN since " "$tmpdir/down.txt" ||
	fail "batch text: no DOWN line: $(grep '^host' "$tmpdir/down.txt")"
grep -q "^host $host up: " "$tmpdir/down.txt" ||
	fail "batch text: never up: $(grep '^host' "$tmpdir/down.txt")"
quit_screen
echo "ok: one host that stops answering is marked down, and comes back"
echo PASS
