#!/usr/bin/env bash
# --tdb with one chain backend: tdb's record, open and active locks are
# taken and counted, the table check still passes, the existing accounting
# of the chain and freelist locks still holds, probes are refused under
# contention, and killed holders are recovered from.
. "$(dirname "$0")/common.sh"
lock=$1

for io in mmap pread; do
	j=$("$lb" --json --tdb --reopen 100 --lock "$lock" --io "$io" -n 3 -l 400 -H 8 -s 11) ||
		fail "$lock/$io --tdb exited $?"
	check_ground_truth "$j"
	check_tdb_truth "$j"
	jq_true "$j" '.reopen == 100 and .reopens == 3 * 3' "$lock/$io: three reopens per worker"
done

# Readers work 200 us on a record after they drop the one hot chain's
# lock: deletes meanwhile find their probe refused and leave the record
# dead, and later deletes purge it.
j=$("$lb" --json --tdb --lock "$lock" -n 3 -l 300 -H 1 --keys 2 --hold-us 20 \
	--read-us 200 -s 3) || fail "$lock contended --tdb run exited $?"
check_ground_truth "$j"
check_tdb_truth "$j"
jq_true "$j" '.read_us == 200' "$lock: --read-us is reported"
jq_true "$j" '.record_locks.refused > 0 and .dead_marked > 0' \
	"$lock: probes are refused under contention, and records left dead"
jq_true "$j" '.dead_purged > 0' "$lock: dead records are purged by later deletes"
jq_true "$j" '.record_locks.trylock_failures >= .record_locks.refused' \
	"$lock: refused probes are try-lock failures"

case $lock in
fcntl | ofd | flock | mutex)
	j=$("$lb" --json --tdb --reopen 200 --lock "$lock" -n 4 -l 1500 -H 8 -s 7 \
		--kill-holder 3) || fail "$lock --tdb with kills exited $?"
	check_ground_truth "$j"
	check_tdb_truth "$j"
	jq_true "$j" '.kills == 3 and .repairs == 3' "$lock: every kill was repaired"
	# The kernel dropped each victim's active lock: the new worker in its
	# slot opened again.
	jq_true "$j" '.opens == 4 + 3 + .reopens' "$lock: each replacement opened the file"
	;;
esac
echo "ok: $lock --tdb"
