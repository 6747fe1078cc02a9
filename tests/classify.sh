#!/usr/bin/env bash
# An idle thread pool on a condition variable beside one contended mutex:
# the mutex ranks as lock contention, the idle waits are futex-cond.
. "$(dirname "$0")/lib.sh"
locktop=$1 condpool=$2
require_bpf

"$locktop" --batch --json --all --delay 0.5 --output "$tmpdir/lt.json" -- \
	"$condpool" >"$tmpdir/truth.json" || fail "condpool failed"
mutex=$(jq -r .mutex "$tmpdir/truth.json")
final=$(tail -n 1 "$tmpdir/lt.json")

kind_of() {
	jq -r --arg a "$1" '[.locks[] | select(.address == $a) | .kind] | unique | join(",")' <<<"$final"
}
[ "$(kind_of "$mutex")" = futex ] || fail "the mutex is '$(kind_of "$mutex")', not futex"
conds=$(jq '[.locks[] | select(.kind == "futex-cond") | .wait_ns] | add // 0' <<<"$final")
locks=$(jq '[.locks[] | select(.kind == "futex") | .wait_ns] | add // 0' <<<"$final")
[ "$conds" -gt 0 ] || fail "no futex-cond waits seen"
echo "futex wait $locks ns, futex-cond wait $conds ns"
# The idle pool waited longer in all than the mutex's waiters ...
[ "$conds" -gt "$locks" ] || fail "the idle pool should have waited longer"

# ... yet the default view ranks only lock contention, the mutex first.
"$locktop" --batch --json --delay 0.5 --output "$tmpdir/def.json" -- \
	"$condpool" >"$tmpdir/truth2.json"
mutex=$(jq -r .mutex "$tmpdir/truth2.json")
first=$(tail -n 1 "$tmpdir/def.json" | jq -c '.locks[0]')
[ "$(jq -r .address <<<"$first")" = "$mutex" ] || fail "first row is not the mutex: $first"
tail -n 1 "$tmpdir/def.json" | jq -e '[.locks[] | select(.kind == "futex-cond")] | length == 0' >/dev/null ||
	fail "futex-cond shown by default"
echo PASS
