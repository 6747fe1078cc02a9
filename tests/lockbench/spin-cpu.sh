#!/usr/bin/env bash
# spin_cpu_ns: the CPU time spin and adaptive waiters spend spinning, read
# with the thread CPU clock around each contended spin. More workers than
# CPUs, so that spinners are also preempted while they wait.
. "$(dirname "$0")/common.sh"

# Slack for user_s and sys_s, which getrusage gives in whole microseconds.
RUSAGE_SLACK_NS=10000

# spin_bounds JSON WHAT: spinning is CPU time of the workers, and a part
# of the waits: per lock, the CPU time spun plus the time asleep is at
# most the lock's wait (0.1% and 10 us allowed for the two clocks' rates
# and reads).
spin_bounds() {
	jq_true "$1" ".spin_cpu_ns <= (.user_s + .sys_s) * 1e9 + $RUSAGE_SLACK_NS" \
		"$2: spin CPU time is at most the workers' CPU time"
	jq_true "$1" '[.locks[] | .spin_cpu_ns + (.sleep_ns // 0) <=
		       .wait_ns * 1.001 + 10000] | all' \
		"$2: spin CPU time is a part of each lock's wait"
}

for lock in spin adaptive; do
	# One hot chain held 40 us busy: waits are certain.
	j=$("$lb" --json --lock "$lock" -n 4 -l 400 -H 1 --keys 4 --hold-us 40 -s 7) ||
		fail "$lock -n 4 exited $?"
	check_ground_truth "$j"
	jq_true "$j" '.contended > 0 and .spin_cpu_ns > 0' \
		"$lock: contended waiters spin on the CPU"
	jq_true "$j" '[.locks[] | has("spin_cpu_ns")] | all' \
		"$lock: every lock reports spin_cpu_ns"
	spin_bounds "$j" "$lock -n 4"

	# Many short holds: many short spins add up the same way.
	j=$("$lb" --json --lock "$lock" -n 4 -l 3000 -H 2 --keys 8 -s 7) ||
		fail "$lock -n 4 short holds exited $?"
	check_ground_truth "$j"
	spin_bounds "$j" "$lock -n 4, short holds"

	j=$("$lb" --json --threads --lock "$lock" -n 4 -l 400 -H 1 --keys 4 \
		--hold-us 40 -s 7) || fail "$lock --threads exited $?"
	check_ground_truth "$j"
	jq_true "$j" '.spin_cpu_ns > 0' "$lock --threads: waiters spin"
	spin_bounds "$j" "$lock --threads"

	# One worker never contends, so it never reads the CPU clock.
	j=$("$lb" --json --lock "$lock" -n 1 -l 2000 -H 4 -s 7) ||
		fail "$lock -n 1 exited $?"
	check_ground_truth "$j"
	jq_true "$j" '.contended == 0 and .spin_cpu_ns == 0 and
		      ([.locks[].spin_cpu_ns] | all(. == 0))' \
		"$lock -n 1: no contention, no spinning"
done

# Backends that block without spinning: waits, but no spin CPU time.
for lock in mutex fcntl; do
	j=$("$lb" --json --lock "$lock" -n 4 -l 400 -H 1 --keys 4 --hold-us 40 -s 7) ||
		fail "$lock -n 4 exited $?"
	check_ground_truth "$j"
	jq_true "$j" '.contended > 0 and .spin_cpu_ns == 0' \
		"$lock: contended, yet no spin CPU time"
done

# The text report says it too.
out=$("$lb" --lock spin -n 4 -l 400 -H 1 --keys 4 --hold-us 40 -s 7) ||
	fail "spin report exited $?"
printf '%s\n' "$out" | grep -Eq '^spin +[0-9.]+ (ns|us|ms|s) on CPU while spinning' ||
	fail "spin: no spin line in the report: $out"
out=$("$lb" --lock mutex -n 2 -l 100 -s 7) || fail "mutex report exited $?"
if printf '%s\n' "$out" | grep -q '^spin '; then
	fail "mutex: a spin line in the report: $out"
fi
echo ok
