#!/usr/bin/env bash
# The probes agree with lockbench's own measurements: the same run, seen
# from inside (clock_gettime around every blocking acquire) and from the
# kernel. Usage: accuracy.sh LOCKTOP LOCKBENCH BACKEND
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2 backend=$3
require_bpf

"$locktop" --batch --json --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$lockbench" --lock "$backend" -n 16 -l 2000 -H 16 --hold-us 20 \
	--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" ||
	fail "lockbench under locktop failed"
jq -e '.check == "OK"' "$tmpdir/lb.json" >/dev/null || fail "lockbench's check failed"
final=$(tail -n 1 "$tmpdir/lt.json")

# Our figures, summed over the table's locks (the table file is ours).
ours() {
	jq --arg f "$1" '[.locks[] | select(.kind != "kernel" and .kind != "spin") |
	select(.name | contains("table.tdb")) |
		.[$f]] | add // 0' <<<"$final"
}
truth() { jq ".$1" "$tmpdir/lb.json"; }

[ "$(truth contended)" -gt 50 ] || fail "too little contention to judge: $(truth contended)"
if [ "$backend" = adaptive ]; then
	# lockbench's wait includes its spinning, which never enters the
	# kernel; the time it slept in FUTEX_WAIT is what the probe sees.
	within "wait time" "$(ours wait_ns)" "$(truth sleep_ns)" 5
else
	within "wait time" "$(ours wait_ns)" "$(truth wait_ns)" 5
fi
case $backend in
fcntl | ofd | flock)
	# Each contended acquisition starts with one refused try-lock.
	within "contended" "$(ours trylock_failures)" "$(truth contended)" 5
	within "acquisitions" "$(ours acquires)" "$(truth acquires)" 5
	# The kernel's hold runs from the grant inside the lock call to the
	# unlock inside the next one; lockbench's, from the first call's
	# return to the second's start. Ours is longer by the two syscall
	# crossings of each hold, and by no more than that.
	awk -v a="$(ours hold_ns)" -v b="$(truth hold_ns)" \
		-v n="$(truth acquires)" 'BEGIN {
		x = (a - b) / n
		printf "hold time: ours %.0f, lockbench %.0f, %.2f us more per hold\n", a, b, x / 1000
		exit !(x >= 0 && x <= 10000) }' ||
		fail "hold time is not lockbench's plus at most 10 us per hold"
	;;
mutex | adaptive)
	# A refused try is not a sleep: glibc's lock tries again, and the
	# adaptive lock spins, before either sleeps in the kernel. Compare
	# with the acquisitions that went to sleep.
	within "contended" "$(ours contended)" "$(truth slept)" 5
	;;
esac

# A chain's lock is one lock, shared by several waiting processes.
case $backend in
flock) kind=flock ;;
mutex | adaptive) kind=futex ;;
*) kind=$backend ;;
esac
top=$(jq -c --arg k "$kind" '[.locks[] | select(.kind == $k and
	(.name | contains("table.tdb")))] | max_by(.wait_ns)' <<<"$final")
[ "$(jq '.pids | length' <<<"$top")" -ge 3 ] ||
	fail "the busiest lock is not shared by several processes: $top"
echo "busiest: $(jq -c '{name, waits, pids: (.pids | length)}' <<<"$top")"

# Per lock, by the lock's offset in the file.
for off in $(jq '.locks | sort_by(-.wait_ns) | .[0:3][] | .offset' "$tmpdir/lb.json"); do
	t=$(jq --argjson o "$off" '.locks[] | select(.offset == $o) | .wait_ns' "$tmpdir/lb.json")
	case $backend in
	mutex | adaptive) suffix=$(printf 'table.tdb+0x%x' "$off") ;;
	flock) suffix=table.tdb ;;
	*) suffix=$(printf 'table.tdb+0x%x' "$off") ;;
	esac
	o=$(jq --arg s "$suffix" '[.locks[] |
		select(.kind != "kernel" and .kind != "spin") |
		select(.name | endswith($s)) | .wait_ns] | add // 0' <<<"$final")
	[ "$backend" = flock ] && t=$(truth wait_ns)
	[ "$backend" = adaptive ] &&
		t=$(jq --argjson o "$off" '.locks[] | select(.offset == $o) | .sleep_ns' "$tmpdir/lb.json")
	within "lock at $off" "$o" "$t" 5
done
echo PASS
