#!/usr/bin/env bash
# A lock site on the live screen (tmux): sitelock's processes each take
# their own mutex at one [heap] offset. The Locks view shows one row,
# [heap]+0x... (N sitelock); Enter lists its processes' rows, one per
# process, and Esc goes back; the Processes view's TOP LOCK is the site.
. "$(dirname "$0")/../lib.sh"
locktop=$1 sitelock=$2
require_bpf
command -v tmux >/dev/null || skip "tmux is not installed"
procs=3
tmpdir=$(mktemp -d)
. "$(dirname "$0")/tmux.sh"
cleanup() {
	tmux_end
	end_jobs
	rm -rf "$tmpdir"
}
trap cleanup EXIT

T new-session -d -s lt -x 140 -y 40 \
	"env TERM=tmux-256color LC_ALL=C $locktop -d 0.5 --no-kernel-locks --spin-hz 0 -- $sitelock -p $procs -t 3 -s 30 -h 20 2>$tmpdir/err; echo \$? >$tmpdir/rc; sleep 60"

# malloc's heap; under AddressSanitizer, whose allocator keeps its own
# anonymous mappings from 0x600000000000 on, the mapping and the offset.
if ldd "$sitelock" 2>/dev/null | grep -q libasan; then
	word=anon@ mem='\[anon@0x60[0-9a-f]+\]\+0x[0-9a-f]+'
else
	word=heap mem='\[heap\]\+0x[0-9a-f]+'
fi
site="$mem \($procs sitelock\) +futex "
wait_for "the site's row" "$site"
n=$(grep -cE "^$mem " "$tmpdir/screen")
[ "$n" = 1 ] || fail "the site is $n rows: $(cat "$tmpdir/screen")"
echo "ok: one row, $(grep -oE "$mem \($procs sitelock\)" "$tmpdir/screen")"

# Enter on the site: its processes' own rows.
T send-keys -t lt '/'
T send-keys -t lt -l "$word"
T send-keys -t lt Enter
wait_for "filtered" "name~'$word'"
T send-keys -t lt Home Enter
wait_for "members" "processes of $mem \($procs sitelock\)"
wait_for "member rows" "^$mem +futex "
rows=$(grep -cE "^$mem +futex " "$tmpdir/screen")
[ "$rows" = $procs ] || fail "$rows member rows: $(cat "$tmpdir/screen")"
echo "ok: Enter lists $rows processes' rows"
# A member's Enter is its detail.
T send-keys -t lt Home Enter
wait_for "a member's detail" '^kind futex +id [0-9]+'
T send-keys -t lt Escape
wait_for "back to the members" "processes of $mem"
T send-keys -t lt Escape
wait_for "back to the site" "$site"
echo "ok: Esc goes back"

# Processes: every sitelock worker's TOP LOCK is the site.
T send-keys -t lt c P
wait_for "Processes view" '^ *PID +COMMAND'
wait_for "TOP LOCK" "sitelock .*$mem \($procs sitelock\)"
tops=$(grep -cE "sitelock .*$mem \($procs sitelock\)" "$tmpdir/screen")
[ "$tops" = $procs ] || fail "$tops processes name the site: $(cat "$tmpdir/screen")"
echo "ok: TOP LOCK names the site in $tops processes"
quit_screen
gone
echo PASS
