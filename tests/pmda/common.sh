# Shared by the pmdalocktop tests. Source it after ../lib.sh:
#
#   . lib.sh; . pmda/common.sh; pmda_setup PMDALOCKTOP PMDA_SRC_DIR
#
# The agent is installed the PCP way (its Install script, into pmcd.conf
# and the PMNS) from a copy of the build tree's files in the test's own
# directory, .../pmdas/locktop as pmdaproc.sh requires. Whatever
# happens, the EXIT trap removes it and, when an agent was installed
# before the test, installs that one again.

pmda_bin=
pmda_src=
agent_dir=
installed=0
prev_dir=
bg_pids=

# PCP's environment ($PCP_* and its tools on PATH) is not -u clean.
load_pcp_env() {
	[ -r /etc/pcp.env ] || skip "PCP is not installed (./run installs it)"
	set +u
	. /etc/pcp.env
	set -u
	# pmrep and friends are Python: the system's, which has PCP's module.
	PATH=/usr/bin:/bin:$PATH:$PCP_BINADM_DIR
}

pmda_setup() {
	pmda_bin=$(realpath "$1")
	pmda_src=$(realpath "$2")
	require_bpf
	load_pcp_env
	[ -x "$pmda_bin" ] || fail "no agent at $pmda_bin"
	pminfo -f pmcd.version >/dev/null 2>&1 ||
		skip "pmcd is not running (/etc/init.d/pmcd start)"

	# Another build's suite may be installing the agent into the same
	# pmcd: one test at a time.
	exec 9>"${PCP_TMP_DIR:-/tmp}/locktop-pmda-test.lock"
	flock -w 150 9 || skip "another pmdalocktop test holds the lock"

	# An agent installed before the test is put back afterwards.
	prev_dir=$(awk '$1 == "locktop" {
			for (i = 2; i <= NF; i++) if ($i ~ /\/pmdalocktop$/) print $i
		}' "$PCP_PMCDCONF_PATH" 2>/dev/null | sed -n '1s,/pmdalocktop$,,p')
	if [ -n "$prev_dir" ] && [ ! -x "$prev_dir/Install" ]; then
		echo "note: pmcd.conf names a locktop agent in $prev_dir," \
			"which is gone; it will not be restored" >&2
		prev_dir=
	fi
	agent_dir=$tmpdir/pmdas/locktop
	trap pmda_cleanup EXIT

}

pmda_cleanup() {
	local rc=$? p
	set +e
	for p in $bg_pids; do
		kill "$p" 2>/dev/null
		pkill -P "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ "$installed" = 1 ]; then
		remove_agent >/dev/null 2>&1
	fi
	if [ -n "$prev_dir" ]; then
		(cd "$prev_dir" && ./Install) >/dev/null 2>&1 ||
			echo "warning: could not reinstall the agent in" \
				"$prev_dir" >&2
	fi
	rm -rf "$tmpdir"
	exit "$rc"
}

# Runs "$@" in the background until the test ends.
background() {
	"$@" &
	bg_pids="$bg_pids $!"
}

# lockbench, over and over, on one table file that it keeps (so its
# locks keep their identity, rows and instances from one run to the
# next), at idle priority so that pmcd and the agent stay quick.
lockbench_loop() {
	local lb=$1
	shift
	while :; do
		chrt --idle 0 "$lb" --keep "$@" >/dev/null 2>&1 || sleep 0.2
	done
}

install_agent() {
	mkdir -p "$agent_dir"
	cp "$pmda_src"/Install "$pmda_src"/Remove "$pmda_src"/domain.h \
		"$pmda_src"/help "$pmda_src"/pmns "$pmda_src"/root "$agent_dir"/
	# A new file, not a rewrite: a running agent keeps its own text.
	install -m 755 "$pmda_bin" "$agent_dir/pmdalocktop"
	installed=1
	if ! (cd "$agent_dir" && PMDA_LOCKTOP_ARGS="$*" ./Install) \
		>"$tmpdir/install.log" 2>&1; then
		cat "$tmpdir/install.log" >&2
		fail "Install failed"
	fi
}

remove_agent() {
	(cd "$agent_dir" && ./Remove) >"$tmpdir/remove.log" 2>&1
	local rc=$?
	installed=0
	return $rc
}

agent_pid() {
	pgrep -f "^$agent_dir/pmdalocktop" | head -n1
}

# IDs of the BPF programs a process holds.
prog_ids_of() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_id:/ { print $2 }' "$f" 2>/dev/null
	done | sort -u
}

# Waits up to $2 seconds until none of the program IDs in $1 is loaded.
wait_progs_gone() {
	local ids=$1 secs=$2 i id left
	for i in $(seq $((secs * 4))); do
		left=
		for id in $ids; do
			/usr/sbin/bpftool prog show id "$id" >/dev/null 2>&1 &&
				left="$left $id"
		done
		[ -z "$left" ] && return 0
		sleep 0.25
	done
	echo "still loaded:$left" >&2
	return 1
}

# Waits up to $1 seconds for locktop.status to read "ok".
wait_ready() {
	local i
	for i in $(seq $(($1 * 4))); do
		pminfo -f locktop.status 2>/dev/null | grep -q 'value "ok"' &&
			return 0
		sleep 0.25
	done
	pminfo -f locktop.status >&2 || true
	return 1
}

# The value of a singular metric, e.g. metric_value locktop.locks
metric_value() {
	pmprobe -v "$1" 2>/dev/null | awk '$2 == 1 { print $3 }'
}

# Progress, with the seconds since the test started.
step() {
	echo "[$SECONDS s] $*"
}

# Sanitizer reports in the agent's logs: memory errors and undefined
# behaviour in the agent's own code fail the test; others are shown.
check_agent_log() {
	grep -hE 'AddressSanitizer|LeakSanitizer|runtime error' \
		"$PCP_LOG_DIR"/pmcd/locktop.log* >"$tmpdir/san" 2>/dev/null || true
	if [ -s "$tmpdir/san" ]; then
		echo "sanitizer reports in the agent's log:"
		sort -u "$tmpdir/san"
		if grep -qE 'pmda/|AddressSanitizer|LeakSanitizer' "$tmpdir/san"; then
			fail "sanitizer reports from the agent"
		fi
	fi
	return 0
}

# A process that runs (a zombie pmcd has not reaped yet does not).
alive() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	case $st in Z*) return 1 ;; esac
	return 0
}

# Crashes of the agent the kernel has logged so far.
segfaults() {
	dmesg 2>/dev/null | grep -c 'pmdalocktop.*segfault' || true
}
