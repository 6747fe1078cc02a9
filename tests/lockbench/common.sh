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
	rule("a hold spans at least its inside"; .hold_span_ns >= .hold_ns and
	     ([.locks[] | .hold_span_ns >= .hold_ns] | all)),
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
	elif .lock == "spin" then
		rule("spin never sleeps"; .slept == 0 and .futex_waits == 0)
	else
		rule("only adaptive counts its own FUTEX_WAIT calls"; .futex_waits == 0 and .sleep_ns == 0)
	end,
	if .lock == "spin" or .lock == "adaptive" then
		rule("per-lock spin CPU time adds up"; sum(.locks[].spin_cpu_ns) == .spin_cpu_ns),
		rule("spin CPU time only when contended";
		     [.locks[] | .contended > 0 or .spin_cpu_ns == 0] | all)
	else
		rule("only spin and adaptive spin"; .spin_cpu_ns == 0 and
		     ([.locks[] | has("spin_cpu_ns") | not] | all))
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

# The accounting of --tdb's own locks, after a run that passed its check:
# every open takes the open and the active lock once, a record lock is a
# read or a probe that was not refused, the dead records left are those
# marked and not yet purged, and file_locks is the sum of every lock
# taken with fcntl or OFD calls on the table file (the chain and freelist
# locks too with fcntl and ofd).
check_tdb_truth() {
	local bad
	bad=$(printf '%s\n' "$1" | jq -r '
	def rule(name; cond): if cond then empty else name end;
	def fields: ["acquires", "trylock_failures", "contended", "slept", "wait_ns", "hold_ns", "hold_span_ns"];
	def chains(f): if .lock == "fcntl" or .lock == "ofd" then
		{acquires, trylock_failures: .contended, contended, slept, wait_ns, hold_ns, hold_span_ns}[f]
		else 0 end;
	rule("tdb is on"; .tdb == true),
	rule("one open and one active lock per open";
	     .open_lock.acquires == .opens and .active_lock.acquires == .opens),
	rule("every worker opened once, again after each kill and each reopen";
	     .opens == .procs + .kills + .reopens),
	rule("reopens every --reopen ops but after the last";
	     .reopen == 0 and .reopens == 0 or
	     .reopens == .procs * (((.loops - 1) / .reopen) | floor)),
	rule("lock bytes are tdb'"'"'s"; .open_lock.offset == 0 and .active_lock.offset == 4),
	rule("a record lock is a read or a granted probe";
	     .record_locks.acquires == .record_locks.reads + .record_locks.probes - .record_locks.refused),
	rule("refused = try-lock failures not followed by a wait";
	     ([.record_locks, .open_lock, .active_lock, .file_locks] |
	      map(.refused == .trylock_failures - .contended) | all)),
	rule("only probes are refused"; .open_lock.refused == 0 and .active_lock.refused == 0),
	rule("a hold spans at least its inside";
	     ([.record_locks, .open_lock, .active_lock, .file_locks] |
	      map(.hold_span_ns >= .hold_ns) | all)),
	rule("a blocking call that slept was contended";
	     ([.record_locks, .open_lock, .active_lock, .file_locks] |
	      map(.slept <= .contended) | all)),
	rule("dead records left = marked - purged"; .dead_records == .dead_marked - .dead_purged),
	rule("a record is left dead only when its probe was refused";
	     .dead_marked <= .record_locks.refused),
	rule("records were locked"; .record_offsets > 0 and .record_locks.reads > 0 and .record_locks.probes > 0),
	rule("record reads are fetches that found their key"; .record_locks.reads <= .op_counts.fetch),
	rule("waits only when contended";
	     ([.record_locks, .open_lock, .active_lock] | map(.contended > 0 or .wait_ns == 0) | all)),
	(fields[] as $f |
	 rule("file_locks.\($f) = chains + records + open + active";
	      .file_locks[$f] == chains($f) + .record_locks[$f] + .open_lock[$f] + .active_lock[$f]))
	') || fail "jq could not read: $1"
	[ -z "$bad" ] || fail "$(printf '%s' "$1" | jq -r '"\(.lock)/\(.io) --tdb"'): $bad"
}
