#!/usr/bin/env bash
# --tdb as the kernel sees it. strace records every fcntl lock call of a
# run; they must add up to lockbench's own file_locks figures, the record
# locks must fall on the records' real offsets, and mutex mode must still
# take its record, open and active locks with fcntl.
. "$(dirname "$0")/common.sh"
command -v strace >/dev/null || fail "strace is not installed"

# LeakSanitizer stops the process with ptrace at exit, which it cannot
# do under strace.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# kernel_view JSON PREFIX: lockbench's truth beside strace's count, as
# "name truth seen" lines.
kernel_view() {
	local j=$1 prefix=$2 top
	top=$(printf '%s' "$j" | jq '.locks[-1].offset')
	cat "$prefix".* | awk -v top="$top" -v j="$(printf '%s' "$j" |
		jq -r '[.file_locks.acquires, .file_locks.trylock_failures,
			.file_locks.contended, .record_offsets] | @tsv')" '
	/fcntl\([0-9]+, F_(OFD_)?SETLKW?, \{l_type=F_(RD|WR)LCK/ {
		wait = $0 ~ /SETLKW/
		match($0, /l_start=[0-9]+/)
		off = substr($0, RSTART + 8, RLENGTH - 8) + 0
		if ($0 ~ /= 0$/) {
			granted++
			if (wait)
				waited++
			if (off > top)
				rec[off] = 1
		} else if (!wait && $0 ~ /= -1 (EAGAIN|EACCES)/) {
			refused++
		}
		if (off > top && off % 64 != 0)
			odd++
	}
	END {
		n = 0
		for (o in rec)
			n++
		split(j, t, "\t")
		printf "acquires %d %d\n", t[1], granted
		printf "trylock_failures %d %d\n", t[2], refused
		printf "contended %d %d\n", t[3], waited
		printf "record_offsets %d %d\n", t[4], n
		printf "unaligned_record_locks 0 %d\n", odd
	}'
}

# same_as_kernel LABEL JSON PREFIX
same_as_kernel() {
	local out
	out=$(kernel_view "$2" "$3")
	printf '%s: %s\n' "$1" "$(printf '%s' "$out" | tr '\n' ';')"
	printf '%s\n' "$out" | awk '$2 != $3 { bad = 1 } END { exit bad }' ||
		fail "$1: lockbench's truth is not what the kernel was asked: $out"
}

for lock in fcntl ofd mutex; do
	rm -f "$tmpdir"/st.*
	j=$(strace -f -qq -ff -e trace=fcntl -o "$tmpdir/st" \
		"$lb" --json --tdb --reopen 150 --lock "$lock" -n 3 -l 600 -H 16 \
		--hold-us 10 -s 5) || fail "$lock --tdb under strace exited $?"
	check_ground_truth "$j"
	check_tdb_truth "$j"
	same_as_kernel "$lock" "$j" "$tmpdir/st"
	if [ "$lock" = mutex ]; then
		# The chains are mutexes; every fcntl call is tdb's.
		grep -hq 'l_start=0, l_len=1}) = 0' "$tmpdir"/st.* ||
			fail "mutex: no fcntl open lock"
		grep -hq 'F_RDLCK, l_whence=SEEK_SET, l_start=4, l_len=1}) = 0' "$tmpdir"/st.* ||
			fail "mutex: no fcntl active lock"
		jq_true "$j" '.file_locks.acquires == .record_locks.acquires + .open_lock.acquires + .active_lock.acquires and .record_locks.acquires > 0' \
			"mutex: its file locks are tdb's own"
	fi
done

# --blocking calls as tdb does: every lock is one blocking call and every
# unlock an F_SETLKW; only the record probes (F_WRLCK past the chains)
# do not block. What the kernel granted and refused is lockbench's count.
for lock in fcntl ofd; do
	rm -f "$tmpdir"/st.*
	j=$(strace -f -qq -ff -e trace=fcntl -o "$tmpdir/st" \
		"$lb" --json --tdb --blocking --lock "$lock" -n 3 -l 600 -H 16 \
		--hold-us 10 -s 5) || fail "$lock --tdb --blocking under strace exited $?"
	jq_true "$j" '.blocking and .check == "OK" and .file_locks.contended == 0 and
		.file_locks.slept == 0 and .file_locks.wait_ns == 0' \
		"$lock --blocking: no tries, so no waits of its own"
	top=$(jq '.locks[-1].offset' <<<"$j")
	calls=$(cat "$tmpdir"/st.* | awk -v top="$top" '
	/fcntl\([0-9]+, F_(OFD_)?SETLKW?, \{l_type=F_(RD|WR|UN)LCK/ {
		wait = $0 ~ /SETLKW/
		match($0, /l_start=[0-9]+/)
		off = substr($0, RSTART + 8, RLENGTH - 8) + 0
		if ($0 ~ /F_UNLCK/) {
			unlocks[wait]++
			next
		}
		if (!wait && !($0 ~ /F_WRLCK/ && off > top))
			stray++
		if ($0 ~ /= 0$/)
			granted++
		else if (!wait && $0 ~ /= -1 (EAGAIN|EACCES)/)
			refused++
	}
	END { printf "%d %d %d %d %d", granted, refused, stray, unlocks[0], unlocks[1] }')
	read -r granted refused stray nb_unlocks unlocks <<<"$calls"
	echo "$lock --blocking: granted $granted, refused probes $refused, other" \
		"non-blocking locks $stray, unlocks $unlocks blocking and $nb_unlocks not"
	[ "$stray" = 0 ] && [ "$nb_unlocks" = 0 ] && [ "$unlocks" -gt 0 ] ||
		fail "$lock --blocking: calls other than tdb's: $calls"
	jq_true "$j" ".file_locks.acquires == $granted and
		.file_locks.trylock_failures == $refused" \
		"$lock --blocking: lockbench counts what the kernel granted and refused"
done

# Records come from the freelist and go back to it, so the record locks
# fall on ever other offsets: many more byte ranges than the chain and
# freelist locks, each offset allocated over and over.
j=$("$lb" --json --tdb -n 4 -l 3000 -H 16 -s 9) || fail "--tdb run exited $?"
check_tdb_truth "$j"
jq_true "$j" '.record_offsets > .hash + 1' "record locks at more offsets than there are chain locks"
jq_true "$j" '.allocs > 4 * .record_offsets' "record offsets are reused by new records"
jq_true "$j" '.record_offsets <= ((.size - .locks[-1].offset) / 64 | floor)' \
	"record offsets lie in the record pool"

# --tdb changes the locks, not the work: the operation mix of a seed is
# the same with and without it.
mix='[.ops, .op_counts.fetch, .op_counts.store, .op_counts.delete,
      .op_counts.append, .op_counts.lockstore] | @csv'
a=$("$lb" --json -n 1 -l 2000 -H 16 -s 42 | jq -r "$mix")
b=$("$lb" --json -n 1 -l 2000 -H 16 -s 42 --tdb | jq -r "$mix")
[ "$a" = "$b" ] || fail "--tdb changed the operation mix: $a vs $b"
j=$("$lb" --json -n 1 -l 2000 -H 16 -s 42)
jq_true "$j" '.tdb == false and .opens == 0 and .record_locks.acquires == 0 and
	.file_locks.acquires == .acquires and .file_locks.hold_ns == .hold_ns' \
	"without --tdb, file_locks are the chain and freelist locks"

# Threads exclude each other through OFD locks only.
j=$("$lb" --json --tdb --threads --lock ofd -n 3 -l 500 -H 8 -s 2) ||
	fail "--tdb --threads --lock ofd exited $?"
check_ground_truth "$j"
check_tdb_truth "$j"
# --reopen 0: the file is opened once per worker.
j=$("$lb" --json --tdb --reopen 0 -n 2 -l 800 -H 8 -s 2) || fail "--reopen 0 exited $?"
check_tdb_truth "$j"
jq_true "$j" '.opens == 2 and .reopens == 0' "--reopen 0 never reopens"
echo ok
