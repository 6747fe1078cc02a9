#!/usr/bin/env bash
# Where the value of a futex word says nothing, the function the wait came
# from decides: readers blocked on a pthread rwlock are lock contention,
# though their words look like events; a thread in sem_wait is an event.
# glibc's shared wait helper is judged by its caller, one frame up.
. "$(dirname "$0")/lib.sh"
locktop=$1 rwpool=$2
require_bpf

"$locktop" --batch --json --all --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$rwpool" >"$tmpdir/truth.json" || fail "rwpool failed"
rw=$(jq -r .rwlock "$tmpdir/truth.json")
sem=$(jq -r .sem "$tmpdir/truth.json")
truth=$(jq .read_wait_ns "$tmpdir/truth.json")
final=$(tail -n 1 "$tmpdir/lt.json")

# wait_ns on the words of an object at address $1 of $3 bytes, of kind $2
on() {
	local words
	words=$(for o in $(seq 0 4 $(($3 - 4))); do printf '"0x%x",' $(($1 + o)); done)
	jq --argjson w "[${words%,}]" --arg k "$2" '[.locks[] |
		select((.address as $a | $w | index($a)) and .kind == $k) |
		.wait_ns] | add // 0' <<<"$final"
}
lock=$(on "$rw" futex 56) cond=$(on "$rw" futex-cond 56)
echo "rwlock: $lock ns as a lock, $cond ns as an event; readers measured $truth ns"
# A new site's first waits go by value, until it is judged (a tenth of
# a second); nearly all the rest count as lock waits.
awk -v l="$lock" -v c="$cond" 'BEGIN { exit !(l >= 0.7 * (l + c)) }' ||
	fail "the rwlock's waits are not lock contention"
awk -v l="$lock" -v c="$cond" -v t="$truth" 'BEGIN {
	exit !(l + c <= t * 1.05 && l + c >= t * 0.8) }' ||
	fail "the rwlock's waits do not add up to what the readers measured"
[ "$(on "$sem" futex 32)" = 0 ] || fail "the semaphore counts as a lock"
[ "$(on "$sem" futex-cond 32)" -gt 0 ] || fail "the semaphore's wait is missing"
echo PASS
