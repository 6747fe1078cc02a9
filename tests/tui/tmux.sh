# Sourced by the screen tests: a private tmux server (T), its pane "lt"
# captured into $tmpdir/screen, and waits on what the screen shows. A
# wait that fails prints the screen and locktop's stderr ($tmpdir/err)
# and exit status ($tmpdir/rc), where the test keeps them.

sock=locktoptest-$$
T() { tmux -L "$sock" "$@"; }

screen() { T capture-pane -p -t lt; }

# Polls the screen until the extended regex matches, or fails.
wait_for() {
	local what=$1 pattern=$2 i
	for i in $(seq 100); do
		screen >"$tmpdir/screen" 2>/dev/null || true
		grep -qE -- "$pattern" "$tmpdir/screen" && return 0
		sleep 0.1
	done
	echo "--- screen:" >&2
	cat "$tmpdir/screen" >&2
	echo "--- locktop's stderr, status '$(cat "$tmpdir/rc" 2>/dev/null)':" >&2
	cat "$tmpdir/err" >&2 2>/dev/null
	fail "$what: no /$pattern/ on the screen"
}

# q, and locktop's end: its pane's shell writes its exit status in
# $tmpdir/rc. The screen must end before its terminal does (a sanitizer
# build checks for leaks as it exits, and a hangup then can stall it).
quit_screen() {
	local i
	T send-keys -t lt q
	for i in $(seq 100); do
		[ -s "$tmpdir/rc" ] && return 0
		sleep 0.1
	done
	fail "q: locktop did not end: $(cat "$tmpdir/err" 2>/dev/null)"
}

# Ends the private tmux server and waits for what ran in its panes to
# end, so that nothing writes in $tmpdir after it (a pane's shell
# writes locktop's exit status as it goes). Each pane's shell leads a
# session of its own: a process of it that outlives the terminal by
# five seconds is killed, and named, so that none runs on into the
# next test.
tmux_end() {
	local pids p i left
	pids=$(T list-panes -a -F '#{pane_pid}' 2>/dev/null) || true
	T kill-server 2>/dev/null || true
	for p in $pids; do
		for i in $(seq 50); do
			left=$(pgrep -s "$p" 2>/dev/null) || break
			sleep 0.1
		done
		[ -z "$left" ] && continue
		echo "tmux_end: killed what outlived its terminal:" >&2
		ps -o pid=,stat=,pcpu=,args= -p "${left//$'\n'/,}" >&2 || true
		pkill -KILL -s "$p" 2>/dev/null || true
	done
}
