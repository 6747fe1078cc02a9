#!/usr/bin/env bash
# PostgreSQL's own locks, from its USDT probes: with no server running
# nothing is attached; under pgbench the default view ranks the
# server's locks (not its semaphores), and the waits counted agree with
# a bpftrace script on the same probes, run at the same time.
# Usage: pg-locks.sh LOCKTOP
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pglib.sh"
locktop=$1
require_bpf
pg_require
command -v bpftrace >/dev/null || skip "bpftrace is not installed"

usdt_loaded() {
	/usr/sbin/bpftool prog list 2>/dev/null | grep -q 'name lt_usdt'
}

# 1. No server among the traced processes: nothing of it is loaded.
# System-wide when no postgres runs on the host (and then a server
# started later is found at a read), else for a command.
if pgrep -x postgres >/dev/null; then
	"$locktop" -b -j -d 0.5 -o "$tmpdir/none.json" -- sleep 3 &
	later=false
else
	"$locktop" -b -j -d 0.5 -o "$tmpdir/none.json" &
	later=true
fi
lt=$!
wait_progs lt_pwritev2_x || fail "locktop did not attach"
sleep 1
! usdt_loaded || fail "a USDT program is loaded with no server traced"

# 2. A cluster of our own, and pgbench at 16 clients against it.
pg_start
if $later; then
	wait_progs lt_usdt || fail "a server started later was not found"
	kill -INT "$lt"
fi
wait "$lt" || fail "locktop failed"
# With -p, the postmaster and its backends.
"$locktop" -b -d 0.5 -o /dev/null -p "$(pg_postmaster_pid)" &
lt=$!
wait_progs lt_usdt || fail "locktop -p did not attach to the server"
kill -INT "$lt"
wait "$lt" || fail "locktop -p failed"
pg_bench -i -s 1 -q >"$tmpdir/init.log" 2>&1 || fail "pgbench -i failed"
db=$(pg_sql "select oid from pg_database where datname = 'postgres'")
branches=$(pg_sql "select oid from pg_class where relname = 'pgbench_branches'")
tellers=$(pg_sql "select oid from pg_class where relname = 'pgbench_tellers'")
pg_sql "create table dl (id int primary key, v int);
	insert into dl values (1, 0), (2, 0)"
dl_oid=$(pg_sql "select oid from pg_class where relname = 'dl'")

# Two transactions that each update the row the other holds: the
# backend that finds the deadlock (after deadlock_timeout) counts it.
deadlock() {
	timeout 30 runuser -u postgres -- "$pg_bin/psql" -h "$pg_dir" \
		-p "$pg_port" -U postgres -XAtq -c "begin;
		update dl set v = 1 where id = $1; select pg_sleep(0.5);
		update dl set v = 1 where id = $2; commit" postgres \
		>>"$tmpdir/deadlock.log" 2>&1 || true
}

# With --all: the default view is its rows less futex-cond's.
"$locktop" -b -j -a -d 1 -o "$tmpdir/lt.json" &
lt=$!
wait_progs lt_usdt || fail "locktop did not attach to $pg_postgres"
cat >"$tmpdir/count.bt" <<BT
usdt:$pg_postgres:postgresql:lock__wait__done { @lock = count(); @all = count(); }
usdt:$pg_postgres:postgresql:lwlock__wait__done { @lwlock = count(); @all = count(); }
usdt:$pg_postgres:postgresql:lock__wait__start,
usdt:$pg_postgres:postgresql:lwlock__wait__start,
usdt:$pg_postgres:postgresql:deadlock__found { @all = count(); }
BT
bpftrace "$tmpdir/count.bt" >"$tmpdir/bt.out" 2>&1 &
bt=$!
wait_attaching "$tmpdir/bt.out" || fail "bpftrace did not attach"
sleep 1
# A wait on dl's relation lock, named before anything tells the name of
# dl: the deadlock's waits for a transaction's end on its rows do, last.
pg_as "$pg_bin/psql" -h "$pg_dir" -p "$pg_port" -U postgres -XAtq -c "begin;
	lock table dl in access exclusive mode; select pg_sleep(2); commit" \
	postgres >/dev/null &
