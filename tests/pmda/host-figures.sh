#!/usr/bin/env bash
# A lock's figures through PCP are the agent's own: spin rows (a
# spinner's samples, a yielder's sched_yield calls) and a file lock
# whose cycle the kernel refused (deadlocks) read through locktop --host
# equal the agent's values exactly, and the counts locktop itself takes
# of the same run where they are exact (yields, deadlocks). A mutex held
# by a process's thread has the same holders through locktop --host as
# locktop's own, that thread's TID and name included.
# Usage: host-figures.sh PMDALOCKTOP PMDA_SRC_DIR LOCKTOP SPINNER YIELDER
#        DEADLOCK HOLDER
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
pmda_setup "$1" "$2"
shift 2
for exe in locktop spinner yielder deadlock holder; do
	printf -v "$exe" %s "$(realpath "$1")"
	shift
done

step "installing"
install_agent
wait_ready 20 || fail "the agent did not become ready"
# Every lock an instance: a yielder's row has no wait time to rank by.
pmstore locktop.control.top 1000 >/dev/null || fail "pmstore refused"

step "locktop --host, then the workload under locktop"
"$locktop" --host local: --batch --json -d 0.5 \
	>"$tmpdir/host.json" 2>"$tmpdir/host.err" &
host=$!
bg_pids="$bg_pids $host"
# Its first fetch is the base: what comes after counts from zero.
for i in $(seq 40); do
	[ -s "$tmpdir/host.json" ] && break
	sleep 0.25
done
[ -s "$tmpdir/host.json" ] ||
	fail "locktop --host wrote nothing: $(cat "$tmpdir/host.err")"
"$locktop" --batch --json --delay 0.5 --output "$tmpdir/live.json" -- \
	bash -c "'$spinner' 2 2.5 >'$tmpdir/sp.json' &&
		'$yielder' 5000 >'$tmpdir/y.json' &&
		'$deadlock' fcntl '$tmpdir/dl.dat' 2 >'$tmpdir/dl.json' &&
		'$holder' -t '$tmpdir/held.dat' 1000 >'$tmpdir/h.json'" ||
	fail "the workload under locktop failed"
[ "$(jq .edeadlk "$tmpdir/dl.json")" = 1 ] || fail "no EDEADLK"
# Two reads of the agent and two fetches after the last event.
sleep 3
kill -INT "$host"
wait "$host" || fail "locktop --host failed: $(cat "$tmpdir/host.err")"
host_final=$(tail -n 1 "$tmpdir/host.json")
live_final=$(tail -n 1 "$tmpdir/live.json")

