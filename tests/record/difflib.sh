# Shared by the record tests that diff synthetic records: sourced after
# ../lib.sh, with $locktop and $mkrecord set and the current directory
# the test's own.

mk() { python3 "$mkrecord" "$@" || fail "mkrecord.py $*"; }

# diff_ok ARGS...: locktop diff into out.txt, exit 0, nothing from the
# sanitizers.
diff_ok() {
	local rc=0
	"$locktop" diff "$@" >out.txt 2>err.txt || rc=$?
	if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' err.txt; then
		cat err.txt >&2
		fail "sanitizer report"
	fi
	[ "$rc" -eq 0 ] || fail "locktop diff $* exited $rc: $(cat out.txt err.txt)"
}

# line_of ROW METRIC: the text line of METRIC ("p99 wait") under ROW.
line_of() {
	awk -v row="$1" -v m="  $2 " '
		/^[^ ]/ { cur = $0 }
		cur == row && index($0, m) == 1 { print; exit }' out.txt
}

# verdict_is ROW METRIC VERDICT: the line ends in VERDICT (a glob).
verdict_is() {
	local l
	l=$(line_of "$1" "$2")
	[ -n "$l" ] || fail "no line '$2' under '$1': $(cat out.txt)"
	case $l in
	*"  "$3) ;;
	*) fail "$1 $2: want '$3', got: '$l'" ;;
	esac
}
