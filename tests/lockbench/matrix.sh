#!/usr/bin/env bash
# Every I/O mode of one lock backend at a small size: the check passes and
# the ground truth adds up; then a run built to contend proves that
# contention and wait time are seen at all.
. "$(dirname "$0")/common.sh"
lock=$1

for io in mmap pread lseek; do
	j=$("$lb" --json --lock "$lock" --io "$io" -n 3 -l 400 -H 8 -s 11) ||
		fail "$lock/$io exited $?"
	check_ground_truth "$j"
	jq_true "$j" ".lock == \"$lock\" and .io == \"$io\" and .procs == 3 and .loops == 400" \
		"$lock/$io echoes its configuration"
done

# One chain, a 40 us busy hold and three workers on two CPUs: waits are
# certain.
j=$("$lb" --json --lock "$lock" -n 3 -l 300 -H 1 --keys 4 --hold-us 40 -s 3) ||
	fail "$lock contended run exited $?"
check_ground_truth "$j"
jq_true "$j" '.contended > 0 and .wait_ns > 0 and .wait_max_ns > 0' \
	"$lock: a single hot lock is contended"
jq_true "$j" '.wait_p50_ns > 0' "$lock: median contended wait is not zero"
# Every contended wait on a lock held 40 us busy is, on average, at least
# a good part of that hold.
jq_true "$j" '(.wait_ns / .contended) > 5000' "$lock: mean wait reflects the hold time"
if [ "$lock" = adaptive ]; then
	# A 40 us hold outlasts the bounded spin: waiters go to sleep.
	jq_true "$j" '.slept > 0 and .sleep_ns > 0' "adaptive: waiters sleep in FUTEX_WAIT"
fi
echo "ok: $lock"
