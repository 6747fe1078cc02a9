#!/usr/bin/env bash
# In a PID namespace of its own (a container without --pid=host), locktop
# traces and names processes by that namespace's PIDs, which the kernel's
# probes do not see by themselves: `-- COMMAND` and `-p PID` find their
# processes, holders and waiters are the PIDs lockbench knows itself by,
# and the figures agree with lockbench's truth. Without a filter (as the
# PCP agent runs), the processes of the outer namespace, which the
# namespace cannot name, are left out. A /proc of another namespace is
# refused. Usage: pidns.sh LOCKTOP LOCKBENCH
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"

# ns COMMAND...: COMMAND in a PID namespace of its own, with its own
# /proc. --mount-proc would make / private first, which fails in a
# chroot (its root is not a mount point), so the new mount namespace
# makes just /proc a slave, which sends nothing back, and mounts there.
cat >"$tmpdir/ns" <<'EOF'
#!/bin/sh
exec unshare --pid --fork --mount --propagation unchanged sh -c \
	'mount --make-rslave /proc && mount -t proc proc /proc && exec "$@"' \
	ns "$@"
EOF
chmod +x "$tmpdir/ns"
ns() { "$tmpdir/ns" "$@"; }
ns true 2>"$tmpdir/err" || skip "cannot make a PID namespace: $(cat "$tmpdir/err")"

# check TAG LOCKTOP_JSON LOCKBENCH_JSON BACKEND: the table's rows name
# lockbench's workers as they know themselves, and count what they did.
check() {
	local tag=$1 final truth=$3 backend=$4 rows bad
	final=$(tail -n 1 "$2")
	rows='[.locks[] | select(.kind != "kernel" and .kind != "spin") |
	select(.name | contains("table.tdb"))]'
	jq -e '.check == "OK"' "$truth" >/dev/null || fail "$tag: lockbench's check failed"
	[ "$(jq "$rows | length" <<<"$final")" -gt 0 ] ||
		fail "$tag: no rows for the table: $(jq -c '[.locks[].name]' <<<"$final")"
	echo "$tag: lockbench's workers $(jq -c .pids "$truth")," \
		"ours $(jq -c "[${rows}[] | .pids[]] | unique" <<<"$final")"
	bad=$(jq -c --slurpfile t "$truth" "[${rows}[] |
		(.pids[], .holders[].pid, .waiters[].pid)] | unique |
		map(select(. as \$p | \$t[0].pids | index(\$p) | not))" <<<"$final")
	[ "$bad" = "[]" ] || fail "$tag: PIDs that are not lockbench's workers: $bad"
	[ "$(jq "[${rows}[] | .holders[]] | length" <<<"$final")" -gt 0 ] ||
		fail "$tag: no holders named"
	ours() { jq "[${rows}[] | .$1] | add // 0" <<<"$final"; }
	[ "$(jq .contended "$truth")" -gt 50 ] ||
		fail "$tag: too little contention to judge: $(jq .contended "$truth")"
	within "$tag wait time" "$(ours wait_ns)" "$(jq .wait_ns "$truth")" 5
	case $backend in
	fcntl)
		within "$tag contended" "$(ours trylock_failures)" "$(jq .contended "$truth")" 5
		within "$tag acquisitions" "$(ours acquires)" "$(jq .acquires "$truth")" 5
		;;
	mutex)
		# As in accuracy.sh: the acquisitions that slept in the kernel.
		within "$tag contended" "$(ours contended)" "$(jq .slept "$truth")" 5
		;;
	esac
}

# -- COMMAND, locktop the namespace's init: robust mutexes, whose holders
# are the TIDs in their words.
ns "$locktop" --batch --json --delay 0.5 --output "$tmpdir/cmd.json" -- \
	"$lockbench" --lock mutex -n 16 -l 2000 -H 16 --hold-us 20 \
	--path "$tmpdir/table.tdb" --json >"$tmpdir/cmd-lb.json" ||
	fail "locktop -- lockbench in a PID namespace failed"
check "-- COMMAND" "$tmpdir/cmd.json" "$tmpdir/cmd-lb.json" mutex

# -p PID: fcntl locks, whose holders the kernel gives in its own PIDs.
# The process waits until the probes are on (the first table is out),
# takes a lock of its own, so that the probes know it by its first name,
# then becomes lockbench, whose workers join the traced set as it forks.
# It is named lockbench after: a process is named by what it last exec'd.
cat >"$tmpdir/p.sh" <<'EOF'
locktop=$1 lockbench=$2 dir=$3
mkfifo "$dir/go"
python3 -c '
import fcntl, os, sys
open(sys.argv[1] + "/go").read()
with open(sys.argv[1] + "/before-exec", "w") as f:
    fcntl.lockf(f, fcntl.LOCK_EX)
    fcntl.lockf(f, fcntl.LOCK_UN)
os.execv(sys.argv[2], sys.argv[2:])' "$dir" "$lockbench" \
	--lock fcntl -n 16 -l 2000 -H 16 --hold-us 20 --path "$dir/table.tdb" \
	--json >"$dir/p-lb.json" &
wl=$!
echo "$wl" >"$dir/p.pid"
"$locktop" --batch --json --delay 0.3 --output "$dir/p.json" -p "$wl" &
lt=$!
for _ in $(seq 100); do
	[ -s "$dir/p.json" ] && break
	sleep 0.1