locker=$!
sleep 0.5
pg_sql "select count(*) from dl" >/dev/null
wait "$locker"
pg_bench -c 16 -j 2 -T 5 >"$tmpdir/bench.log" 2>&1 ||
	{ cat "$tmpdir/bench.log" >&2; fail "pgbench failed"; }
grep -E '^tps' "$tmpdir/bench.log" || true
deadlock 1 2 &
dl_job=$!
deadlock 2 1
wait "$dl_job"
sleep 1
stop_truth
stop_pid "$lt" || fail "locktop failed"

final=$(tail -n 1 "$tmpdir/lt.json")
[ "$(jq -r .final <<<"$final")" = true ] || fail "no final line"
jq -c '.locks[:6][] | {kind, name, waits, wait_ns}' <<<"$final"

# The busiest row of the default view is one of the server's locks: an
# LWLock, or the row conflicts (tuple locks, or waits for a transaction's
# end on a row) or relation lock of a table whose rows every transaction
# updates: pgbench_branches' one row, or pgbench_tellers' ten, whose
# waiters wait out their holders' waits on the branch.
top=$(jq -c '[.locks[] | select(.kind != "futex-cond")][0]' <<<"$final")
on="^(tuple|relation|transactionid on) ($db/$branches|$db/$tellers) "
case $(jq -r .kind <<<"$top") in
pg-lwlock) ;;
pg-lock)
	jq -e --arg re "$on" '.name | test($re)' <<<"$top" >/dev/null ||
		fail "the busiest lock is not of pgbench's rows: $top"
	;;
*) fail "the busiest lock is not the server's: $top" ;;
esac
# pgbench_branches' one row is fought over: its tuples (or relation)
# are a row of their own, by database and relation OID.
jq -e --arg o "$db/$branches" '[.locks[] | select(.kind == "pg-lock" and
	(.name | test("^(tuple|relation) " + $o + " ")))] | length > 0' \
	<<<"$final" >/dev/null || fail "no row for pgbench_branches ($db/$branches)"
# Its rows are named by the table too, and by its file as the server
# reports it (pgbench -i's TRUNCATE gave the table a file of a new
# number), from the server's RelationData: every row of it, tuples and
# relation alike, though only the waits for a transaction's end read it.
# Their keys, identity across runs, are the OIDs' alone.
file=$(pg_sql "select pg_relation_filepath('pgbench_branches')")
echo "pgbench_branches: $db/$branches, $file"
rows=$(jq -c --arg o "$db/$branches" '[.locks[] | select(.kind == "pg-lock"
	and (.name | test("^(tuple|relation|page|extend|transactionid on) " +
	$o + " "))) | {name, key}]' <<<"$final")
jq -r '.[].name' <<<"$rows"
jq -e --arg o "$db/$branches" --arg f "$file" 'length > 0 and all(.name |
	test(" " + $o + " pgbench_branches [A-Za-z]+ " + $f + "$"))' \
	<<<"$rows" >/dev/null ||
	fail "pgbench_branches' rows are not named by its table and $file: $rows"
jq -e 'all(.key | test("pgbench_branches|base/") | not)' <<<"$rows" \
	>/dev/null || fail "a key has what was learned of the table: $rows"
# A lock named before its relation's name was known has it now, and
# the same key.
jq -r --arg o "relation $db/$dl_oid " '.locks[] | select(.kind == "pg-lock"
	and (.name | startswith($o))) | .name' <<<"$final"
jq -e --arg o "$db/$dl_oid" '[.locks[] | select(.kind == "pg-lock" and
	.key == "pg-lock:relation " + $o + " AccessShareLock")] |
	length == 1 and (.[0].name | test("^relation " + $o +
	" dl AccessShareLock( |$)"))' <<<"$final" >/dev/null ||
	fail "dl's relation lock is not named by the table: $(jq -c \
	'[.locks[] | select(.name | startswith("relation ")) | {name, key}]' \
	<<<"$final")"
# ... and is the most waited for: the server's lock waited for most
# often is on it, a tuple lock or a wait for its updater's end.
most=$(jq -c '[.locks[] | select(.kind == "pg-lock")] | max_by(.waits)' \
	<<<"$final")
