#!/usr/bin/env bash
# The same work with a mutex per thread shows no lock at all, although
# the threads still block in futex waits (pthread_join).
. "$(dirname "$0")/lib.sh"
locktop=$1 contend=$2
require_bpf

# The kernel's own locks and sampled spinning are left out: the claim is
# of the program's futex locks (the threads do meet kernel locks, and a
# sample may land in the vDSO's clock read retry loop).
"$locktop" --batch --json --delay 0.3 --no-kernel-locks --spin-hz 0 \
	--output "$tmpdir/lt.json" -- \
	"$contend" -i -t 4 -n 2000 -h 20 >"$tmpdir/truth.json" ||
	fail "locktop or contend failed"
[ "$(jq -r .waits "$tmpdir/truth.json")" = 0 ] || fail "contend -i contended"
final=$(tail -n 1 "$tmpdir/lt.json")
[ "$(jq -r .final <<<"$final")" = true ] || fail "no final object"
# --spin-hz 0 counts no sched_yield call sites either (the sanitizers'
# leak check yields at exit): no row at all.
[ "$(jq '[.locks[]] | length' <<<"$final")" = 0 ] ||
	fail "locks shown: $final"

# The joins were seen, as event waits: --all shows them.
"$locktop" --batch --json --all --output "$tmpdir/all.json" -- \
	"$contend" -i -t 4 -n 2000 -h 20 >/dev/null
tail -n 1 "$tmpdir/all.json" | jq -e '[.locks[] | select(.kind == "futex-cond")] |
	length > 0' >/dev/null || fail "--all does not show the joins"
echo PASS
