#!/usr/bin/env bash
# Kernel locks: a kcontend workload's lock is named by what it guards and
# agrees, on waits and wait time within 2%, with a bpftrace script on the
# same two tracepoints run at the same time (kernel-truth.bt), for the
# lock's address; no program is left once locktop exits.
# Usage: kernel-locks.sh LOCKTOP KCONTEND MODE
. "$(dirname "$0")/lib.sh"
locktop=$1 kcontend=$2 mode=$3
require_bpf
command -v bpftrace >/dev/null 2>&1 || skip "bpftrace is not installed"

case $mode in
append)
	args=(--path "$tmpdir/app.dat")
	want="^i_rwsem of $tmpdir/app.dat\$"
	;;
dir)
	mkdir "$tmpdir/d"
	args=(--path "$tmpdir/d")
	want="^i_rwsem of $tmpdir/d\$"
	;;
dirpath)
	# By absolute paths, from a working directory elsewhere (the
	# test's): the directory is named by its path all the same.
	mkdir "$tmpdir/d"
	args=(--path "$tmpdir/d")
	want="^i_rwsem of $tmpdir/d\$"
	[ "$(pwd -P)" != "$(cd "$tmpdir/d" && pwd -P)" ] || fail "run from the directory"
	;;
mmap)
	args=()
	want='^mmap_lock of [0-9]+ kcontend$'
	;;
*) fail "unknown mode $mode" ;;
esac

# The workload's own waits, as locktop -- COMMAND counts: a reader of
# its /proc files (mmap_lock) is not of them.
start_truth "$(dirname "$0")/kernel-truth.bt" kcontend

"$locktop" --batch --json --delay 1 --output "$tmpdir/lt.json" -- \
	"$kcontend" --mode "$mode" -n 4 -t 3 "${args[@]}" >/dev/null ||
	fail "kcontend under locktop failed"
kill -INT "$bt"
wait "$bt" || true
gone

final=$(tail -n 1 "$tmpdir/lt.json")
lock=$(jq -c --arg re "$want" '[.locks[] | select(.kind == "kernel" and
	(.name | test($re)))] | max_by(.wait_ns) // empty' <<<"$final")
[ -n "$lock" ] || fail "no kernel lock named like $want: $(jq -c \
	'[.locks[] | select(.kind == "kernel") | .name]' <<<"$final")"
echo "lock: $(jq -c '{name, kernel_type, caller, address, waits, wait_ns}' \
	<<<"$lock")"
case $(jq -r .kernel_type <<<"$lock") in
rwsem-read | rwsem-write) ;;
*) fail "an rwsem named a $(jq -r .kernel_type <<<"$lock")" ;;
esac
[ -n "$(jq -r .caller <<<"$lock")" ] || fail "no caller"
# Across runs a file is its base name, an address space its process's.
case $mode in
append) key='kernel:i_rwsem of app.dat' ;;
dir | dirpath) key='kernel:i_rwsem of d' ;;
mmap) key='kernel:mmap_lock of kcontend' ;;
esac
[ "$(jq -r .key <<<"$lock")" = "$key" ] || fail "key: $(jq -r .key <<<"$lock")"

# bpftrace prints the address as a signed or an unsigned number.
hex=$(jq -r .address <<<"$lock")
addr=$(printf '%u' "$hex") signed=$((hex))
truth() {
	awk -v m="@$1[$addr]:" -v s="@$1[$signed]:" '$1 == m || $1 == s {
		print $2; found = 1 } END { if (!found) print 0 }' "$tmpdir/bt.out"
}
[ "$(truth waits)" -gt 50 ] || fail "too little contention to judge: \
$(truth waits) ($addr; bpftrace: $(grep -c '^@waits' "$tmpdir/bt.out") locks, \
$(head -c 300 "$tmpdir/bt.out"))"
within "waits" "$(jq .waits <<<"$lock")" "$(truth waits)" 2
within "wait time" "$(jq .wait_ns <<<"$lock")" "$(truth wait_ns)" 2

# An inode's i_rwsem held for writing names its owner: the waits that
# began while its word named a writer (bpftrace read the same word at
# the same begins) credit their holder, a kcontend process; none while
# a reader holds it or as the writer lets go. How many those are
# depends on the host's timing, so the kernel's word is the measure.
if [ "$mode" = append ]; then
	credited=$(jq '[.holders[].count] | add // 0' <<<"$lock")
	jq -e 'all(.holders[]; .comm == "kcontend")' <<<"$lock" >/dev/null ||
		fail "a holder is not kcontend: $(jq -c .holders <<<"$lock")"
	[ "$(truth owned)" -gt 20 ] ||
		fail "too few waits behind a named writer to judge: $(truth owned)"
	# Each tracer reads the word a moment apart (bpftrace, attached
	# first, reads it first): a writer that lets go between is seen by
	# one only. Its appends are short, so that is up to a few percent.
	within "waits credited to a writer" "$credited" "$(truth owned)" 10 \
		"bpftrace's reading of the owner word"
fi
