#!/usr/bin/env bash
# A fleet of three PCP hosts on this machine (hosts.sh), each tracing its
# own lockbench: locktop --host shows every host's locks under its name,
# with the agents' own figures; a host stopped mid-run is marked down
# while the others go on, and comes back; pmlogger on each host feeds
# pmproxy with a private redis-server, and pmseries and locktop --series
# find each host's hottest lock, of the kind its agent says (fcntl on
# fleet-b); a record of the fleet compares with itself.
# Usage: fleet.sh PMDALOCKTOP PMDA_SRC_DIR LOCKBENCH LOCKTOP
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hosts.sh"
require_bpf
agent=$(realpath "$1")
src=$(realpath "$2")
lockbench=$(realpath "$3")
locktop=$(realpath "$4")
command -v redis-server >/dev/null || skip "redis-server is not installed"
fleet_setup "$agent" "$src"

names=(fleet-a fleet-b fleet-c)
ports=(24431 24432 24433)
kinds=(mutex fcntl ofd)
hosts=$(printf '127.0.0.1:%s,' "${ports[@]}")
hosts=${hosts%,}
rport=26391 pport=24434

for i in 0 1 2; do
	host_start "${names[$i]}" "${ports[$i]}"
	# The host's workload, held until the go file appears.
	(
		while [ ! -e "$tmpdir/go" ]; do sleep 0.1; done
		exec "$lockbench" --lock "${kinds[$i]}" -n 4 -l 4000 -H 1 \
			--hold-us 20 -p "$tmpdir/bench-${names[$i]}.tdb" \
			>"$tmpdir/lb-${names[$i]}.out"
	) &
	host_trace "${names[$i]}" "${ports[$i]}" $!
done
echo "ok: three hosts, each tracing its own lockbench"

# Redis and pmproxy, private; pmproxy loads what the archives under
# $tmpdir/archives hold into redis as pmlogger writes them.
series_start "$rport" "$pport" true
cat >"$tmpdir/logger.conf" <<EOF
log mandatory on 1 sec {
	locktop.lock.wait.time
	locktop.lock.wait.count
	locktop.lock.kind
	locktop.deadlock.count
}
EOF
for i in 0 1 2; do
	mkdir -p "$tmpdir/archives/${names[$i]}"
	(cd "$tmpdir/archives/${names[$i]}" &&
		exec pmlogger -h "127.0.0.1:${ports[$i]}" -c "$tmpdir/logger.conf" \
			-t 1 -l "$tmpdir/pmlogger-${names[$i]}.log" "${names[$i]}") &
	fleet_pids="$fleet_pids $!"
done

# One view of the three while the workloads run and end.
"$locktop" --host "$hosts" -b --json -d 1 -n 16 >"$tmpdir/all.json" \
	2>"$tmpdir/all.err" &
lt=$!
# The same view as text, for the log: its summary of the run.
"$locktop" --host "$hosts" -b -d 1 -n 16 -l 12 >"$tmpdir/all.txt" 2>&1 &
txt=$!
sleep 2
touch "$tmpdir/go"
wait "$lt" || fail "locktop --host failed: $(cat "$tmpdir/all.err")"
wait "$txt" || true
sed -n '/^locktop summary/,$p' "$tmpdir/all.txt"
for i in 0 1 2; do
	grep -q OK "$tmpdir/lb-${names[$i]}.out" ||
		fail "lockbench on ${names[$i]}: $(cat "$tmpdir/lb-${names[$i]}.out")"
done
final=$(tail -n 1 "$tmpdir/all.json")
jq -e '.final and (.hosts | length == 3) and all(.hosts[]; .state == "up")' \
	<<<"$final" >/dev/null || fail "hosts: $(jq -c .hosts <<<"$final")"