jq -e --arg re "^(tuple|transactionid on) $db/$branches " '.name | test($re)' \
	<<<"$most" >/dev/null ||
	fail "pgbench_branches is not the most waited for: $most"
# The waits for a transaction's end are named by the row's relation
# (the server's RelationData, read from XactLockTableWait's error context
# at the wait's start): almost all.
jq -e '[.locks[] | select(.kind == "pg-lock" and
	(.name | startswith("transactionid "))) |
	{on: (.name | startswith("transactionid on ")), waits}] |
	([.[] | select(.on) | .waits] | add // 0) as $on |
	([.[] | .waits] | add // 0) as $all |
	$all > 0 and $on >= 0.95 * $all' <<<"$final" >/dev/null ||
	fail "waits for a transaction's end are not named by their relation"

# Backends were seen waiting, and the deadlock was counted.
jq -se '[.[] | .locks[]? | select(.kind | startswith("pg-")) |
	.waiters_now] | max > 0' "$tmpdir/lt.json" >/dev/null ||
	fail "no backend seen waiting at a read"
dl=$(jq '[.locks[] | select(.kind == "pg-lock") | .deadlocks] | add' <<<"$final")
[ "$dl" -ge 1 ] || fail "the deadlock was not counted"
echo "deadlocks found: $dl"

# The same waits as bpftrace counted.
bt_count() {
	awk -v m="@$1:" '$1 == m { print $2 }' "$tmpdir/bt.out"
}
ours() {
	jq --arg k "$1" '[.locks[] | select(.kind == $k) | .waits] | add // 0' \
		<<<"$final"
}
bt_lock=$(bt_count lock) bt_lwlock=$(bt_count lwlock)
[ -n "$bt_lock" ] && [ -n "$bt_lwlock" ] ||
	fail "bpftrace counted nothing: $(cat "$tmpdir/bt.out")"
[ "$bt_lock" -gt 100 ] || fail "too few lock waits to compare ($bt_lock)"
# agree NAME OURS BPFTRACE: within 5%, or fail.
agree() {
	awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN {
		d = (a > b ? a - b : b - a) / (b > 0 ? b : 1) * 100
		printf "%s: ours %.0f, bpftrace %.0f, off by %.3f%%\n", n, a, b, d
		exit !(d <= 5) }' || fail "$1 is off by more than 5%"
}
agree "pg-lock waits" "$(ours pg-lock)" "$bt_lock"
agree "pg-lwlock waits" "$(ours pg-lwlock)" "$bt_lwlock"
# The servers' probe object counts its runs in the probes' cost: one
# per probe hit, as many as bpftrace's on the same probes.
agree "usdt probe runs" "$(jq '.probes.programs[] | select(.name == "usdt") |
	.runs' <<<"$final")" "$(bt_count all)"

# A backend's sleep on its semaphore inside an LWLock wait is that wait,
# not counted again: the server's event waits are far fewer.
sem=$(jq '[.locks[] | select(.kind == "futex-cond" and .comm == "postgres") |
	.waits] | add // 0' <<<"$final")
echo "postgres futex-cond waits: $sem, pg-lwlock waits: $(ours pg-lwlock)"
[ "$sem" -lt $(($(ours pg-lwlock) / 2)) ] ||
	fail "the server's semaphore waits ($sem) count its LWLock waits again"

# No futex row of the server's leads: its semaphores are those waits.
# (The run traces every process: other programs' futex rows, a stripped
# binary's timed waits say, are not the server's.)
jq -e '([.locks[] | select(.kind | startswith("pg-")) | .wait_ns] | add) as $pg |
	([.locks[] | select((.kind == "futex" or .kind == "futex-pi") and
	.comm == "postgres") | .wait_ns] | max // 0) < 0.1 * $pg' \
	<<<"$final" >/dev/null ||
	fail "a futex row of the server's weighs as much as its locks: \
$(jq -c '[.locks[] | select(.kind == "futex" and .comm == "postgres") |
		{name, waits, wait_ns}][:3]' <<<"$final")"
echo PASS
