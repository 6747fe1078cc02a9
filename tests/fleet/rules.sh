#!/usr/bin/env bash
# pmie with pmdalocktop's pmieconf rules (pmda/pmieconf): the deadlock
# rule fires on a host where tests/deadlock makes a cycle, and no rule
# fires on an idle host.
# Usage: rules.sh PMDALOCKTOP PMDA_SRC_DIR DEADLOCK
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hosts.sh"
require_bpf
agent=$(realpath "$1")
src=$(realpath "$2")
deadlock=$(realpath "$3")
fleet_setup "$agent" "$src"

# The shipped rules and PCP's global actions, with the action a shell
# echo to pmie's output, every second.
rules=$PCP_VAR_DIR/config/pmieconf/global:$src/pmieconf
conf=$tmpdir/pmie.conf
for set in "syslog_action no" "user_action yes" "delta 1sec" "holdoff 0"; do
	# shellcheck disable=SC2086
	pmieconf -r "$rules" -f "$conf" modify global $set ||
		fail "pmieconf modify global $set"
done
for r in deadlock lock_wait probe_drops probe_cpu; do
	grep -q "^locktop.$r =" "$conf" || fail "pmieconf did not make rule $r"
done
pmieconf -r "$rules" -f "$conf" list locktop >"$tmpdir/list"
[ "$(grep -c '  help: ' "$tmpdir/list")" = 4 ] || fail "a rule without help"
echo "ok: pmieconf makes the four rules, each with help"

# run_pmie PORT SECONDS: pmie's output over that time, every rule's
# truth at every evaluation (-v) and the actions' echoes.
run_pmie() {
	pmie -U root -v -T "$2sec" -h "127.0.0.1:$1" -c "$conf" \
		>"$tmpdir/pmie-$1.out" 2>&1 || true
	grep -q '^locktop.deadlock.*: *false\|^locktop.deadlock.*: *true' \
		"$tmpdir/pmie-$1.out" ||
		fail "pmie did not evaluate: $(cat "$tmpdir/pmie-$1.out")"
}

# An idle host: its agent traces one sleeping process.
host_start idle 24441
sleep 600 &
host_trace idle 24441 $!
run_pmie 24441 8
if grep -q 'locktop:' "$tmpdir/pmie-24441.out"; then
	cat "$tmpdir/pmie-24441.out" >&2
	fail "a rule fired on an idle host"
fi
grep -q ': *true' "$tmpdir/pmie-24441.out" &&
	fail "a rule is true on an idle host: $(cat "$tmpdir/pmie-24441.out")"
echo "ok: quiet on an idle host"

# A host with a deadlock: two processes wait on each other's mutex.
host_start locked 24442
(
	while [ ! -e "$tmpdir/go" ]; do sleep 0.1; done
	exec "$deadlock" mutex "$tmpdir/dl.dat" 12 >"$tmpdir/dl.out"
) &
host_trace locked 24442 $!
touch "$tmpdir/go"
run_pmie 24442 10
grep -q 'locktop: deadlock found' "$tmpdir/pmie-24442.out" ||
	fail "the deadlock rule did not fire: $(cat "$tmpdir/pmie-24442.out")"
grep 'locktop: deadlock found' "$tmpdir/pmie-24442.out" | head -n 1
echo PASS