done
echo go >"$dir/go"
wait "$wl" || exit 1
kill -INT "$lt"
wait "$lt"
EOF
ns bash "$tmpdir/p.sh" "$locktop" "$lockbench" "$tmpdir" ||
	fail "locktop -p in a PID namespace failed"
check "-p PID" "$tmpdir/p.json" "$tmpdir/p-lb.json" fcntl
wl=$(cat "$tmpdir/p.pid")
comm=$(jq -r --argjson p "$wl" '[.procs[] | select(.pid == $p) | .comm][0] // ""' \
	<<<"$(tail -n 1 "$tmpdir/p.json")")
jq -e 'any(.locks[].name; contains("before-exec"))' \
	<<<"$(tail -n 1 "$tmpdir/p.json")" >/dev/null ||
	fail "-p PID: the lock taken before the exec is missing"
[ "$comm" = lockbench ] || fail "-p PID: process $wl is not lockbench: '$comm'"

# Deeper: locktop two namespaces down, its command a third: named by
# locktop's numbers, which are not the ones lockbench knows itself by.
ns "$tmpdir/ns" "$locktop" --batch --json --delay 0.5 \
	--output "$tmpdir/deep.json" -- unshare --pid --fork "$lockbench" \
	--lock fcntl -n 4 -l 1000 -H 4 --hold-us 20 \
	--path "$tmpdir/deep.tdb" --json >"$tmpdir/deep-lb.json" ||
	fail "locktop two PID namespaces down failed"
final=$(tail -n 1 "$tmpdir/deep.json")
rows='[.locks[] | select(.kind != "kernel" and .kind != "spin") |
	select(.name | contains("deep.tdb"))]'
jq -c "${rows}[] | {name, acquires}" <<<"$final"
within "deeper acquisitions" "$(jq "[${rows}[] | .acquires] | add // 0" <<<"$final")" \
	"$(jq .acquires "$tmpdir/deep-lb.json")" 5
pids=$(jq -c "[${rows}[] | .pids[], .holders[].pid] | unique" <<<"$final")
echo "deeper: lockbench's workers $(jq -c .pids "$tmpdir/deep-lb.json") there, $pids here"
[ "$(jq length <<<"$pids")" = 4 ] || fail "deeper: not the 4 workers: $pids"

# No filter: a lockbench outside the namespace is not ours to name; the
# one inside is, by its PIDs there. The outer one runs all along, and
# ends with the test (its workers with it).
"$lockbench" --lock fcntl -n 2 -l 100000 -H 2 --think-us 500 \
	--path "$tmpdir/outer.tdb" >/dev/null &
outer=$!
trap 'kill "$outer" 2>/dev/null || true; rm -rf "$tmpdir"' EXIT
# The inner lockbench starts once locktop's probes are attached, which
# takes seconds (more under the sanitizers): started together, it could
# be done before locktop saw it.
cat >"$tmpdir/all.sh" <<'EOF'
locktop=$1 lockbench=$2 dir=$3
. "$4"
"$locktop" --batch --json --delay 0.5 -n 4 --output "$dir/all.json" &
lt=$!
wait_progs '^lt_pwritev2_x$' || { kill "$lt"; exit 1; }
"$lockbench" --lock fcntl -n 2 -l 8000 -H 2 --think-us 500 \
	--path "$dir/inner.tdb" --json >"$dir/all-lb.json" &
wl=$!
wait "$lt" || exit 1
wait "$wl"
EOF
ns bash "$tmpdir/all.sh" "$locktop" "$lockbench" "$tmpdir" \
	"$(dirname "$0")/attach.sh" ||
	fail "locktop without a filter in a PID namespace failed"
kill -0 "$outer" 2>/dev/null || fail "the outer lockbench ended too soon to judge"
kill "$outer"
wait "$outer" || true
final=$(tail -n 1 "$tmpdir/all.json")
names=$(jq -c '[.locks[].name | select(test("(inner|outer)\\.tdb"))] | unique' <<<"$final")
echo "no filter: $names"
jq -e 'any(.locks[].name; contains("inner.tdb"))' <<<"$final" >/dev/null ||
	fail "no filter: the namespace's own lockbench is missing: $names"
jq -e 'any(.locks[].name; contains("outer.tdb")) | not' <<<"$final" >/dev/null ||
	fail "no filter: a process outside the namespace is shown: $names"
bad=$(jq -c --slurpfile t "$tmpdir/all-lb.json" '[.locks[] |
	select(.name | contains("inner.tdb")) | .pids[]] | unique |
	map(select(. as $p | $t[0].pids | index($p) | not))' <<<"$final")
[ "$bad" = "[]" ] || fail "no filter: PIDs that are not the inner workers: $bad"

# A /proc that is not the namespace's would name every process wrongly.
if unshare --pid --fork "$locktop" --batch -n 1 -d 0.1 >/dev/null \
	2>"$tmpdir/err"; then
	fail "locktop ran with another namespace's /proc"
fi
grep -q '/proc' "$tmpdir/err" || fail "no word about /proc: $(cat "$tmpdir/err")"
echo "another /proc: $(cat "$tmpdir/err")"
echo PASS
