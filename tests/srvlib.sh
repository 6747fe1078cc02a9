# What the private servers of the tests and benchmarks share
# (smblib.sh, ldaplib.sh, mylib.sh; pglib.sh is older and stands alone).
# Each server runs as a child of the shell that sources its file, in a
# temporary directory of its own, on 127.0.0.1 or a Unix socket there,
# with no system-wide configuration read or written; it is stopped when
# the shell exits. Sourced by those files, after lib.sh (or a bench
# script that defines skip, fail, end_jobs and tmpdir).

# srv_need PACKAGES PROGRAM...: skip unless every PROGRAM is on PATH
# (or in /usr/sbin, which a plain user's PATH may lack), saying which
# Debian PACKAGES bring them.
srv_need() {
	local pkgs=$1 p
	shift
	for p in "$@"; do
		command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] ||
			skip "$p is not installed (Debian packages: $pkgs)"
	done
}

# srv_port_free PORT: nothing listens on 127.0.0.1:PORT.
srv_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# srv_port: a free TCP port on 127.0.0.1, from 20000-44999, different
# for different shells (another test may run the same server at the
# same time).
srv_port() {
	local p _
	p=$((20000 + ($$ * 7 + RANDOM) % 25000))
	for _ in $(seq 200); do
		srv_port_free "$p" && { echo "$p"; return 0; }
		p=$((20000 + (p - 20000 + 1) % 25000))
	done
	fail "no free port on 127.0.0.1"
}

# srv_wait_port PORT PID SECONDS: until something accepts connections on
# 127.0.0.1:PORT; fails at once when PID has ended, and after SECONDS.
srv_wait_port() {
	local _
	for _ in $(seq $(($3 * 10))); do
		srv_port_free "$1" || return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# srv_on_exit COMMAND: run COMMAND when the shell exits, before what the
# EXIT trap did so far (end_jobs, the removal of $tmpdir, another
# server's stop), once however often it is asked.
srv_on_exit() {
	local cur
	cur=$(trap -p EXIT)
	case $cur in
	*"$1;"*) return 0 ;;
	esac
	if [ -n "$cur" ]; then
		eval "set -- \"\$1\" $cur"
		# trap -- 'COMMANDS' EXIT
		trap "$1; $4" EXIT
	else
		trap "$1" EXIT
	fi
}

# srv_alive PID: PID runs (a zombie has ended).
srv_alive() {
	kill -0 "$1" 2>/dev/null &&
		[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# srv_kill PID SECONDS: SIGTERM to PID; waits until it and every
# process it had forked have ended (a server's children may still write
# in its directory after it), and SIGKILLs those left after SECONDS.
srv_kill() {
	local _ p pids left
	pids=$(srv_tree "$1" | tr , ' ')
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq $(($2 * 10))); do
		left=
		for p in $pids; do
			srv_alive "$p" && left="$left $p"
		done
		[ -n "$left" ] || break
		sleep 0.1
	done
	[ -z "$left" ] || kill -KILL $left 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# srv_tree PID: PID and all its descendants, comma-separated.
srv_tree() {
	local all=$1 next=$1 p kids
	while [ -n "$next" ]; do
		kids=
		for p in $next; do
			kids="$kids $(pgrep -P "$p" | tr '\n' ' ')"
		done
		next=$(echo $kids)
		[ -z "$next" ] || all="$all $next"
	done
	echo $all | tr ' ' ,
}

# srv_rmdir DIR: removes a stopped server's directory (again a moment
# later if a process killed just now still wrote in it).
srv_rmdir() {
	rm -rf "$1" 2>/dev/null || { sleep 0.5; rm -rf "$1"; }
}
