#!/usr/bin/env bash
# The live screen with on-CPU sampling (tmux): lockbench's spinlocks
# give the header's spin line (spin time per second and the threads
# spinning now) and rows of kind spin; the spinners counted stay within
# lockbench's processes, and drop to 0 once they are stopped.
. "$(dirname "$0")/../lib.sh"
locktop=$1 lockbench=$2
require_bpf
command -v tmux >/dev/null || skip "tmux is not installed"

. "$(dirname "$0")/tmux.sh"
lb=
cleanup() {
	tmux_end
	[ -n "$lb" ] && kill -- -"$lb" 2>/dev/null
	rm -rf "$tmpdir"
}
trap cleanup EXIT

procs=4
table=$tmpdir/t.tdb
setsid "$lockbench" --lock spin -n "$procs" -l 1000000000 -H 4 --hold-us 20 \
	--path "$table" --keep >/dev/null 2>&1 &
lb=$!
# locktop traces lockbench and its workers only: what else spins on
# this machine is not theirs.

T new-session -d -s lt -x 140 -y 40 \
	"env TERM=tmux-256color LC_ALL=C $locktop -d 0.5 --no-kernel-locks -p $lb 2>$tmpdir/err; sleep 60"

wait_for "header" '^locktop [0-9:]+ +every 0.5s'
wait_for "spin line" 'spin [0-9.]+ms/s [1-9][0-9]* spinning'
wait_for "spin row" "t\.tdb\+0x[0-9a-f]+ +spin "
# Several reads: the spin time is CPU time, at most the CPUs' own; the
# spinning threads are some of lockbench's workers. Spinning now is each
# thread's latest sample: at an instant when every worker's was outside
# its loop (holding the lock, or between operations) it is 0, so it must
# be at least 1 in some reads, not in each.
cpus=$(nproc)
seen=0
for i in 1 2 3 4 5; do
	sleep 0.5
	screen >"$tmpdir/screen"
	line=$(grep -oE 'spin [0-9.]+ms/s [0-9]+ spinning' "$tmpdir/screen") ||
		fail "no spin line: $(cat "$tmpdir/screen")"
	echo "read $i: $line"
	awk -v l="$line" -v c="$cpus" -v p="$procs" 'BEGIN {
		split(l, f, " "); ms = f[2] + 0; n = f[3] + 0
		exit !(ms > 0 && ms <= c * 1000 * 1.05 && n <= p) }' ||
		fail "spin line out of range ($cpus CPUs, $procs workers): $line"
	# Per lock: the spinning threads of the spin rows add up to the
	# header's (WAITERS, the 8th column).
	rows=$(awk '$2 == "spin" { s += $8 } END { print s + 0 }' "$tmpdir/screen")
	n=$(awk '{ print $3 }' <<<"${line}")
	[ "$rows" -le "$n" ] && { [ "$n" -eq 0 ] || [ "$rows" -ge 1 ]; } ||
		fail "spin rows' spinning threads ($rows) against the header's ($n)"
	[ "$n" -eq 0 ] || seen=$((seen + 1))
done
[ "$seen" -ge 1 ] || fail "no read found a thread spinning now"
echo "ok: spin line and rows"

# Stopped, nothing spins any more: 0 spinning within an interval or two.
kill -STOP -- -"$lb"
wait_for "no spinner after stop" 'spin +(-|[0-9.]+ms/s) 0 spinning'
kill -CONT -- -"$lb"
echo "ok: spinning now drops to 0"
echo PASS
