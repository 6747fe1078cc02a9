# Three PCP hosts on this machine, for the fleet tests. Source it after
# ../lib.sh.
#
# Their ports (24431 and up, redis-server's 26391 and up) are below the
# kernel's range of ports for outgoing connections (32768-60999 by
# default), so that no client's connection can hold one when a daemon
# binds it.
#
# A host is a pmcd of its own: its port on 127.0.0.1, its own Unix
# socket, run directory, log and pmcd.conf, in a UTS namespace of its
# own whose hostname is the host's name (so pmcd's hostname label, which
# pmlogger and pmseries key a host's series by, is distinct), serving
# pmcd's own agent and a pmdalocktop of its own. Each agent traces only
# its host's workload, through locktop.control.pids. Nothing outside the
# test's directory changes; the EXIT trap stops every daemon it started.
# The daemons run under names of their own (lt-pmcd, lt-pmproxy), so
# that PCP's service scripts, which signal every process named pmcd or
# pmproxy, leave them alone.

fleet_pids=
PCP_BIN=/usr/lib/pcp/bin

load_pcp_env() {
	[ -r /etc/pcp.env ] || skip "PCP is not installed (./run installs it)"
	set +u
	. /etc/pcp.env
	set -u
	PATH=/usr/bin:/bin:$PATH:$PCP_BINADM_DIR
	PCP_BIN=$PCP_BINADM_DIR
}

fleet_cleanup() {
	local rc=$? p
	set +e
	for p in $fleet_pids; do
		kill "$p" 2>/dev/null
	done
	sleep 0.5
	for p in $fleet_pids; do
		kill -KILL "$p" 2>/dev/null
	done
	end_jobs
	rm -rf "$tmpdir"
	exit "$rc"
}

# The agent's files, as Install would put them: binary, help, PMNS.
fleet_setup() {
	local agent=$1 src=$2
	load_pcp_env
	mkdir -p "$tmpdir/bin" "$tmpdir/agent"
	ln -s "$PCP_BIN/pmcd" "$tmpdir/bin/lt-pmcd"
	ln -s "$PCP_BIN/pmproxy" "$tmpdir/bin/lt-pmproxy"
	install -m 755 "$agent" "$tmpdir/agent/pmdalocktop"
	cp "$src/root" "$src/pmns" "$src/domain.h" "$tmpdir/agent/"
	"$PCP_BIN/pmnsmerge" "$PCP_VAR_DIR/pmns/root_pmcd" "$tmpdir/agent/root" \
		"$tmpdir/pmns" >/dev/null || fail "pmnsmerge"
	sed 's/LOCKTOP\./486./' "$src/help" |
		"$PCP_BIN/newhelp" -n "$tmpdir/pmns" -v 2 -o "$tmpdir/agent/help" ||
		fail "newhelp"
	trap fleet_cleanup EXIT
}

# host_start NAME PORT: a pmcd on 127.0.0.1:PORT named NAME.
host_start() {
	local name=$1 port=$2 d=$tmpdir/$1 i
	mkdir -p "$d/run"
	cat >"$d/pmcd.conf" <<-EOF
	pmcd	2	dso	pmcd_init	$PCP_PMDAS_DIR/pmcd/pmda_pmcd.so
	locktop	486	pipe	binary notready		$tmpdir/agent/pmdalocktop -d 486 -l $d/locktop.log
	EOF
	unshare --uts sh -c 'hostname "$1"; shift; exec "$@"' sh "$name" \
		env PCP_RUN_DIR="$d/run" "$tmpdir/bin/lt-pmcd" -f -A \
		-i 127.0.0.1 -p "$port" -s "$d/run/pmcd.socket" \
		-c "$d/pmcd.conf" -n "$tmpdir/pmns" -l "$d/pmcd.log" \
		-x "$d/pmcd.err" -H "$name" >"$d/out" 2>&1 &
	echo $! >"$d/pid"
	fleet_pids="$fleet_pids $!"
	for i in $(seq 240); do
		pminfo -h "127.0.0.1:$port" -f locktop.status 2>/dev/null |
			grep -q 'value "ok"' && return 0
		sleep 0.25
	done
	cat "$d/pmcd.log" "$d/locktop.log" >&2 2>/dev/null
	fail "host $name did not come up"
}

host_stop() {
	kill "$(cat "$tmpdir/$1/pid")"
}

# host_trace NAME PORT PID: the host's agent traces PID and its children.
host_trace() {
	local i
	pmstore -h "unix:$tmpdir/$1/run/pmcd.socket" locktop.control.pids \
		"$3" >/dev/null || fail "pmstore on $1"
	for i in $(seq 240); do
		pminfo -h "127.0.0.1:$2" -f locktop.control.pids 2>/dev/null |
			grep -q "value \"$3\"" &&
			pminfo -h "127.0.0.1:$2" -f locktop.status 2>/dev/null |
			grep -q 'value "ok"' && return 0
		sleep 0.25
	done
	fail "host $1 does not trace $3"
}

# The sum of locktop.lock.wait.time (or $3) over a host's instances
# whose name holds $2.
host_sum() {
	pminfo -h "127.0.0.1:$1" -f "${3:-locktop.lock.wait.time}" |
		awk -v pat="$2" 'index($0, pat) && /value/ { s += $NF }
			END { printf "%.0f\n", s }'
}

# series_start RPORT PPORT DISCOVER: a private redis-server on RPORT and
# pmproxy on PPORT keeping its series there. DISCOVER true: pmproxy loads
# what the archives under $tmpdir/archives hold as pmlogger writes them;
# false: only what pmseries --load gives it.
series_start() {
	local rport=$1 pport=$2 discover=$3
	mkdir -p "$tmpdir/redis" "$tmpdir/archives" "$tmpdir/proxy" "$tmpdir/bin"
	[ -e "$tmpdir/bin/lt-pmproxy" ] ||
		ln -s "$PCP_BIN/pmproxy" "$tmpdir/bin/lt-pmproxy"
	redis-server --port "$rport" --bind 127.0.0.1 --dir "$tmpdir/redis" \
		--save '' --appendonly no >"$tmpdir/redis/log" 2>&1 &
	fleet_pids="$fleet_pids $!"
	cat >"$tmpdir/pmproxy.conf" <<-EOF
	[pmproxy]
	pcp.enabled = true
	http.enabled = true
	redis.enabled = true
	secure.enabled = false
	[redis]
	enabled = true
	servers = 127.0.0.1:$rport
	[discover]
	enabled = $discover
	[pmseries]
	enabled = true
	[pmsearch]
	enabled = false
	EOF
	PCP_ARCHIVE_DIR=$tmpdir/archives PCP_RUN_DIR=$tmpdir/proxy \
		"$tmpdir/bin/lt-pmproxy" -f -A -i 127.0.0.1 -p "$pport" \
		-s "$tmpdir/proxy/pmproxy.socket" -c "$tmpdir/pmproxy.conf" \
		-l "$tmpdir/proxy/pmproxy.log" >/dev/null 2>&1 &
	fleet_pids="$fleet_pids $!"
}
