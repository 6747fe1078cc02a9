#!/usr/bin/env bash
# --stacks: the stack of a lock's contended waits, unwound through code
# built without frame pointers (Debian's glibc) from the snapshot the
# probe keeps, is the caller's whole path, for futex and file locks. A
# snapshot leaves the kernel once it is unwound, and the stacks of a
# process's own locks once it has ended: the maps keep room for new
# stacks however long locktop runs.
. "$(dirname "$0")/lib.sh"
locktop=$1 contend=$2 lockbench=$3
require_bpf

"$locktop" --batch --json --stacks --delay 0.5 --output "$tmpdir/m.json" -- \
	"$contend" -t 3 -n 20000 -h 20 >/dev/null || fail "contend failed"
stack=$(tail -n 1 "$tmpdir/m.json" | jq -r '.locks[0].stack // ""')
printf 'mutex:\n%s\n' "$stack"
# The wait in libc, the mutex call, and the program's own thread function.
grep -q 'lll_lock_wait' <<<"$stack" || fail "no libc wait frame"
grep -q 'pthread_mutex_lock' <<<"$stack" || fail "no pthread_mutex_lock frame"
grep -q '^worker+0x[0-9a-f]* (contend)$' <<<"$stack" || fail "no frame in contend's worker"

"$locktop" --batch --json --stacks --delay 0.5 --output "$tmpdir/f.json" -- \
	"$lockbench" --lock fcntl -n 4 -l 6000 -H 4 --hold-us 50 \
	--path "$tmpdir/t.tdb" >/dev/null || fail "lockbench failed"
stack=$(tail -n 1 "$tmpdir/f.json" | jq -r '[.locks[] | select(.kind == "fcntl")][0].stack // ""')
printf 'fcntl:\n%s\n' "$stack"
grep -q 'fcntl' <<<"$stack" || fail "no fcntl frame"
grep -q '^lb_lock_acquire+0x[0-9a-f]* (lockbench)$' <<<"$stack" || fail "no frame in lockbench's acquire"
grep -q '^main+0x[0-9a-f]* (lockbench)$' <<<"$stack" || fail "the unwind stopped before main"
# Live: once a read has unwound them, no snapshot stays in the kernel,
# while the (lock, stack) figures do.
# Entries in locktop's own map NAME (another locktop's may have the name).
map_len() {
	local id
	for id in $(awk '/^map_id:/ { print $2 }' /proc/"$lt"/fdinfo/* \
		2>/dev/null | sort -u); do
		[ "$(/usr/sbin/bpftool map show id "$id" -j 2>/dev/null |
			jq -r .name)" = "$1" ] || continue
		/usr/sbin/bpftool map dump id "$id" -j 2>/dev/null | jq length
		return
	done
}
# Long enough to outlast locktop's start on a loaded machine; ended below.
"$contend" -t 3 -n 4000000 -h 20 >/dev/null &
work=$!
"$locktop" --batch --json --stacks --delay 0.3 --pid "$work" \
	--output "$tmpdir/live.json" &
lt=$!
for _ in $(seq 50); do
	[ "$(jq -s 'map(select(.locks[0].stack)) | length' "$tmpdir/live.json" \
		2>/dev/null || echo 0)" -ge 2 ] && break
	sleep 0.2
done
# Stopped, it makes no new stacks; the reads that follow unwind the last.
kill -STOP "$work"
for _ in $(seq 50); do
	snaps=$(map_len stack_snaps)
	[ "${snaps:-1}" -eq 0 ] && break
	sleep 0.2
done
figures=$(map_len lock_stacks)
kill -CONT "$work"
echo "live: $figures (lock, stack) entries, $snaps snapshots kept"
[ "${figures:-0}" -ge 1 ] || fail "no stack figures while running"
[ "${snaps:-1}" -eq 0 ] || fail "$snaps snapshots still in the kernel after their unwind"
# Once the process has ended and a read took its last figures, its own
# locks' stacks leave the kernel; the stack shown stays.
kill "$work"
wait "$work" || true
sleep 1.5
left=$(map_len lock_stacks)
kill -INT "$lt"
wait "$lt" || fail "locktop failed"
echo "after the exit: $left (lock, stack) entries"
[ "${left:-1}" -eq 0 ] || fail "$left stack entries of an ended process are still in the kernel"
stack=$(tail -n 1 "$tmpdir/live.json" | jq -r '.locks[0].stack // ""')
grep -q 'pthread_mutex_lock' <<<"$stack" || fail "the ended process's lock lost its stack: $stack"
echo PASS
