#!/usr/bin/env bash
# Wrong options and values: exit 2 and a message that says what is wrong.
. "$(dirname "$0")/lib.sh"
locktop=$1

expect() {
	local want=$1 pattern=$2 st=0
	shift 2
	"$locktop" "$@" >"$tmpdir/out" 2>"$tmpdir/err" || st=$?
	[ "$st" = "$want" ] || fail "locktop $*: exit $st, want $want"
	grep -qiE -- "$pattern" "$tmpdir/err" ||
		fail "locktop $*: no '$pattern' in: $(cat "$tmpdir/err")"
	echo "ok: locktop $* -> $st"
}

expect 2 "unrecognized option" --bogus
expect 2 "invalid delay 'abc'" --delay abc
expect 2 "invalid delay '0'" -d 0
expect 2 "invalid delay '-1'" -d -1
expect 2 "invalid iteration count '0'" -n 0
expect 2 "invalid iteration count 'x'" --iterations x
expect 2 "no process is named 'no-such-name'" --pid no-such-name
expect 2 "longer than the kernel keeps" -p a-name-of-sixteen
expect 2 "invalid PID '0'" -p 0
expect 2 "invalid row limit" --limit -5
expect 2 "invalid retire time 'soon'" --retire soon
expect 2 "invalid retire time '-1'" --retire -1
expect 2 "at most 31 days" --retire 99999999
expect 2 "--ready-file needs a path" --ready-file ""
expect 2 "requires an argument" --output
expect 2 "invalid sampling rate '-3'" --spin-hz -3
expect 2 "give one of them" --spin-always --spin-hz 0
expect 2 "--ready-file and COMMAND trace here" --host local: --spin-always
expect 2 "--ready-file and COMMAND trace here" --host local: --ready-file x
expect 2 "no process with PID 2147483" -p 2147483
expect 1 "cannot write '/nonexistent/dir/x'" -o /nonexistent/dir/x -n 1

"$locktop" --help >"$tmpdir/help"
grep -q EXAMPLES "$tmpdir/help" || fail "--help has no examples"
grep -q -- '--json' "$tmpdir/help" || fail "--help does not list --json"
"$locktop" --version | grep -q '^locktop ' || fail "--version"

# Without privileges, the message says what is needed.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	st=0
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$locktop" --batch -n 1 2>"$tmpdir/err" >/dev/null || st=$?
	[ "$st" = 1 ] || fail "unprivileged: exit $st, want 1"
	grep -q "needs root, or the capabilities CAP_BPF" "$tmpdir/err" ||
		fail "unprivileged: $(cat "$tmpdir/err")"
	echo "ok: unprivileged -> 1"
fi
echo PASS