for i in 0 1 2; do
	h=127.0.0.1:${ports[$i]} bench=bench-${names[$i]}.tdb
	# Every lock of this host's bench is shown under this host's name.
	jq -e --arg h "$h" --arg b "$bench" '[.locks[] |
		select(.name | contains($b))] | length > 0 and
		all(.host == $h and (.key | endswith("@" + $h)))' <<<"$final" \
		>/dev/null || fail "$h: $(jq -c '[.locks[] | {host, name}]' <<<"$final")"
	ours=$(jq --arg h "$h" --arg b "$bench" '[.locks[] | select(.host == $h and
		(.name | contains($b))) | .wait_ns] | add' <<<"$final")
	agent_own=$(host_sum "${ports[$i]}" "$bench")
	within "${names[$i]} wait time" "$ours" "$agent_own" 2 "the agent"
	ours=$(jq --arg h "$h" --arg b "$bench" '[.locks[] | select(.host == $h and
		(.name | contains($b))) | .waits] | add' <<<"$final")
	agent_own=$(host_sum "${ports[$i]}" "$bench" locktop.lock.wait.count)
	within "${names[$i]} waits" "$ours" "$agent_own" 2 "the agent"
	# No other host's bench under this host.
	for j in 0 1 2; do
		[ "$i" = "$j" ] && continue
		jq -e --arg h "$h" --arg b "bench-${names[$j]}" '[.locks[] |
			select(.host == $h and (.name | contains($b)))] | length == 0' \
			<<<"$final" >/dev/null || fail "$h shows ${names[$j]}'s locks"
	done
done
# The locks are ranked across hosts: worst first, whoever's they are.
jq -e '[.locks[].wait_ns] as $w | $w == ($w | sort | reverse)' <<<"$final" \
	>/dev/null || fail "locks not ranked across hosts"
echo "ok: each host's locks under its own name, within 2% of its agent"
# Each host's hottest lock, by its agent's own figures, and its kind.
for i in 0 1 2; do
	pminfo -h "127.0.0.1:${ports[$i]}" -f locktop.lock.wait.time |
		sed -n 's/.* or "\(.*bench-[^"]*\)"\] value \([0-9]*\)/\2 \1/p' |
		sort -n | tail -n 1 | cut -d' ' -f2- >"$tmpdir/hottest-${names[$i]}"
	pminfo -h "127.0.0.1:${ports[$i]}" -f locktop.lock.kind |
		awk -v n="\"$(cat "$tmpdir/hottest-${names[$i]}")\"]" '
			index($0, n) && /value/ { gsub(/"/, "", $NF); print $NF }' \
		>"$tmpdir/kind-${names[$i]}"
done
[ "$(cat "$tmpdir/kind-fleet-b")" = fcntl ] ||
	fail "fleet-b's agent calls its hottest lock a '$(cat "$tmpdir/kind-fleet-b")'"

# A host stopped mid-run is down, the others go on; it comes back.
"$locktop" --host "$hosts" -b --json -d 1 -n 18 >"$tmpdir/down.json" \
	2>"$tmpdir/down.err" &
lt=$!
sleep 3.5
host_stop fleet-c
sleep 4
host_start fleet-c "${ports[2]}"
wait "$lt" || fail "locktop exited when a host went down: $(cat "$tmpdir/down.err")"
c=127.0.0.1:${ports[2]}
jq -e -s --arg c "$c" '[.[] | select(.final != true) | .hosts[] |
	select(.name == $c) | .state] | index("down") != null' \
	"$tmpdir/down.json" >/dev/null ||
	fail "fleet-c never down: $(jq -c .hosts "$tmpdir/down.json")"
jq -e -s --arg c "$c" '[.[] | select(.final != true) |
	select(any(.hosts[]; .name == $c and .state == "down"))] |
	length > 0 and all(
		([.hosts[] | select(.name != $c) | .state] == ["up", "up"]) and
		(.hosts[] | select(.name == $c) | .why | length > 0) and
		all(.locks[]; .host != $c))' "$tmpdir/down.json" >/dev/null ||
	fail "while down: $(jq -c '[.hosts, [.locks[].host]]' "$tmpdir/down.json")"
