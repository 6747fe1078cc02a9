#!/usr/bin/env bash
# --threads: workers are threads of one process.
. "$(dirname "$0")/common.sh"

for lock in ofd flock mutex spin adaptive; do
	j=$("$lb" --json --threads --lock "$lock" -n 3 -l 400 -H 8 -s 5) ||
		fail "$lock --threads exited $?"
	check_ground_truth "$j"
	jq_true "$j" '.threads == true' "$lock: reports thread mode"
	jq_true "$j" '(.pids | unique | length) == 3' "$lock: three distinct thread ids"
	j=$("$lb" --json --threads --lock "$lock" -n 3 -l 300 -H 1 --keys 4 --hold-us 40 -s 5) ||
		fail "$lock --threads contended run exited $?"
	check_ground_truth "$j"
	jq_true "$j" '.contended > 0' "$lock: threads contend on one hot lock"
done

# fcntl locks belong to the process, so threads would not exclude each
# other: refused, not silently wrong.
set +e
out=$("$lb" --threads --lock fcntl -n 2 -l 10 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] || fail "--threads --lock fcntl: want exit 2, got $rc"
printf '%s\n' "$out" | grep -q "fcntl locks belong to the process" ||
	fail "--threads --lock fcntl: unclear message: $out"
echo ok
