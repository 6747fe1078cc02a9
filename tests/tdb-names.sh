#!/usr/bin/env bash
# Samba's tdb (the system's libtdb, workloads/tdbstress) names its locks
# alike in both of its modes: a run with fcntl locks and a run with
# robust mutexes (TDB_MUTEX_LOCKING) on the same three chains show rows
# "PATH chain N" and "PATH freelist", fcntl in one, futex in the other,
# with the same keys ("tdb:s.tdb chain N"), so that locktop diff pairs
# them. Each run's waits on the file agree within 1% with a bpftrace
# count in the same run: the kernel's file lock tracepoint
# (tests/file-truth.bt) for fcntl, the futex calls (tests/futex-truth.bt)
# for mutexes.
#
# Read only once its waiters have ended (SIGINT after the children's
# load), the mutex run's chains keep their names: the parent, of the
# same program, still maps the file, as Samba's parent smbd keeps its
# tdbs once a client's smbd has gone.
# Usage: tdb-names.sh LOCKTOP TDBSTRESS
. "$(dirname "$0")/lib.sh"
locktop=$1 tdbstress=$2
require_bpf
command -v bpftrace >/dev/null || skip "bpftrace is not installed"

db=$tmpdir/s.tdb
for mode in fcntl mutex; do
	rm -f "$db"
	truth=file-truth.bt m=
	[ "$mode" = mutex ] && truth=futex-truth.bt m=-m
	start_truth "$(dirname "$0")/$truth" tdbstress
	"$locktop" record -o "$tmpdir/$mode.rec" --interval 1 -- \
		"$tdbstress" -n 8 -l 20000 -H 3 $m -p "$db" >"$tmpdir/$mode.out" ||
		fail "tdbstress ($mode) under locktop record failed"
	kill -INT "$bt"
	wait "$bt" || true
	mv "$tmpdir/bt.out" "$tmpdir/$mode.bt"
	gone
	jq -e '.failed == 0' "$tmpdir/$mode.out" >/dev/null ||
		fail "tdbstress ($mode): $(cat "$tmpdir/$mode.out")"
	kind=fcntl
	[ "$mode" = mutex ] && kind=futex
	rows=$(jq -c --arg d "$db " --arg k "$kind" '[.final.locks[] |
		select(.kind == $k and (.name | startswith($d)))]' "$tmpdir/$mode.rec")
	echo "$mode: $(jq -c '[.[] | select(.waits > 0) | {name, key, waits}]' <<<"$rows")"
	for what in "chain 0" "chain 1" "chain 2" freelist; do
		jq -e --arg n "$db $what" --arg k "tdb:s.tdb $what" \
			'[.[] | select(.name == $n and .key == $k and .waits > 0)] |
			length == 1' <<<"$rows" >/dev/null ||
			fail "$mode: no one $kind row '$db $what' (key 'tdb:s.tdb $what') with waits"
	done
	ours=$(jq '[.[].waits] | add' <<<"$rows")
	if [ "$mode" = fcntl ]; then
		t=$(awk -v m="@waits[$(stat -c %i "$db")]:" '$1 == m { print $2 }' \
			"$tmpdir/$mode.bt")
	else
		t=$(awk '$1 ~ /^@waits\[/ { s += $2 } END { print s + 0 }' "$tmpdir/$mode.bt")
	fi
	[ "${t:-0}" -gt 1000 ] || fail "$mode: too little contention to judge: ${t:-0}"
	within "$mode waits on the file" "$ours" "$t" 1 "bpftrace"
done

# The same chain is one row across the two runs.
"$locktop" diff --json "$tmpdir/fcntl.rec" "$tmpdir/mutex.rec" >"$tmpdir/diff.json" ||
	fail "locktop diff exited $?"
for what in "chain 0" "chain 1" "chain 2" freelist; do
	jq -e --arg k "tdb:s.tdb $what" '[.locks[] | select(.key == $k) |
		.before and .after] == [true]' "$tmpdir/diff.json" >/dev/null ||
		fail "diff does not pair 'tdb:s.tdb $what': $(jq -c \
			'[.locks[] | {key, before, after}]' "$tmpdir/diff.json")"
done

rm -f "$db"
"$locktop" -b -j -a -d 600 -o "$tmpdir/gone.json" &
lt=$!
wait_progs '^lt_pwritev2_x$' && wait_attached "$lt" ||
	fail "locktop did not attach"
"$tdbstress" -n 8 -l 20000 -H 3 -m -p "$db" -w 60 >"$tmpdir/gone.out" &
parent=$!
for _ in $(seq 600); do
	[ -s "$tmpdir/gone.out" ] && break
	sleep 0.1
done
jq -e '.failed == 0' "$tmpdir/gone.out" >/dev/null ||
	fail "tdbstress (parent lingering): $(cat "$tmpdir/gone.out")"
[ "$(pgrep -c -P "$parent" || true)" = 0 ] || fail "tdbstress's children live on"
stop_pid "$lt" || fail "locktop failed"
kill "$parent"
wait "$parent" || true
gone
rows=$(jq -c --arg d "$db " '[.locks[] | select(.kind == "futex" and
	.waits > 0) | {name, key, waits}]' <(tail -n 1 "$tmpdir/gone.json"))
echo "read once the children ended: $rows"
for what in "chain 0" "chain 1" "chain 2"; do
	jq -e --arg n "$db $what" '[.[] | select(.name == $n)] | length == 1' \
		<<<"$rows" >/dev/null ||
		fail "no row '$db $what' once its waiters ended: $rows"
done
echo PASS