tail -n 2 "$tmpdir/down.json" | head -n 1 |
	jq -e --arg c "$c" '.hosts[] | select(.name == $c) | .state == "up"' \
		>/dev/null || fail "fleet-c did not come back: $(tail -n 2 "$tmpdir/down.json" | jq -c .hosts)"
echo "ok: a stopped host is marked down, the others go on, it comes back"

# A record of the fleet, and diff against itself.
"$locktop" record --host "$hosts" -o "$tmpdir/fleet.rec" --duration 2 \
	2>"$tmpdir/rec.err" || fail "record --host: $(cat "$tmpdir/rec.err")"
"$locktop" diff "$tmpdir/fleet.rec" "$tmpdir/fleet.rec" >"$tmpdir/diff.txt" ||
	fail "diff of a fleet record: $(cat "$tmpdir/diff.txt")"
echo "ok: locktop record --host, and diff"

# Fleet history: each host's series, and its hottest lock.
# series QUERY: whether pmseries selects a series by QUERY within 20 s:
# pmproxy loads the archives as they grow, and indexes their labels
# after, a few seconds behind.
series() {
	local try
	for try in $(seq 40); do
		pmseries -p "$rport" "$1" | grep -q . && return 0
		sleep 0.5
	done
	return 1
}
for i in 0 1 2; do
	series "locktop.lock.wait.time{hostname==\"${names[$i]}\"}" ||
		fail "pmseries has no series of ${names[$i]}: $(tail -n 5 "$tmpdir/proxy/pmproxy.log")"
done
# Instances carry their lock's name and kind as labels. (pmlogger asks
# for a new instance's labels when it first logs it; one the agent has
# already let go by then has only the host's.)
id=$(pmseries -p "$rport" 'locktop.lock.wait.time{hostname=="fleet-b"}' | head -n 1)
pmseries -p "$rport" -l "$id" | grep -q '"lock_kind":"[a-z-]*","lock_name":"' ||
	fail "pmseries: no lock_name and lock_kind labels: $(pmseries -p "$rport" -l "$id")"
series 'locktop.lock.wait.time{lock_kind=="kernel" || lock_kind=="fcntl" || lock_kind=="futex" || lock_kind=="ofd"}' ||
	fail "pmseries: no series selected by the lock_kind label"
"$locktop" --series "127.0.0.1:$pport" --window 5m -b --json \
	>"$tmpdir/series.json" 2>"$tmpdir/series.err" ||
	fail "locktop --series: $(cat "$tmpdir/series.err")"
fin=$(tail -n 1 "$tmpdir/series.json")
timeout 60 "$locktop" --series "127.0.0.1:$pport" --window 5m -b -n 1 -l 12 2>&1 || true
jq -c "[.hosts[].name, (.locks[:6][] | [.host, .name, .kind, .wait_ns])]" <<<"$fin"
for i in 0 1 2; do
	want=$(cat "$tmpdir/hottest-${names[$i]}")
	top=$(jq -c --arg h "${names[$i]}" '[.locks[] | select(.host == $h and
		(.name | contains("bench-")))][0] | {name, kind}' <<<"$fin")
	got=$(jq -r .name <<<"$top")
	# The name in the labels may be the instance's without its tag
	# ([pid:N] or [id:N] in its first word, where two locks have one).
	got=${got##*/}
	want=$(sed -E 's/\[(pid|id):[0-9]+\]//' <<<"${want##*/}")
	[ -n "$want" ] && [ "$got" = "$want" ] ||
		fail "${names[$i]}: --series' top lock is '$got', the agent's '$want'"
	# Its kind is the agent's (fcntl on fleet-b), not a default.
	want=$(cat "$tmpdir/kind-${names[$i]}")
	[ -n "$want" ] && [ "$(jq -r .kind <<<"$top")" = "$want" ] ||
		fail "${names[$i]}: --series' top lock is $top, the agent's kind '$want'"
	echo "${names[$i]}: hottest lock over the window: $top"
done
echo "ok: pmseries and locktop --series"
echo PASS
