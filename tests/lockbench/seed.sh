#!/usr/bin/env bash
# The operation mix comes from the seed: one worker and one seed give the
# same run every time; another seed gives another run.
. "$(dirname "$0")/common.sh"

fp='[.ops, .ok, .inserts, .deletes, .records, .op_counts.fetch,
     .op_counts.store, .op_counts.delete, .op_counts.append,
     .op_counts.lockstore, .acquires] | @csv'
a=$("$lb" --json -n 1 -l 3000 -H 16 -s 42 --lock mutex | jq -r "$fp")
b=$("$lb" --json -n 1 -l 3000 -H 16 -s 42 --lock spin --io pread | jq -r "$fp")
c=$("$lb" --json -n 1 -l 3000 -H 16 -s 43 --lock mutex | jq -r "$fp")
[ "$a" = "$b" ] || fail "seed 42 gave two different runs: $a vs $b"
[ "$a" != "$c" ] || fail "seeds 42 and 43 gave the same run: $a"

# Each worker's mix comes from its own stream of the seed, so the op
# counts of a many-worker run repeat exactly however the workers
# interleave, and the streams differ (two workers are not twice one).
ops='[.op_counts.fetch, .op_counts.store, .op_counts.delete,
      .op_counts.append, .op_counts.lockstore] | @csv'
m1=$("$lb" --json -n 4 -l 2000 -H 16 -s 42 --lock ofd | jq -r "$ops")
m2=$("$lb" --json -n 4 -l 2000 -H 16 -s 42 --lock adaptive | jq -r "$ops")
[ "$m1" = "$m2" ] || fail "4 workers, seed 42: op mix differs: $m1 vs $m2"
one=$("$lb" --json -n 1 -l 3000 -H 16 -s 42 --lock mutex | jq -r "$ops")
two=$("$lb" --json -n 2 -l 3000 -H 16 -s 42 --lock mutex | jq -r "$ops")
double=$(printf '%s\n' "$one" | awk -F, '{ printf "%d,%d,%d,%d,%d", 2*$1, 2*$2, 2*$3, 2*$4, 2*$5 }')
[ "$two" != "$double" ] || fail "workers share one random stream"

# Without -s the seed is chosen and reported, so the run can be repeated.
s=$("$lb" --json -n 1 -l 500 -H 4 | jq -r .seed)
x=$("$lb" --json -n 1 -l 500 -H 4 -s "$s" | jq -r "$fp")
y=$("$lb" --json -n 1 -l 500 -H 4 -s "$s" | jq -r "$fp")
[ "$x" = "$y" ] || fail "the reported seed does not reproduce the run"

# The table file: --keep leaves it, with the path reported; otherwise it
# is removed.
j=$("$lb" --json -n 2 -l 200 -H 4 --keep --path "$tmpdir/kept.tdb")
[ "$(printf '%s' "$j" | jq -r .path)" = "$tmpdir/kept.tdb" ] || fail "path not reported"
[ -s "$tmpdir/kept.tdb" ] || fail "--keep did not keep the table"
[ "$(stat -c %i "$tmpdir/kept.tdb")" = "$(printf '%s' "$j" | jq -r .inode)" ] ||
	fail "inode in the JSON is not the table's"
[ "$(printf '%s' "$j" | jq -r .size)" = "$(stat -c %s "$tmpdir/kept.tdb")" ] ||
	fail "size in the JSON is not the table's"
j=$("$lb" --json -n 2 -l 200 -H 4)
p=$(printf '%s' "$j" | jq -r .path)
case $p in "$tmpdir"/lockbench-*.tdb) ;; *) fail "default path not under TMPDIR: $p" ;; esac
[ ! -e "$p" ] || fail "table file not removed without --keep"

# The human report ends in OK and carries the figures.
out=$("$lb" -n 3 -l 300 -H 1 --hold-us 40 --lock adaptive)
for w in elapsed ops/s "user " "sys " voluntary involuntary p50 p99 max "most contended"; do
	printf '%s\n' "$out" | grep -q "$w" || fail "human report lacks '$w'"
done
[ "$(printf '%s\n' "$out" | tail -n 1)" = OK ] || fail "human report does not end in OK"
echo ok
