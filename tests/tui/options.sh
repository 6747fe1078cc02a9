#!/usr/bin/env bash
# The options the screen and the PCP sources added: wrong ones exit 2
# with a message that says what is wrong.
. "$(dirname "$0")/../lib.sh"
locktop=$1

expect() {
	local want=$1 pattern=$2 st=0
	shift 2
	"$locktop" "$@" >"$tmpdir/out" 2>"$tmpdir/err" </dev/null || st=$?
	[ "$st" = "$want" ] || fail "locktop $*: exit $st, want $want"
	grep -qiE -- "$pattern" "$tmpdir/err" ||
		fail "locktop $*: no '$pattern' in: $(cat "$tmpdir/err")"
	echo "ok: locktop $* -> $st"
}

expect 2 "--host or --archive, not both" --host a --archive b
expect 2 "trace here" --host localhost -p 1
expect 2 "trace here" --archive x -- true
expect 2 "trace here" --host localhost --stacks
expect 2 "trace here" --archive x --exact-holds
expect 2 "requires an argument" --host
expect 1 "cannot open archive $tmpdir/none" --archive "$tmpdir/none" -b

"$locktop" --help >"$tmpdir/help"
for o in --host --archive --stacks --batch --mono; do
	grep -q -- "$o" "$tmpdir/help" || fail "--help does not list $o"
done
grep -q "live screen" "$tmpdir/help" || fail "--help does not describe the screen"
echo PASS
