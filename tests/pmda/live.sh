#!/usr/bin/env bash
# pmdalocktop under the real pmcd, while lockbench fights over mutexes:
# values, rates, the top-N bound, help text, root-only controls,
# retiring what ended processes leave, a kernel lock's type and caller
# through locktop --host, pmproxy's REST API and the dashboards' metric
# names, SIGKILL and restart, Remove leaving no probe behind, and -I
# loading no I/O program.
# Usage: live.sh PMDALOCKTOP PMDA_SRC_DIR LOCKBENCH LOCKTOP MANYLOCKS KCONTEND
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
pmda_setup "$1" "$2"
lockbench=$(realpath "$3")
locktop=$(realpath "$4")
manylocks=$(realpath "$5")
kcontend=$(realpath "$6")
pmcd_log=$PCP_LOG_DIR/pmcd/pmcd.log
log_start=$(wc -l <"$pmcd_log" 2>/dev/null || echo 0)
segv_start=$(segfaults)

background lockbench_loop "$lockbench" --lock mutex -n 8 -l 100000 -H 16 \
	-p "$tmpdir/bench.tdb"
step "installing"
install_agent
wait_ready 20 || fail "the agent did not become ready"

step "values and help"
# pminfo -f shows values; every metric and instance domain has help.
pminfo -f locktop >"$tmpdir/values" 2>&1
grep -q 'value' "$tmpdir/values" || fail "pminfo -f locktop shows no values"
n_metrics=$(pminfo locktop | wc -l)
[ "$n_metrics" -ge 60 ] || fail "only $n_metrics metrics"
pminfo -tT locktop >"$tmpdir/help" 2>&1
if grep -q 'not available' "$tmpdir/help"; then
	grep -B1 'not available' "$tmpdir/help" >&2
	fail "metrics without help text"
fi
[ "$(grep -c '^Help:' "$tmpdir/help")" -eq "$n_metrics" ] ||
	fail "not every metric has long help"
for m in lock.wait.time kind.wait.time proc.wait.time file.io.time \
	probe.prog.runs hist.wait; do
	indom=$(pminfo -d "locktop.$m" | sed -n 's/.*InDom: \([0-9.]*\) .*/\1/p')
	[ -n "$indom" ] || fail "locktop.$m has no instance domain"
	pminfo -tT "$indom" | grep -q '^Help:' &&
		pminfo -t "$indom" | grep -q "$indom .*\[" ||
		fail "instance domain $indom has no help"
done
pminfo -f locktop.control.io | grep -q 'value 1$' ||
	fail "locktop.control.io is not 1: $(pminfo -f locktop.control.io)"
pminfo -d locktop.lock.wait.time | grep -q 'Semantics: counter' ||
	fail "lock.wait.time is not a counter"
pminfo -d locktop.lock.wait.time | grep -q 'Units: nanosec' ||
	fail "lock.wait.time is not in nanoseconds"
# Drops keep their reasons: one instance each, named as in the JSON.
n=$(pmprobe locktop.probe.drop_reasons | awk '{ print $2 }')
[ "$n" = 10 ] || fail "locktop.probe.drop_reasons has $n instances, not 10"
pminfo -f locktop.probe.drop_reasons | grep -q '"locks_full"\] value' ||
	fail "no locks_full instance of locktop.probe.drop_reasons"

# Wait until lockbench's locks are among the instances.
for i in $(seq 20); do
	pminfo -f locktop.lock.name 2>/dev/null | grep -q 'bench\.tdb' && break
	sleep 0.5
done
insts=$(pminfo -f locktop.lock.name | sed -n 's/.* or "\(.*bench\.tdb[^"]*\)"\].*/\1/p' |
	paste -sd, -)
[ -n "$insts" ] || fail "no instance for lockbench's locks"

step "pmval"
# pmval turns the wait-time counter into non-zero rates for them.
pmval -s 3 -t 1 -f 3 -i "$insts" locktop.lock.wait.time >"$tmpdir/pmval" 2>&1 ||
	{ cat "$tmpdir/pmval" >&2; fail "pmval failed"; }
awk '/^ *[0-9.?!]+( +[0-9.?!]+)* *$/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/ && $i + 0 > 0) found = 1
	} END { exit !found }' "$tmpdir/pmval" ||
	{ cat "$tmpdir/pmval" >&2; fail "pmval shows no wait-time rate"; }

# The lock instance domain stays within the top N plus "other".
n=$(pmprobe locktop.lock.wait.time | awk '{ print $2 }')
top=$(metric_value locktop.control.top)
[ "$n" -ge 2 ] && [ "$n" -le $((top + 1)) ] ||
	fail "$n lock instances with top $top"
