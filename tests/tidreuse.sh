#!/usr/bin/env bash
# A robust mutex's holder is the owner TID in its word, which the
# collector turns into its process. A thread's TID outlives neither its
# process nor its own end: here process A1 holds the mutex from a thread
# of its own, ends, and a new process A2 gets that TID as its PID and
# holds another mutex. Then A3 holds a third from a thread that ends
# while A3 lives on, and A4 gets that TID. Each lock names its own
# process as holder.
. "$(dirname "$0")/lib.sh"
locktop=$1 holder=$2
require_bpf
[ -w /proc/sys/kernel/ns_last_pid ] || skip "cannot choose the next PID"

# The traced run. as_pid TID NAME runs holder on NAME-N.dat until it
# gets TID as its PID, and writes that try's N to NAME.try.
cat >"$tmpdir/run.sh" <<'EOF'
holder=$1 dir=$2
as_pid() {
	local i
	for i in $(seq 20); do
		# Straight after: the shell forks the program itself.
		echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid
		"$holder" "$dir/$2-$i.dat" 300 >"$dir/$2.json" || return 1
		if [ "$(jq .a "$dir/$2.json")" = "$1" ]; then
			echo "$i" >"$dir/$2.try"
			return 0
		fi
	done
}
"$holder" -t "$dir/one.dat" 300 >"$dir/one.json" || exit 1
# The collector sees A1 end and forgets it within two reads.
sleep 1.5
as_pid "$(jq .a_tid "$dir/one.json")" two || exit 1
"$holder" -T "$dir/three.dat" 300 >"$dir/three.json" &
a3=$!
# Whole once its closing brace is out: jq's status on a part is not to
# be trusted.
until grep -q '}' "$dir/three.json"; do
	kill -0 "$a3" || exit 1
	sleep 0.1
done
# Its thread has ended; the collector forgets the TID within three reads,
# while A3 lives.
sleep 1.5
as_pid "$(jq .a_tid "$dir/three.json")" four || exit 1
kill "$a3"
wait "$a3" || true
EOF
"$locktop" --batch --json --delay 0.3 --limit 0 --output "$tmpdir/lt.json" -- \
	bash "$tmpdir/run.sh" "$holder" "$tmpdir" || fail "locktop or holder failed"
[ -s "$tmpdir/two.try" ] || fail "could not run A2 as A1's thread's TID"
a1=$(jq .a "$tmpdir/one.json")
tid=$(jq .a_tid "$tmpdir/one.json")
try=$(cat "$tmpdir/two.try")
[ "$a1" != "$tid" ] || fail "A1's holding thread is its main thread"
final=$(tail -n 1 "$tmpdir/lt.json")

holder_of() {
	jq -c --arg p "$1" '[.locks[] | select(.kind == "futex" and
		(.name | test($p)))] | map(.holders[0].pid)' <<<"$final"
}
one=$(holder_of 'one\.dat\+0x100$')
two=$(holder_of "two-$try\\.dat\\+0x100\$")
echo "A1 $a1 held from TID $tid: holders $one; A2 $tid (try $try): holders $two"
[ "$one" = "[$a1]" ] || fail "A1's mutex names $one, not A1 ($a1)"
[ "$two" = "[$tid]" ] || fail "A2's mutex names $two, not A2 ($tid)"

[ -s "$tmpdir/four.try" ] || fail "could not run A4 as A3's thread's TID"
a3=$(jq .a "$tmpdir/three.json")
tid=$(jq .a_tid "$tmpdir/three.json")
try=$(cat "$tmpdir/four.try")
three=$(holder_of 'three\.dat\+0x100$')
four=$(holder_of "four-$try\\.dat\\+0x100\$")
echo "A3 $a3 held from TID $tid: holders $three; A4 $tid (try $try): holders $four"
[ "$three" = "[$a3]" ] || fail "A3's mutex names $three, not A3 ($a3)"
[ "$four" = "[$tid]" ] || fail "A4's mutex names $four, not A4 ($tid)"
echo PASS
