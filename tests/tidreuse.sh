#!/usr/bin/env bash
# A robust mutex's holder is the owner TID in its word, which the
# collector turns into its process. A thread's TID outlives neither its
# process nor that process's end: here process A1 holds the mutex from a
# thread of its own, ends, and a new process A2 gets that TID as its PID
# and holds another mutex. Each lock names its own process as holder.
. "$(dirname "$0")/lib.sh"
locktop=$1 holder=$2
require_bpf
[ -w /proc/sys/kernel/ns_last_pid ] || skip "cannot choose the next PID"

"$locktop" --batch --json --delay 0.3 --limit 0 --output "$tmpdir/lt.json" -- \
	bash -c "
	\"$holder\" -t \"$tmpdir/one.dat\" 300 >\"$tmpdir/one.json\" || exit 1
	tid=\$(jq .a_tid \"$tmpdir/one.json\")
	# The collector sees A1 end and forgets it within two reads.
	sleep 1.5
	for i in \$(seq 20); do
		# Straight after: the shell forks the program itself.
		echo \$((tid - 1)) >/proc/sys/kernel/ns_last_pid
		\"$holder\" \"$tmpdir/two-\$i.dat\" 300 >\"$tmpdir/two.json\" || exit 1
		if [ \"\$(jq .a \"$tmpdir/two.json\")\" = \"\$tid\" ]; then
			echo \$i >\"$tmpdir/try\"
			exit 0
		fi
	done" || fail "locktop or holder failed"
[ -s "$tmpdir/try" ] || fail "could not run A2 as A1's thread's TID"
a1=$(jq .a "$tmpdir/one.json")
tid=$(jq .a_tid "$tmpdir/one.json")
try=$(cat "$tmpdir/try")
[ "$a1" != "$tid" ] || fail "A1's holding thread is its main thread"
final=$(tail -n 1 "$tmpdir/lt.json")

holder_of() {
	jq -c --arg p "$1" '[.locks[] | select(.kind == "futex" and
		(.name | test($p)))] | map(.holders[0].pid)' <<<"$final"
}
one=$(holder_of 'one\.dat\+0x100$')
two=$(holder_of "two-$try\\.dat\\+0x100\$")
echo "A1 $a1 held from TID $tid: holders $one; A2 $tid: holders $two"
[ "$one" = "[$a1]" ] || fail "A1's mutex names $one, not A1 ($a1)"
[ "$two" = "[$tid]" ] || fail "A2's mutex names $two, not A2 ($tid)"
echo PASS
