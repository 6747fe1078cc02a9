# Samba's smbd for the tests and benchmarks: a server of its own, with
# every directory it keeps state in (locks, state, private, pid, cache,
# ncalrpc) in a temporary directory, one share there, a tdbsam user root,
# listening on 127.0.0.1 only on a port of its own. Source it after
# lib.sh (or bench/lib.sh) and call smb_start; it stops the server when
# the shell exits. smb_torture is the load: smbtorture's
# smb2.bench.path-contention-shared, every connection opening and
# closing the share's root, so that all of them fight over one record of
# locking.tdb.

. "$(dirname "${BASH_SOURCE[0]}")/srvlib.sh"

smb_pass=locktop-$$

# smb_require: the server, its tools and the load.
smb_require() {
	srv_need "samba samba-testsuite smbclient" smbd smbpasswd smbtorture
}

# smb_start MODE [PORT]: a fresh server in $smb_dir, started and
# accepting connections; its share is $smb_share when set (a directory
# two runs share, so that its record in locking.tdb, keyed by the
# directory's device and inode, falls on the same chain in both), else
# one of its own. MODE is how its tdb databases lock their
# chains: mutex (process-shared robust mutexes in the tdb's mapping,
# Samba's default where it can) or fcntl (byte-range locks).
smb_start() {
	local mutexes d
	case $1 in
	mutex) mutexes=yes ;;
	fcntl) mutexes=no ;;
	*) fail "smb_start: mode $1 is neither mutex nor fcntl" ;;
	esac
	smb_require
	smb_port=${2:-$(srv_port)}
	smb_dir=$(mktemp -d /tmp/locktop-smb.XXXXXX)
	srv_on_exit smb_stop
	for d in share lock state private pid ncalrpc cache binddns log; do
		mkdir "$smb_dir/$d"
	done
	smb_conf=$smb_dir/smb.conf
	cat >"$smb_conf" <<EOF
[global]
	workgroup = LOCKTOP
	netbios name = LOCKTOP$$
	server role = standalone server
	lock directory = $smb_dir/lock
	state directory = $smb_dir/state
	private dir = $smb_dir/private
	pid directory = $smb_dir/pid
	ncalrpc dir = $smb_dir/ncalrpc
	cache directory = $smb_dir/cache
	binddns dir = $smb_dir/binddns
	smb passwd file = $smb_dir/private/smbpasswd
	passdb backend = tdbsam:$smb_dir/private/passdb.tdb
	log file = $smb_dir/log/log.%m
	log level = 0
	smb ports = $smb_port
	interfaces = 127.0.0.1
	bind interfaces only = yes
	disable netbios = yes
	load printers = no
	printing = bsd
	printcap name = /dev/null
	disable spoolss = yes
	usershare max shares = 0
	smbd:backgroundqueue = no
	dbwrap_tdb_mutexes:* = $mutexes
[share]
	path = ${smb_share:-$smb_dir/share}
	read only = no
EOF
	printf '%s\n%s\n' "$smb_pass" "$smb_pass" |
		smbpasswd -c "$smb_conf" -s -a root >"$smb_dir/smbpasswd.log" 2>&1 ||
		{ cat "$smb_dir/smbpasswd.log" >&2; fail "smbpasswd -a root failed"; }
	# In a process group of its own (no --no-process-group): stopped,
	# smbd signals its whole group, which would be the caller's too.
	smbd -s "$smb_conf" --foreground --debug-stdout \
		>"$smb_dir/smbd.log" 2>&1 &
	smb_pid=$!
	srv_wait_port "$smb_port" "$smb_pid" 30 ||
		{ cat "$smb_dir/smbd.log" >&2; fail "smbd did not start"; }
}

smb_stop() {
	[ -n "${smb_dir:-}" ] || return 0
	[ -z "${smb_pid:-}" ] || srv_kill "$smb_pid" 10
	srv_rmdir "$smb_dir"
	smb_dir= smb_pid=
}

# The parent of every smbd of the server: each connection is a process
# it forks.
smb_master_pid() {
	echo "$smb_pid"
}

# smb_torture NPROCS SECONDS [QDEPTH]: NPROCS connections, QDEPTH (4)
# opens in flight on each, for SECONDS. Its output is in
# $smb_dir/torture.log; sets smb_opens (the opens completed, as
# smbtorture's final rate times its seconds: up to SECONDS - 1 fewer
# than it made) and smb_rate (opens per second over the run). With the
# array smb_wrap set, smbtorture runs under it: smb_wrap=(locktop record
# -p PID -o X.rec --) records the server while its load runs.
smb_torture() {
	local last
	"${smb_wrap[@]}" smbtorture "//127.0.0.1/share" -p "$smb_port" -U "root%$smb_pass" \
		-s "$smb_conf" \
		--option=torture:nprocs="$1" --option=torture:qdepth="${3:-4}" \
		--option=torture:timelimit="$2" \
		smb2.bench.path-contention-shared >"$smb_dir/torture.log" 2>&1 ||
		{ tr '\r' '\n' <"$smb_dir/torture.log" >&2; fail "smbtorture failed"; }
	# Each second's figures end in a carriage return; the last line,
	# ended by a newline, is the whole run's: opens / SECONDS.
	last=$(tr '\r' '\n' <"$smb_dir/torture.log" | grep -E '^[0-9.]+ second: open\[num/s=' |
		tail -n 1)
	smb_rate=$(sed -E 's/.* open\[num\/s=([0-9]+),.*/\1/' <<<"$last")
	case $smb_rate in
	'' | *[!0-9]*) fail "no open rate in smbtorture's output: $last" ;;
	esac
	smb_opens=$((smb_rate * $2))
}
