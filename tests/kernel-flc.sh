#!/usr/bin/env bash
# Kernel locks: 32 processes taking fcntl locks on one table contend on
# its file lock context's spinlock. Where the kernel reports spinning
# waits (a bpftrace count on the same tracepoints in the same run,
# kernel-truth.bt), locktop shows them as "flc_lock of" the table, a
# spinlock, with the same waits; where it reports none, locktop shows
# none either and says why. No program is left once locktop exits.
# Usage: kernel-flc.sh LOCKTOP LOCKBENCH
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf
command -v bpftrace >/dev/null 2>&1 || skip "bpftrace is not installed"

start_truth "$(dirname "$0")/kernel-truth.bt" lockbench
"$locktop" --batch --json --delay 1 --output "$tmpdir/lt.json" -- \
	"$lockbench" --lock fcntl -n 32 -l 2000 -H 16 --hold-us 20 \
	--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" ||
	fail "lockbench under locktop failed"
kill -INT "$bt"
wait "$bt" || true
gone
final=$(tail -n 1 "$tmpdir/lt.json")
spinning=$(awk '$1 == "@spinning:" { print $2 }' "$tmpdir/bt.out")
spinning=${spinning:-0}
state=$(jq -r .kernel_spinlocks <<<"$final")
echo "the kernel reported $spinning spinning waits of lockbench;" \
	"locktop: kernel spinlocks $state"

if [ "$spinning" -eq 0 ]; then
	# Nothing to name: locktop must not make spinning waits up, and
	# says that it cannot see them (unless some other task's were seen:
	# then the kernel does report them, and lockbench met none).
	jq -e '[.locks[] | select(.kind == "kernel" and
		(.kernel_type | test("^(spinlock|rwlock)")))] | length == 0' \
		<<<"$final" >/dev/null || fail "spinning kernel waits the kernel \
did not report: $(jq -c '[.locks[] | select(.kind == "kernel") |
		{name, kernel_type, waits}]' <<<"$final")"
	case $state in
	hidden)
		why=$(jq -r .kernel_spinlocks_why <<<"$final")
		[ -n "$why" ] || fail "kernel spinlocks hidden, with no reason"
		echo "this machine's kernel does not report spinlock" \
			"contention; locktop says: $why"
		;;
	visible) echo "lockbench met no spinning wait in this run" ;;
	*) fail "kernel_spinlocks: $state" ;;
	esac
	exit 0
fi

[ "$state" = visible ] || fail "the kernel reported $spinning spinning \
waits, yet locktop says kernel spinlocks are $state"
# The table's path while a process that locked it still has it open,
# else its base name, as file locks are named.
want="^flc_lock of ($tmpdir/)?table\\.tdb\$"
lock=$(jq -c --arg re "$want" '[.locks[] | select(.kind == "kernel" and
	(.name | test($re)))] | first // empty' <<<"$final")
[ -n "$lock" ] || fail "no flc_lock of the table: $(jq -c \
	'[.locks[] | select(.kind == "kernel") | .name]' <<<"$final")"
echo "lock: $(jq -c '{name, kernel_type, caller, address, waits, wait_ns}' \
	<<<"$lock")"
[ "$(jq -r .kernel_type <<<"$lock")" = spinlock ] ||
	fail "flc_lock is not a spinlock: $(jq -r .kernel_type <<<"$lock")"
# Across runs a file is its base name, whatever the name shows.
[ "$(jq -r .key <<<"$lock")" = "kernel:flc_lock of table.tdb" ] ||
	fail "key: $(jq -r .key <<<"$lock")"

# bpftrace prints the address as a signed or an unsigned number.
hex=$(jq -r .address <<<"$lock")
addr=$(printf '%u' "$hex") signed=$((hex))
truth() {
	awk -v m="@$1[$addr]:" -v s="@$1[$signed]:" '$1 == m || $1 == s {
		print $2; found = 1 } END { if (!found) print 0 }' "$tmpdir/bt.out"
}
[ "$(truth waits)" -gt 0 ] || fail "bpftrace saw no wait on $hex"
within "waits" "$(jq .waits <<<"$lock")" "$(truth waits)" 1 bpftrace
# A spinning wait lasts half a microsecond; each tracer's own programs
# on the same two tracepoints run inside the other's interval, tens of
# nanoseconds a wait, so the times agree less closely than the counts.
within "wait time" "$(jq .wait_ns <<<"$lock")" "$(truth wait_ns)" 25 bpftrace
