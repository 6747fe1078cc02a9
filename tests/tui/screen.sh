#!/usr/bin/env bash
# The live screen in a real terminal (tmux): header, a row for
# lockbench's table, sorting, the pid filter, the detail, resizing, q,
# and no probe left behind.
. "$(dirname "$0")/../lib.sh"
locktop=$1 lockbench=$2 contend=$3
require_bpf
command -v tmux >/dev/null || skip "tmux is not installed"

# Ids of the lt_ programs loaded now. Another locktop (the PCP agent,
# say) may hold some; the ones that appear while ours runs are ours.
prog_ids() {
	/usr/sbin/bpftool prog list 2>/dev/null |
		awk '/ name lt_/ { sub(":", "", $1); print $1 }' | sort -n
}
prog_ids >"$tmpdir/before"

. "$(dirname "$0")/tmux.sh"
lb=
ct=
cleanup() {
	tmux_end
	[ -n "$lb" ] && kill -- -"$lb" 2>/dev/null
	[ -n "$ct" ] && kill "$ct" 2>/dev/null
	rm -rf "$tmpdir"
}
trap cleanup EXIT

# Contention: lockbench's robust mutexes in a shared file, and an
# in-process mutex fight in another process.
table=$tmpdir/t.tdb
setsid nice -n 19 "$lockbench" --lock mutex -n 4 -l 1000000000 -H 16 --path "$table" \
	--keep >/dev/null 2>&1 &
lb=$!
nice -n 19 "$contend" -t 3 -n 100000000 -h 20 >/dev/null 2>&1 &
ct=$!

wait_gone() {
	local what=$1 pattern=$2 i
	for i in $(seq 50); do
		screen >"$tmpdir/screen" 2>/dev/null || true
		grep -qE -- "$pattern" "$tmpdir/screen" || return 0
		sleep 0.1
	done
	cat "$tmpdir/screen" >&2
	fail "$what: /$pattern/ stays on the screen"
}
head_line() { grep -E '^LOCK ' "$tmpdir/screen" || true; }

# After locktop, the pane records its status and the terminal modes.
# The kernel's own locks and sampled spinning are left out: a worker
# also meets the kernel's futex hash locks, and the pid filter's check
# below is of the user-space locks (tests kernel-* and spin-* have
# theirs).
T new-session -d -s lt -x 120 -y 40 \
	"env TERM=tmux-256color LC_ALL=C $locktop -d 0.3 --no-kernel-locks --spin-hz 0 2>$tmpdir/err; echo \$? >$tmpdir/rc; stty -a >$tmpdir/stty; sleep 60"

wait_for "header" '^locktop [0-9:]+ +every 0.3s'
wait_for "wait meter" '^Wait \['
wait_for "footer" '^F1Help +F2Locks'
# The probes' own cost, and how full the kernel's maps are.
wait_for "probe cost" 'probes +[0-9.k-]+ns/ev .* cpu [0-9.]+% maps [0-9]+%'
wait_for "lockbench's table" "t\.tdb\+0x[0-9a-f]+ +futex "
# A holder too long for its column keeps its pid, whole, and loses the
# end of its name.
wait_for "holder pid/comm" "t\.tdb\+0x[0-9a-f]+ +futex .* [0-9]+/lock"
# contend's mutex: by symbol, "shared_lock (contend)", or contend+0x...
wait_for "contend's mutex" "contend(\)|\+0x[0-9a-f]+) +futex "
prog_ids | comm -13 "$tmpdir/before" - >"$tmpdir/ours"
[ -s "$tmpdir/ours" ] || fail "no lt_ programs appeared while locktop runs"
echo "ok: header, footer and rows"

# Sorting: WAIT/s at first; > moves to AVG, < back.
wait_for "sort mark" '^LOCK .* WAIT/sv '
T send-keys -t lt '>'
wait_for "sorted by AVG" '^LOCK .* AVGv '
grep -qE 'WAIT/sv' <<<"$(head_line)" && fail "two sort marks: $(head_line)"
T send-keys -t lt 'I'
wait_for "AVG inverted" '^LOCK .* AVG\^ '
T send-keys -t lt '<'
wait_for "sorted by WAIT/s" '^LOCK .* WAIT/sv '
echo "ok: sort column and direction"

# A click on a column title sorts by it (xterm mouse report).
x=$(head_line | awk '{ print index($0, " MAX") + 3 }')
printf -v click '\033[M %b%b' "\\$(printf %o $((32 + x)))" "\\$(printf %o $((32 + 5)))"
T send-keys -t lt -l "$click"
if wait_for "click on MAX" '^LOCK .* MAXv ' 2>/dev/null; then
	echo "ok: mouse click sorts"
	T send-keys -t lt '<' '<' '<'
else
	echo "note: the click did not reach locktop through tmux"
fi