pminfo -f locktop.lock.kind | grep -q '"other"\] value "other"' ||
	fail "no \"other\" instance"
# PCP compares instance names up to the first space: no two instances
# of any metric are alike there.
pminfo -f locktop >"$tmpdir/all" 2>&1
awk '/^[a-z]/ { m = $1; next }
	/ inst \[/ {
		s = $0; sub(/.* or "/, "", s); sub(/"\] value.*/, "", s)
		h = s; sub(/ .*/, "", h)
		if ((m, h) in seen) {
			print m ": \"" seen[m, h] "\" and \"" s "\""; bad = 1
		}
		seen[m, h] = s; n++
	}
	END { exit bad || !n }' "$tmpdir/all" ||
	fail "instances alike up to the first space (or none)"

step "kernel locks"
# kcontend's appends contend on the file's i_rwsem: locktop reading the
# agent (--host) shows the kernel row with the agent's type and caller.
"$kcontend" --mode append -n 4 -t 10 --path "$tmpdir/app.dat" >/dev/null &
kc=$!
bg_pids="$bg_pids $kc"
inst=
for i in $(seq 30); do
	inst=$(pminfo -f locktop.lock.kernel_type 2>/dev/null |
		sed -n 's/.*inst \[\([0-9]*\) or "i_rwsem of [^"]*app\.dat[^"]*"\].*/\1/p')
	[ -n "$inst" ] && break
	sleep 0.25
done
[ -n "$inst" ] || fail "the agent shows no i_rwsem of app.dat: $(pminfo -f \
	locktop.lock.kernel_type | grep -v 'value ""' | head -c 1500)"
agent_value() {
	pminfo -f "$1" | sed -n "s/.*inst \[$inst or .*\] value \"\(.*\)\"\$/\1/p"
}
type=$(agent_value locktop.lock.kernel_type) caller=$(agent_value locktop.lock.caller)
"$locktop" --host local: --batch --json -d 1 -n 2 >"$tmpdir/host.json" \
	2>"$tmpdir/host.err" || fail "locktop --host failed: $(cat "$tmpdir/host.err")"
row=$(jq -c -s '[.[] | .locks[]? | select(.kind == "kernel" and
	(.name | test("^i_rwsem of .*app\\.dat")))] | last // empty |
	{name, kernel_type, caller}' "$tmpdir/host.json")
echo "agent: $type, $caller; locktop --host: $row"
[ -n "$row" ] || fail "locktop --host shows no i_rwsem of app.dat: $(jq -c \
	'[.locks[]? | select(.kind == "kernel") | .name]' "$tmpdir/host.json")"
[[ $type == rwsem-read || $type == rwsem-write ]] ||
	fail "the agent names an rwsem a '$type'"
[ -n "$caller" ] || fail "the agent gives no caller"
jq -e --arg t "$type" --arg c "$caller" '.kernel_type == $t and .caller == $c' \
	<<<"$row" >/dev/null || fail "locktop --host: $row, the agent: $type, $caller"
io=$(jq -r -s 'last | .file_io' "$tmpdir/host.json")
[ "$io" = traced ] || fail "locktop --host: file_io '$io' from an agent tracing I/O"
kill "$kc" 2>/dev/null || true
wait "$kc" 2>/dev/null || true

step "controls"
# Controls are root's: nobody is refused, root is obeyed.
if command -v setpriv >/dev/null; then
	if setpriv --reuid=65534 --regid=65534 --clear-groups \
		pmstore locktop.control.top 3 >"$tmpdir/store" 2>&1; then
		fail "an unprivileged pmstore was accepted"
	fi
	grep -q 'No permission' "$tmpdir/store" ||
		{ cat "$tmpdir/store" >&2; fail "unexpected pmstore error"; }
fi
pmstore locktop.control.top 3 >/dev/null || fail "root's pmstore refused"
sleep 2.5
n=$(pmprobe locktop.lock.wait.time | awk '{ print $2 }')
[ "$n" -le 4 ] || fail "$n lock instances after top 3"
pmstore locktop.control.top 20 >/dev/null

step "retire"
# A process's private locks leave the agent locktop.control.retire
# seconds after it ended.
pmstore locktop.control.retire 1 >/dev/null || fail "retire store refused"
[ "$(metric_value locktop.control.retire)" = 1 ] || fail "retire did not stick"
before=$(metric_value locktop.locks)
slots=$(metric_value locktop.probe.lock_entries)
[ "$(metric_value locktop.probe.lock_capacity)" = 16384 ] ||
	fail "lock_capacity is not the map's 16384 slots"
