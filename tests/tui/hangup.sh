#!/usr/bin/env bash
# The live screen whose terminal hangs up (its window closed, its ssh
# connection dropped) ends as SIGHUP ends it: every probe detached, no
# process left behind. The screen's process does not lead its session
# (a shell started it), so the kernel's SIGHUP reaches the shell, not it:
# it hears the hangup on the terminal itself.
. "$(dirname "$0")/../lib.sh"
locktop=$1
require_bpf
command -v tmux >/dev/null || skip "tmux is not installed"

. "$(dirname "$0")/tmux.sh"
trap 'tmux_end; rm -rf "$tmpdir"' EXIT

T new-session -d -s lt -x 120 -y 30 \
	"env TERM=tmux-256color LC_ALL=C $locktop -d 0.5 --no-kernel-locks --spin-hz 0 2>$tmpdir/err; echo \$? >$tmpdir/rc; sleep 60"
wait_for "header" '^locktop [0-9:]+ +every 0.5s'
shell=$(T list-panes -t lt -F '#{pane_pid}')
lt=$(pgrep -P "$shell" -x locktop) || fail "no locktop under the pane's shell"
[ -n "$(our_progs)" ] || fail "no probes while the screen runs"

# The terminal hangs up.
T kill-server
for _ in $(seq 50); do
	kill -0 "$lt" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$lt" 2>/dev/null; then
	cpu=$(ps -o pcpu= -p "$lt")
	kill -KILL "$lt"
	fail "locktop still runs 5 s after its terminal hung up (${cpu}% CPU)"
fi
gone
echo "ok: locktop ended with its terminal, no probe left"
echo PASS
