# Sourced by the lockbench tests: $1 is the lockbench binary.
set -eu

lb=$1
shift

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

command -v jq >/dev/null || fail "jq is needed to read lockbench --json"

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/lockbench-test.XXXXXX")
trap 'rm -rf "$tmpdir"' EXIT
export TMPDIR=$tmpdir

# jq_true JSON FILTER DESCRIPTION: fail unless FILTER yields true.
jq_true() {
	local v
	v=$(printf '%s\n' "$1" | jq -r "$2") ||
		fail "jq '$2' did not parse: $1"
	[ "$v" = true ] || fail "$3 [$2 -> $v]"
}

# The accounting that must hold after every run that passed its check:
# each op takes exactly one chain lock (kills took one and never
# finished), the freelist lock is taken once per allocation and per free,
# the per-lock rows add up to the totals, and the table holds what the
# successful inserts and deletes say. One jq run checks it all and names
# every rule that does not hold.
check_ground_truth() {
	local bad
	bad=$(printf '%s\n' "$1" | jq -r '
	def rule(name; cond): if cond then empty else name end;
	def sum(f): [f] | add;
	rule("check passed"; .check == "OK" and (.errors | length) == 0),
	rule("record count = inserts - deletes"; .records == .inserts - .deletes),
	rule("per-lock acquires add up"; sum(.locks[].acquires) == .acquires),
	rule("per-lock contended add up"; sum(.locks[].contended) == .contended),
	rule("per-lock wait adds up"; sum(.locks[].wait_ns) == .wait_ns),
	rule("every loop ran one op"; .ops == .procs * .loops),
	rule("op counts add up"; .ops == sum(.op_counts[])),
	rule("contended <= acquires"; .contended <= .acquires),
	rule("percentiles ordered"; .wait_p50_ns <= .wait_p99_ns and .wait_p99_ns <= .wait_max_ns),
	rule("wait only when contended"; (.contended > 0) or (.wait_ns == 0)),
	rule("sleeps are part of the waits";
	     .slept <= .contended and .sleep_ns <= .wait_ns and
	     (.lock != "adaptive" or .futex_waits >= .slept)),
	if .lock == "adaptive" then
		rule("per-lock sleeps add up";
		     sum(.locks[].slept) == .slept and sum(.locks[].sleep_ns) == .sleep_ns and
		     sum(.locks[].futex_waits) == .futex_waits)
	elif .lock == "mutex" then
		rule("per-lock sleeps add up, and only adaptive counts its own FUTEX_WAIT calls";
		     sum(.locks[].slept) == .slept and .futex_waits == 0 and .sleep_ns == 0)
	else
		rule("only adaptive counts its own FUTEX_WAIT calls"; .slept == 0 and .futex_waits == 0)
	end,
	rule("every lock row is consistent"; [.locks[] | .contended <= .acquires and (.contended > 0 or .wait_ns == 0)] | all),
	if .lock == "flock" then
		rule("flock has one whole-file lock at offset 0";
		     (.locks | length) == 1 and .locks[0].offset == 0 and .locks[0].name == "file"),
		rule("one file lock acquisition per op"; .locks[0].acquires == .ops + .kills)
	else
		rule("one lock per chain plus the freelist"; (.locks | length) == .hash + 1),
		rule("one chain lock acquisition per op";
		     sum(.locks[] | select(.name != "freelist") | .acquires) == .ops + .kills),
		rule("one freelist acquisition per allocation and free";
		     (.locks[] | select(.name == "freelist") | .acquires) == .allocs + .frees),
		rule("lock words sit 64 bytes apart";
		     .locks[0].offset as $b | [.locks | to_entries[] | .value.offset == $b + 64 * .key] | all),
		rule("lock words lie inside the file";
		     .locks[0].offset >= 4096 and .locks[-1].offset + 64 <= .size)
	end') || fail "jq could not read: $1"
	[ -z "$bad" ] || fail "$(printf '%s' "$1" | jq -r '"\(.lock)/\(.io)"'): $bad"
}