# Its locks stay active for 2 s, in the kernel's map all the while.
"$manylocks" 3000 2 >/dev/null &
ml=$!
# lockbench's loop starts and ends processes too: theirs come and go.
peak=0 slots_peak=0
for i in $(seq 20); do
	n=$(metric_value locktop.locks)
	[ "$n" -gt "$peak" ] && peak=$n
	k=$(metric_value locktop.probe.lock_entries)
	[ "$k" -gt "$slots_peak" ] && slots_peak=$k
	[ "$n" -ge $((before + 2900)) ] &&
		[ "$slots_peak" -ge $((slots + 2900)) ] && break
	sleep 0.25
done
wait "$ml" || fail "manylocks failed"
echo "kernel lock slots: $slots before manylocks, $slots_peak with it"
[ "$slots_peak" -ge $((slots + 2900)) ] ||
	fail "the lock slots in use did not show manylocks' locks"
for i in $(seq 40); do
	n=$(metric_value locktop.locks)
	[ "$n" -lt $((before + 500)) ] && break
	sleep 0.25
done
echo "locks: $before before manylocks, $peak with its 3000, $n after it ended"
[ "$peak" -ge $((before + 2900)) ] || fail "manylocks' locks never showed"
[ "$n" -lt $((before + 500)) ] || fail "an ended process's locks stayed: $n"
pmstore locktop.control.retire 60 >/dev/null

step "stacks"
# Stacks reload the probes: they take effect, or the agent says why
# not and goes back to what worked.
opens=$(metric_value locktop.opens)
pmstore locktop.control.stacks 1 >/dev/null || fail "stacks store refused"
sleep 1
wait_ready 20 || fail "not ready after turning stacks on"
for i in $(seq 20); do
	[ "$(metric_value locktop.opens)" -gt "$opens" ] && break
	sleep 0.25
done
stacks=$(metric_value locktop.control.stacks)
err=$(pmprobe -v locktop.control.error | sed -n 's/^[^ ]* 1 "\(.*\)"$/\1/p')
if [ "$stacks" = 1 ]; then
	[ -z "$err" ] || fail "stacks on, but an error: $err"
else
	[ -n "$err" ] || fail "stacks stayed off without a reason"
	echo "stacks not available: $err"
fi

step "pid filter"
# A pid filter: the probes reload tracing only that process. (The
# restart below brings the defaults back.)
sleep 600 &
sleeper=$!
bg_pids="$bg_pids $sleeper"
pmstore locktop.control.pids "$sleeper" >/dev/null || fail "pids store refused"
sleep 1
wait_ready 20 || fail "not ready after a pid filter"
pminfo -f locktop.control.pids | grep -q "\"$sleeper\"" ||
	fail "the pid filter did not stick: $(metric_value locktop.control.error)"

step "REST and dashboards"
# pmproxy's REST API, the path the dashboards use.
if curl -s --max-time 5 http://localhost:44322/pmapi/context >/dev/null; then
	curl -s --max-time 10 \
		'http://localhost:44322/pmapi/fetch?names=locktop.lock.wait.time' \
		>"$tmpdir/rest.json"
	jq -e '.values[0].name == "locktop.lock.wait.time" and
		(.values[0].instances | length) > 0' "$tmpdir/rest.json" \
		>/dev/null ||
		{ cat "$tmpdir/rest.json" >&2; fail "pmproxy serves no locktop values"; }
elif [ "${LOCKTOP_REQUIRE_BPF:-0}" = 1 ]; then
	fail "pmproxy does not answer on port 44322"
else
	echo "SKIP (part): pmproxy is not running"
fi

# The dashboards and views name only metrics that exist.
jq -e '.panels | length > 0' "$pmda_src/locktop-grafana.json" >/dev/null ||
	fail "the Grafana dashboard does not parse"
{
	jq -r '.. | objects | .expr? // empty' "$pmda_src/locktop-grafana.json"
	sed -n 's/.*Metric \(locktop[a-z_.]*\).*/\1/p' "$pmda_src/locktop.pmchart"
	grep -o '^locktop\.[a-z_.]*' "$pmda_src/locktop.pmrep.conf"
	grep -o '^[[:space:]]*locktop\.[a-z_.]*' "$pmda_src/pmlogconf.summary"
} | grep -o 'locktop\.[a-z_.]*[a-z_]' | sort -u >"$tmpdir/named"
[ -s "$tmpdir/named" ] || fail "no metric names in the dashboards"
while read -r m; do
	pminfo "$m" >/dev/null 2>&1 || fail "$m, named in a dashboard, does not exist"