# The agent's values by lock id: {"ID": {"samples": N, ...}}.
pminfo -f locktop.lock.id locktop.lock.samples locktop.lock.yields \
	locktop.lock.deadlocks | awk '
	/^locktop\./ { m = $1; sub(/^locktop\.lock\./, "", m); next }
	/ inst \[/ {
		i = $0; sub(/.* inst \[/, "", i); sub(/ .*/, "", i)
		v[m, i] = $NF; insts[i] = 1
	}
	END {
		printf "{"; sep = ""
		for (i in insts) {
			if (!(("id", i) in v)) continue
			printf "%s\"%s\": {\"samples\": %s, \"yields\": %s, " \
				"\"deadlocks\": %s}", sep, v["id", i],
				v["samples", i] + 0, v["yields", i] + 0,
				v["deadlocks", i] + 0
			sep = ", "
		}
		print "}"
	}' >"$tmpdir/agent.json"
jq -e 'length > 0' "$tmpdir/agent.json" >/dev/null ||
	fail "no lock values from the agent"

# The rows of kind $1 in $3 that process $2 waited on (a number) or
# whose name has $2 in it, and whose name matches $4 if given, as {id,
# samples, yields, deadlocks}.
rows_of() {
	jq -c --arg k "$1" --arg w "$2" --arg re "${4:-}" '[.locks[] |
		select(.kind == $k and (($w | tonumber? // null) as $p |
			if $p then .pids | index($p) else .name | contains($w) end) and
			($re == "" or (.name | test($re)))) |
		{id, samples, yields, deadlocks}]' <<<"$3"
}

# Every row of $1 equals the agent's lock of the same id.
same_as_agent() {
	jq -e --slurpfile a "$tmpdir/agent.json" 'length > 0 and
		all(.[]; . as $r | $a[0][$r.id | tostring] as $v |
		    $v != null and $r.samples == $v.samples and
		    $r.yields == $v.yields and $r.deadlocks == $v.deadlocks)' \
		<<<"$1" >/dev/null
}

sp=$(jq .pid "$tmpdir/sp.json")
y=$(jq .pid "$tmpdir/y.json")
spin=$(rows_of spin "$sp" "$host_final")
# The yielder's loop (a sanitizer's runtime may yield too).
yield=$(rows_of spin "$y" "$host_final" yield)
file=$(rows_of fcntl dl.dat "$host_final")
echo "locktop --host: spinner $spin, yielder $yield, fcntl $file"
jq -e 'map(.samples) | add > 0' <<<"$spin" >/dev/null ||
	fail "no samples through --host: $spin"
same_as_agent "$spin" || fail "spinner: --host $spin, the agent $(cat "$tmpdir/agent.json")"
same_as_agent "$yield" || fail "yielder: --host $yield, the agent $(cat "$tmpdir/agent.json")"
same_as_agent "$file" || fail "deadlock: --host $file, the agent $(cat "$tmpdir/agent.json")"
echo "ok: samples, yields and deadlocks through --host are the agent's"

# Exact counts agree with locktop's own; samples are each one's draw.
live_yields=$(rows_of spin "$y" "$live_final" yield | jq 'map(.yields) | add // 0')
host_yields=$(jq 'map(.yields) | add // 0' <<<"$yield")
[ "$host_yields" = 5000 ] && [ "$live_yields" = 5000 ] ||
	fail "yields: --host $host_yields, locktop $live_yields, want 5000"
live_dl=$(rows_of fcntl dl.dat "$live_final" | jq 'map(.deadlocks) | add // 0')
host_dl=$(jq 'map(.deadlocks) | add // 0' <<<"$file")
[ "$host_dl" = 1 ] && [ "$live_dl" = 1 ] ||
	fail "deadlocks: --host $host_dl, locktop $live_dl, want 1"
live_samples=$(rows_of spin "$sp" "$live_final" | jq 'map(.samples) | add // 0')
[ "$live_samples" -gt 0 ] || fail "locktop saw no samples"
echo "ok: yields $host_yields and deadlocks $host_dl as locktop counts them"

# The mutex that process A held from its thread "a-holder" while B
# waited: the futex lock that names A among its holders, in either view.
a=$(jq .a "$tmpdir/h.json")
a_tid=$(jq .a_tid "$tmpdir/h.json")
holders_of() {
	jq -c --argjson a "$a" '[.locks[] | select(.kind == "futex" and
		any(.holders[]; .pid == $a)) |
		[.holders[] | {pid, comm, tid, thread}]]' <<<"$1"
}
host_holders=$(holders_of "$host_final")
live_holders=$(holders_of "$live_final")
echo "holders: --host $host_holders, locktop $live_holders"
jq -e --argjson a "$a" --argjson t "$a_tid" 'length == 1 and
	.[0][0] == {"pid": $a, "comm": "holder", "tid": $t,
		    "thread": "a-holder"}' <<<"$live_holders" >/dev/null ||
	fail "locktop's holder is not A's thread $a_tid/a-holder: $live_holders"
[ "$host_holders" = "$live_holders" ] ||
	fail "holders: --host $host_holders, locktop $live_holders"
echo "ok: the mutex's holders through --host are locktop's, thread $a_tid/a-holder included"

check_agent_log
echo PASS
