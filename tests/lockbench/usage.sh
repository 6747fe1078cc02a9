#!/usr/bin/env bash
# Bad input: exit status 2 and a message that names the problem.
. "$(dirname "$0")/common.sh"

# expect_usage PATTERN ARGS...: lockbench ARGS must exit 2, say PATTERN
# on stderr, and leave no table file behind.
expect_usage() {
	local pat=$1 out rc
	shift
	set +e
	out=$("$lb" "$@" 2>&1 >/dev/null)
	rc=$?
	set -e
	[ $rc -eq 2 ] || fail "lockbench $*: want exit 2, got $rc ($out)"
	printf '%s\n' "$out" | grep -qE "$pat" ||
		fail "lockbench $*: message lacks /$pat/: $out"
	[ -z "$(ls "$tmpdir"/lockbench-*.tdb 2>/dev/null)" ] ||
		fail "lockbench $*: left a table file behind"
}

expect_usage "unknown lock backend 'posix'.*fcntl, ofd, flock, mutex, spin, adaptive" --lock posix
expect_usage "unknown I/O mode 'aio'" --io aio
expect_usage "procs must be at least 1, got 0" -n 0
expect_usage "procs must be at least 1, got -3" -n -3
expect_usage "loops must be at least 1, got 0" -l 0
expect_usage "loops must be at least 1, got -1" --loops=-1
expect_usage "hash must be at least 1, got 0" -H 0
expect_usage "hash must be at least 1, got -8" -H -8
expect_usage "keys must be at least 1" --keys 0
expect_usage "procs wants a whole number, not '4x'" -n 4x
expect_usage "procs must be at most 4096" -n 100000
expect_usage "kill-holder must be at least 0" --kill-holder -1
expect_usage "hold-us must be at least 0" --hold-us -5
expect_usage "stuck-timeout wants seconds greater than 0" --stuck-timeout 0
expect_usage "cannot create table file '/nonexistent-dir/t.tdb': No such file or directory" \
	-n 1 -l 1 --path /nonexistent-dir/t.tdb
expect_usage "cannot create table file '$tmpdir': Is a directory" -n 1 -l 1 --path "$tmpdir"
expect_usage "cannot create table file '/proc/lockbench.tdb'" -n 1 -l 1 --path /proc/lockbench.tdb
expect_usage "hash size 1000000000 .* more than half of this machine's" -H 1000000000
expect_usage "hash size 2000000 with 4096 workers" -H 2000000 -n 4096
expect_usage "unexpected argument 'extra'" extra
expect_usage "threads cannot use --lock fcntl" --threads --lock fcntl
expect_usage "kill-holder needs worker processes" --threads --lock mutex --kill-holder 1
expect_usage "reopen needs --tdb" --reopen 5
expect_usage "read-us needs --tdb" --read-us 5
expect_usage "blocking is for --lock fcntl or ofd" --blocking --lock mutex
expect_usage "reopen must be at least 0" --tdb --reopen -1
expect_usage "reopen wants a whole number" --tdb --reopen often
expect_usage "tdb with --threads needs --lock ofd" --tdb --threads --lock mutex
expect_usage "out DIR is required" compare
expect_usage "unknown lock backend 'nope'" compare --out "$tmpdir/c" --locks mutex,nope
expect_usage "procs wants a whole number from 1" compare --out "$tmpdir/c" --procs 1,0

# --help teaches: it shows the backends and worked examples.
help=$("$lb" --help)
for w in Examples: fcntl ofd flock mutex spin adaptive --kill-holder \
	--stuck-timeout --json "lockbench compare" "Exit status" --tdb --reopen --read-us --blocking \
	tdb_lock_record record_locks file_locks; do
	printf '%s\n' "$help" | grep -q -- "$w" || fail "--help lacks '$w'"
done
"$lb" compare --help | grep -q -- "--run-timeout" || fail "compare --help is incomplete"
"$lb" compare --help | grep -q -- "--tdb" || fail "compare --help lacks --tdb"
"$lb" --version | grep -q '^lockbench [0-9]' || fail "--version"
echo ok