done <"$tmpdir/named"
pmrep -c "$pmda_src/locktop.pmrep.conf" -s 2 -t 1 :locktop >"$tmpdir/pmrep" 2>&1 ||
	{ cat "$tmpdir/pmrep" >&2; fail "pmrep :locktop failed"; }

step "SIGKILL"
# SIGKILL: pmcd notices, the kernel drops the probes, SIGHUP restarts.
pid=$(agent_pid)
[ -n "$pid" ] || fail "no agent process"
ids=$(prog_ids_of "$pid")
[ -n "$ids" ] || fail "the agent holds no BPF programs"
kill -KILL "$pid"
# pmcd notices a dead agent when it next talks to it.
for i in $(seq 40); do
	pminfo -f locktop.status >/dev/null 2>&1 || true
	tail -n +"$((log_start + 1))" "$pmcd_log" | grep -q 'Cleanup "locktop" agent.*signal(9)' &&
		break
	sleep 0.25
done
tail -n +"$((log_start + 1))" "$pmcd_log" | grep -q 'Cleanup "locktop" agent' ||
	fail "pmcd did not report the killed agent"
wait_progs_gone "$ids" 10 || fail "probes left after SIGKILL"
pmsignal -a -s HUP pmcd >/dev/null 2>&1 || fail "pmsignal failed"
sleep 1
wait_ready 20 || fail "the agent did not come back after SIGHUP"
newpid=$(agent_pid)
[ -n "$newpid" ] && [ "$newpid" != "$pid" ] || fail "no new agent process"
pminfo -f pmcd.agent.status | grep -q '"locktop"\] value 0' ||
	fail "pmcd does not report the agent as running"

step "Remove"
# Remove: pmcd keeps running, the agent and its probes are gone.
ids=$(prog_ids_of "$newpid")
remove_agent || { cat "$tmpdir/remove.log" >&2; fail "Remove failed"; }
pminfo -f pmcd.version >/dev/null 2>&1 || fail "pmcd died on Remove"
if pminfo locktop >/dev/null 2>&1; then fail "locktop metrics are still there"; fi
for i in $(seq 20); do
	alive "$newpid" || break
	sleep 0.25
done
alive "$newpid" && fail "the agent still runs after Remove"
wait_progs_gone "$ids" 10 || fail "probes left after Remove"

step "-I"
# -I: the agent loads no pread or pwrite program, and still traces locks.
install_agent -I
wait_ready 20 || fail "the agent with -I did not become ready"
pid=$(agent_pid)
names=$(for id in $(prog_ids_of "$pid"); do
	/usr/sbin/bpftool prog show id "$id" -j 2>/dev/null | jq -r '.name // empty'
done | sort -u)
grep -qx lt_futex_enter <<<"$names" || fail "-I: no futex program loaded: $names"
if grep -q '^lt_p\(read\|write\)' <<<"$names"; then
	fail "-I: I/O programs loaded: $(grep '^lt_p' <<<"$names" | tr '\n' ' ')"
fi
pminfo -f locktop.control.io | grep -q 'value 0$' ||
	fail "-I: locktop.control.io is not 0: $(pminfo -f locktop.control.io)"
# locktop --host says so, as the local --no-io does.
"$locktop" --host local: --batch --json -d 0.5 -n 2 >"$tmpdir/host-noio.json" \
	2>"$tmpdir/host.err" || fail "locktop --host (-I) failed: $(cat "$tmpdir/host.err")"
io=$(jq -r -s 'last | .file_io' "$tmpdir/host-noio.json")
[ "$io" = off ] || fail "locktop --host: file_io '$io' from an agent started with -I"
ids=$(prog_ids_of "$pid")
remove_agent || { cat "$tmpdir/remove.log" >&2; fail "Remove after -I failed"; }
wait_progs_gone "$ids" 10 || fail "probes left after Remove (-I)"

# The agent crashed nowhere else and its sanitizers found nothing.
# (pmcd gives the exit status only when it has reaped the agent.)
tail -n +"$((log_start + 1))" "$pmcd_log" | grep 'Cleanup "locktop" agent' |
	grep 'signal(' | grep -v 'signal(9)' >"$tmpdir/cleanups" || true
[ -s "$tmpdir/cleanups" ] && { cat "$tmpdir/cleanups" >&2; fail "the agent failed"; }
[ "$(segfaults)" = "$segv_start" ] || fail "the agent crashed (dmesg)"
check_agent_log
echo "OK"
