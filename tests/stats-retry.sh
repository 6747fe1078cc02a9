#!/usr/bin/env bash
# The probes load on an idle host: the first sampling window measures a
# few cold runs, many times dearer than warm ones. Once the probes are
# busy they are measured again at once, so no busy interval is charged
# at the cold cost: each costs within a few times the warm figure that
# the many runs of the end measured, and never more than the host's CPUs.
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf

cpus=$(nproc)
"$locktop" --batch --json --delay 0.5 --iterations 14 --output "$tmpdir/lt.json" &
lt=$!
# Idle past the first window (a second at most, from the attach; loading
# and verifying the probes before it takes seconds), then busy.
wait_attached "$lt" || fail "locktop did not attach"
sleep 1.5
# Busy for three seconds, however fast this host runs one lockbench:
# several busy intervals to judge by.
end=$((SECONDS + 3))
while [ "$SECONDS" -lt "$end" ]; do
	"$lockbench" --lock mutex -n 8 -l 50000 -H 4 --path "$tmpdir/t.tdb" \
		>/dev/null || fail "lockbench failed"
done
wait "$lt" || fail "locktop failed"
busy='select((.final | not) and .probes.events >= 20000)'
warm=$(jq -s "map($busy) | last | .probes.ns_per_event" "$tmpdir/lt.json")
jq -c "$busy | .probes | {events, ns_per_event, cpu_percent}" "$tmpdir/lt.json"
n=$(jq -s "map($busy) | length" "$tmpdir/lt.json")
echo "$n busy intervals; the last measured $warm ns per event"
[ "$n" -ge 2 ] || fail "too few busy intervals to judge"
dear=$(jq -s --argjson w "$warm" "map($busy | select(.probes.ns_per_event > 4 * \$w)) | length" "$tmpdir/lt.json")
[ "$dear" = 0 ] || fail "$dear busy intervals charged at more than 4x the warm cost"
over=$(jq -s --argjson c "$cpus" 'map(select(.probes.cpu_percent > 100 * $c)) | length' "$tmpdir/lt.json")
# The summary's share is the whole run's: its runs times their mean cost
# over its elapsed time.
jq -e '(.probes.events * .probes.ns_per_event / (.elapsed_s * 1e7)) as $want
	| (.probes.cpu_percent - $want) | fabs < 0.01 * $want + 0.001' \
	<<<"$(tail -n 1 "$tmpdir/lt.json")" >/dev/null ||
	fail "the summary's cpu_percent is not its runs' cost over the run"
[ "$over" = 0 ] || fail "$over intervals whose probes used more CPU than the host has"
echo PASS