# The pid filter: one of lockbench's workers sees only the table.
worker=$(pgrep -P "$lb" | head -n 1)
[ -n "$worker" ] || fail "no lockbench worker"
T send-keys -t lt p
wait_for "pid prompt" 'Only PID'
T send-keys -t lt "$worker" Enter
wait_for "pid filter shown" "pid=$worker"
wait_gone "contend's row under the pid filter" 'contend(\)|\+0x)'
rows=$(awk '/^LOCK /{on=1; next} /^Locks [0-9]+ rows/{on=0} on && NF' "$tmpdir/screen")
[ -n "$rows" ] || fail "no rows for pid $worker"
if grep -vqE 't\.tdb\+0x' <<<"$rows"; then
	fail "pid $worker filter shows other locks: $rows"
fi
echo "ok: p $worker shows only the table's locks"

# Enter opens the detail of the selected lock.
T send-keys -t lt Home Enter
wait_for "detail" '^Wait time'
wait_for "detail parties" '^Top waiters'
wait_for "detail kind" '^kind futex +id [0-9]+'
T send-keys -t lt Escape
wait_for "back to the table" '^LOCK '
T send-keys -t lt c
wait_for "filter cleared" 'contend(\)|\+0x)'
echo "ok: detail"

# The name filter: a second / starts from the old text, selected, so
# that typing replaces it rather than adding to it.
T send-keys -t lt /
wait_for "filter prompt" 'Filter by name: *$'
T send-keys -t lt -l "contend"
T send-keys -t lt Enter
wait_for "name filter shown" "name~'contend'"
T send-keys -t lt /
wait_for "the old filter in the prompt" 'Filter by name: contend'
T send-keys -t lt -l "t.tdb"
T send-keys -t lt Enter
wait_for "the filter replaced" "name~'t\.tdb'"
T send-keys -t lt /
T send-keys -t lt BSpace Enter
wait_gone "the filter cleared by one Backspace" "name~"
echo "ok: the filter prompt replaces its old text"

# Other views by F-key and letter
T send-keys -t lt F3
wait_for "processes view" '^ *PID +COMMAND '
T send-keys -t lt f
wait_for "files view" '^FILE '
T send-keys -t lt F5
wait_for "deadlocks view" '^BLOCKED CHAINS'
T send-keys -t lt l
wait_for "locks view" '^LOCK '
T send-keys -t lt h
wait_for "help" '^Sort +< >'
T send-keys -t lt x
wait_for "help closed" '^LOCK '
echo "ok: views and help"

# Resize down to 60x15 and back: a whole, clean screen each time.
T resize-window -t lt -x 60 -y 15
wait_for "compact header" '^locktop [0-9:]+'
for i in $(seq 30); do
	screen >"$tmpdir/screen"
	[ "$(wc -l <"$tmpdir/screen")" = 15 ] &&
		tail -n 1 "$tmpdir/screen" | grep -q '^F1Help' &&
		grep -q '^LOCK ' "$tmpdir/screen" && break
	sleep 0.1
done
[ "$(wc -l <"$tmpdir/screen")" = 15 ] || fail "60x15: $(cat "$tmpdir/screen")"
tail -n 1 "$tmpdir/screen" | grep -q '^F1Help' || fail "60x15 footer: $(cat "$tmpdir/screen")"
grep -q '^LOCK ' "$tmpdir/screen" || fail "60x15 table: $(cat "$tmpdir/screen")"
awk 'length($0) > 60 { exit 1 }' "$tmpdir/screen" || fail "60x15: a line is too long"
echo "ok: 60x15"
T resize-window -t lt -x 30 -y 8
wait_for "too small" 'terminal too small'
T resize-window -t lt -x 120 -y 40
wait_for "back to 120x40" '^LOCK .*HOLDER +PROCS'
wait_for "rows at 120x40" "t\.tdb\+0x[0-9a-f]+ +futex "
echo "ok: resize"

# Space pauses; t switches to cumulative figures.
T send-keys -t lt Space
wait_for "paused" 'PAUSED'
T send-keys -t lt Space t
wait_for "cumulative" 'cumulative'
wait_for "cumulative titles" '^LOCK .* WAITS +WAITv '
T send-keys -t lt t
echo "ok: pause and cumulative"

# q: status 0, a sane terminal, no probes left.
T send-keys -t lt q
for i in $(seq 100); do
	[ -s "$tmpdir/rc" ] && [ -s "$tmpdir/stty" ] && break
	sleep 0.1
done
[ "$(cat "$tmpdir/rc" 2>/dev/null)" = 0 ] || fail "q: exit status '$(cat "$tmpdir/rc" 2>/dev/null)'"
grep -qE '(^| )icanon( |$)' "$tmpdir/stty" && grep -qE '(^| )echo( |$)' "$tmpdir/stty" ||
	fail "terminal left raw: $(cat "$tmpdir/stty")"
# The kernel frees a program an RCU grace period after its last user.
for i in $(seq 50); do
	left=$(prog_ids | comm -12 "$tmpdir/ours" -)
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || fail "programs left behind: $left"
echo "ok: q exits 0, terminal sane, no probes left"
echo PASS
