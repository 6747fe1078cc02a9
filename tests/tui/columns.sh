#!/usr/bin/env bash
# What locktop says about its columns is true: the columns --help names
# are the columns the screen draws in each view, in both modes, and the
# batch table's header, and the other way round; the man page's COLUMNS
# section says what --help says. The help gives no bug address.
. "$(dirname "$0")/../lib.sh"
locktop=$1 man=$2 mkarchive=$3

"$locktop" --help >"$tmpdir/help"
if grep -nE 'Report bugs|https?://|[A-Za-z0-9._-]+@[A-Za-z0-9-]+\.[a-z]' \
	"$tmpdir/help"; then
	fail "--help gives an address"
fi

# The help's columns as SECTION|TITLE|MEANING lines, its headings as
# head|SECTION|HEADING, the paragraph before them as intro||TEXT.
awk '
function flush() {
	if (title != "")
		print sec "|" title "|" text
	title = ""
}
/^Columns\. / { on = 1; sec = "intro"; text = substr($0, 10); next }
!on { next }
/^$/ { flush(); exit }
/^(Locks|Processes|Files) view|^Batch tables/ {
	flush()
	if (sec == "intro")
		print "intro||" text
	sec = $1
	h = $0; sub(/:$/, "", h)
	print "head|" sec "|" h
	next
}
sec == "intro" { text = text " " $0; next }
/^                     [^ ]/ { sub(/^ +/, ""); text = text " " $0; next }
/^  [^ ]/ {
	flush()
	title = substr($0, 3, 19); sub(/ +$/, "", title)
	text = substr($0, 22)
	sub(/^ +/, "", text)
	next
}' "$tmpdir/help" >"$tmpdir/help.cols"
grep -q '^Locks|LOCK|' "$tmpdir/help.cols" ||
	fail "no Locks columns in --help: $(cat "$tmpdir/help")"
[ "$(grep -c '^head|' "$tmpdir/help.cols")" = 4 ] ||
	fail "want the Locks, Processes, Files and batch tables in --help"

# The man page's COLUMNS section, the same way.
awk '
function flush() {
	if (title != "")
		print sec "|" title "|" text
	title = ""
}
function plain(s) {
	gsub(/\\-/, "-", s)
	gsub(/\\f[BIRP]/, "", s)
	gsub(/"/, "", s)
	return s
}
/^\.SH COLUMNS$/ { on = 1; sec = "intro"; text = ""; next }
!on { next }
/^\.SH / { flush(); exit }
/^\.SS / {
	flush()
	if (sec == "intro")
		print "intro||" text
	h = plain(substr($0, 5))
	split(h, w, " ")
	sec = w[1]
	print "head|" sec "|" h
	next
}
/^\.TP$/ { flush(); want_title = 1; next }
/^\.B / && want_title { title = plain(substr($0, 4)); text = ""; want_title = 0; next }
/^\./ { flush(); next }
{ text = (text == "" ? "" : text " ") plain($0) }
' "$man" >"$tmpdir/man.cols"
diff -u "$tmpdir/help.cols" "$tmpdir/man.cols" >"$tmpdir/diff" ||
	fail "the man page's COLUMNS (+) differ from --help's (-):
$(cat "$tmpdir/diff")"
echo "ok: the man page says what --help says"

# titles SECTION cumulative: the titles --help gives a section's columns,
# the second of two when cumulative is 1; HOST, which only a view of
# hosts shows (tests/fleet/fleet.sh sees it), not for one machine's.
titles() {
	awk -F'|' -v s="$1" -v c="$2" '$1 == s && $2 != "HOST" {
		n = split($2, t, ", ")
		print (c && n > 1) ? t[2] : t[1]
	}' "$tmpdir/help.cols"
}

# same WHAT HEADER SECTION CUMULATIVE: every title of the section is a
# title of the header line and the header has no other.
same() {
	local what=$1 head=$2 rest
	[ -n "$head" ] || fail "$what: no header line"
	rest=$(titles "$3" "$4" | awk -v h=" $head " '
		{
			i = index(h, " " $0 " ")
			if (!i) { print "missing: " $0; bad = 1; next }
			h = substr(h, 1, i) substr(h, i + length($0) + 2)
		}
		END { gsub(/ /, "", h); if (h != "") print "not in --help: " h }')
	[ -z "$rest" ] || fail "$what: header '$head' and --help: $rest"
	echo "ok: $what"
}

py=/usr/bin/python3
$py -c 'from pcp import pmi' 2>/dev/null ||
	skip "python3-pcp is not installed: no archive to draw"
command -v tmux >/dev/null || skip "tmux is not installed"
$py "$mkarchive" "$tmpdir/a" 4

# The batch table of an archive: no BPF needed.
"$locktop" --archive "$tmpdir/a" -b -d 1 -n 1 >"$tmpdir/batch" ||
	fail "batch replay failed"
same "batch table" "$(grep -m1 '^LOCK ' "$tmpdir/batch")" Batch 0

# The screen, wide enough that no column is dropped.
. "$(dirname "$0")/tmux.sh"
trap 'tmux_end; rm -rf "$tmpdir"' EXIT
T new-session -d -s lt -x 250 -y 30 \
	"env TERM=tmux-256color LC_ALL=C.UTF-8 $locktop --archive $tmpdir/a -d 1 2>$tmpdir/err; echo \$? >$tmpdir/rc; sleep 60"

# view_head KEY SECTION FIRST-TITLE: after KEY, the view's header line,
# without the sort column's triangle.
view_head() {
	T send-keys -t lt "$1"
	wait_for "$2 view" "^ *$3 .* "
	grep -m1 -E "^ *$3 " "$tmpdir/screen" | LC_ALL=C sed 's/\xe2\x96\xb3//g; s/\xe2\x96\xbd//g'
}
wait_for "Locks view" '^LOCK '
for mode in 0 1; do
	if [ "$mode" = 1 ]; then
		T send-keys -t lt F2 t
		wait_for "cumulative figures" '^LOCK .* WAITS +WAIT'
	fi
	same "screen Locks, cumulative $mode" "$(view_head F2 Locks LOCK)" \
		Locks "$mode"
	same "screen Processes, cumulative $mode" \
		"$(view_head F3 Processes PID)" Processes "$mode"
	same "screen Files, cumulative $mode" "$(view_head F4 Files FILE)" \
		Files "$mode"
done
quit_screen
echo PASS
