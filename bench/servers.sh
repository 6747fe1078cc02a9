#!/usr/bin/env bash
# What tracing costs real servers under their own load, side by side:
# Samba's smbd under smbtorture's smb2.bench.path-contention-shared with
# its tdb chain locks as robust mutexes (smb-mutex) and as fcntl locks
# (smb-fcntl), PostgreSQL under pgbench (pg), MariaDB under sysbench's
# oltp_update_index (mariadb) and OpenLDAP's slapd under ldapmodify
# writers and ldapsearch readers (slapd). Each server runs privately, as
# the tests start it (tests/smblib.sh, pglib.sh, mylib.sh, ldaplib.sh),
# all of them at once, idle but for the load of the moment.
#
# The tracers (bench/lib.sh has the ones but pcp):
#   locktop   locktop -b -d 1, its defaults
#   lt-user   the same with --no-kernel-locks --spin-hz 0: user locks only
#   lt-noio   locktop's defaults with --no-io: pread and pwrite untraced;
#             not in the default list
#   pcp       pmdalocktop installed into the running pmcd by its Install
#             script, with its defaults, as a user runs it
#             (tests/pmda/common.sh); left out where pmcd does not run
#   bt-waits  bpftrace summing futex and fcntl wait time per lock
#   bt-same   bpftrace keeping what locktop's defaults keep per event
#             (bench/locktop-same.bt): waits, histograms and holders per
#             lock, wakes, fcntl holds, pread and pwrite by file, kernel
#             lock waits; not in the default list
#   floor     an empty program on every event locktop attaches to
#   clock     the same programs each reading the kernel clock once
#   none      no tracer: untraced again, against untraced. Its ratio is
#             1 but for the machine's own noise, which its interval shows
#   before    with --before BUILD: that build's locktop, its defaults, so
#             that a change is judged against what it replaced
#
# A round runs every server's load under each tracer, in an order
# shuffled per round, and untraced first, after every second tracer and
# last; each tracer attaches once a round and stays for every server's
# load. Two figures per load: throughput (operations per second as the
# load tool counts them) and the server's CPU time per operation (user
# and system of its whole process tree, reaped children included, over
# the load: the probes' time in the server's threads is in it, other
# load on the machine is not). Each traced figure is divided by the mean
# of the untraced ones on either side of it in the round, as the share
# the server keeps (1 is free; for CPU, untraced over traced).
# A virtual machine's host has fast phases, seconds to minutes long, in
# which every server's CPU per operation falls by 20-35% at once: a load
# whose CPU per operation is over --fast percent under the upper quartile
# of its server's untraced loads ran in one, and is left out of the ratios,
# traced or not (a tracer only adds to it); the table counts them.
# A server runs more rounds until, for every tracer, the 95% confidence
# interval of the mean of either ratio is within --ci percent, or the
# round cap, or the time budget is reached.
#
# Then, under locktop's defaults and with the kernel's BPF statistics on
# (kernel.bpf_stats_enabled: two clock reads more per program run), one
# more load per server: each program's runs per second and ns per run,
# the probes' ns per operation, and locktop's own CPU.
#
# Needs root; exits 77 (skip) where a server or tool is missing.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$bench")

usage() {
	cat <<EOF
Usage: bench/servers.sh [OPTION]... [BUILD_DIR]
Throughput and CPU per operation of real servers, untraced and under
each tracer, in alternated rounds until the 95% confidence interval of
each ratio is narrow enough.

  --servers LIST     comma-separated, from smb-mutex,smb-fcntl,pg,mariadb,slapd
                     (default: all)
  --tracers LIST     comma-separated, from locktop,lt-user,lt-noio,pcp,bt-waits,
                     bt-same,floor,clock,none,before (none: untraced again,
                     the noise's control; before: see --before; bt-same:
                     bpftrace doing locktop's per-event work)
                     (default: all; pcp only where pmcd runs)
  --rounds-max N     stop a server after N rounds (default 20)
  --rounds-min N     at least N rounds (default 3)
  --seconds S        each load's length (default 3)
  --ci PCT           stop a server once every ratio's interval is +-PCT%
                     (default 2)
  --fast PCT         leave out loads whose CPU per operation is over PCT%
                     under the untraced ones' upper quartile: the host ran
                     fast
                     (default 12; 0 keeps every load)
  --budget MIN       start no round that would end after MIN minutes
                     (default 18)
  --before BUILD     add the tracer before: BUILD's locktop, its defaults
  --no-stats         skip the BPF statistics phase
  --stats-rounds N   with --before, the statistics phase also runs N rounds
                     of one load per server under this build and under
                     BUILD, alternated, and prints each program's ns per
                     run under both and the median of the rounds' ratios
                     (default 5)
  --perf             in that phase, also sample every CPU with perf and
                     print the share of the samples in BPF programs, the
                     kernel and locktop, and the top symbols
  --verbose          print each load's figures as it ends, on stderr
  --quick            2 rounds of 2 s, to check the script works
  --help             this text

Wrap it in flock /tmp/locktop-bpf.lock where others load BPF programs.
EOF
}

build=build
servers="smb-mutex smb-fcntl pg mariadb slapd"
tracers="locktop lt-user pcp bt-waits floor clock none"
rounds_max=20 rounds_min=3 secs=3 ci_goal=2 budget=18 stats=1 perf=0 verbose=0
stats_rounds=5
fast=12 before=
while [ $# -gt 0 ]; do
	case $1 in
	--servers) servers=${2//,/ }; shift ;;
	--tracers) tracers=${2//,/ }; shift ;;
	--rounds-max) rounds_max=$2; shift ;;
	--rounds-min) rounds_min=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--ci) ci_goal=$2; shift ;;
	--fast) fast=$2; shift ;;
	--budget) budget=$2; shift ;;
	--before) before=$2; shift ;;
	--no-stats) stats=0 ;;
	--stats-rounds) stats_rounds=$2; shift ;;
	--perf) perf=1 ;;
	--verbose) verbose=1 ;;
	--quick) rounds_max=2 rounds_min=2 secs=2 ;;
	--help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done
[ "$rounds_min" -le "$rounds_max" ] || rounds_min=$rounds_max
[[ "$stats_rounds" =~ ^[1-9][0-9]*$ ]] || {
	echo "servers.sh: --stats-rounds takes a whole number of rounds from 1, not '$stats_rounds'" >&2
	exit 2
}
[[ "$fast" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v p="$fast" 'BEGIN { exit !(p < 100) }' || {
	echo "servers.sh: --fast takes a percent from 0 to under 100, not '$fast'" >&2
	exit 2
}

. "$top/tests/lib.sh"
. "$top/tests/srvlib.sh" # srv_tree: every server's process tree
here=$bench
. "$bench/lib.sh"
locktop=$(realpath "$build/tui/locktop")
floor=$(realpath "$build/bench/attach-floor")
require_bpf
[ -x "$locktop" ] && [ -x "$floor" ] || skip "no locktop in $build"
if [ -n "$before" ]; then
	[ -x "$before/tui/locktop" ] || {
		echo "servers.sh: no locktop in --before $before" >&2
		exit 2
	}
	before_locktop=$(realpath "$before/tui/locktop")
	[[ " $tracers " == *" before "* ]] || tracers="$tracers before"
fi
for s in $servers; do
	case $s in
	smb-mutex | smb-fcntl) . "$top/tests/smblib.sh"; smb_require ;;
	pg) . "$top/tests/pglib.sh"; pg_require ;;
	mariadb) . "$top/tests/mylib.sh"; my_require ;;
	slapd) . "$top/tests/ldaplib.sh"; ldap_require ;;
	*) fail "no server $s" ;;
	esac
done
for t in $tracers; do
	case $t in
	locktop | lt-user | lt-noio | floor | clock | pcp | none) ;;
	before) [ -n "$before" ] || fail "the tracer before needs --before BUILD" ;;
	bt-waits | bt-same) command -v bpftrace >/dev/null || skip "no bpftrace" ;;
	*) fail "no tracer $t" ;;
	esac
done
started=$SECONDS
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
tracer= agent=

# Every server of one kind runs its own directory; two Samba modes are
# two servers, so each gets its own smblib state, saved here.
declare -A smb_pid_of smb_port_of smb_conf_of smb_dir_of

# Whatever ends the script: the tracer or agent, every server, the
# statistics switch, the temporary directory (pglib and pmda/common.sh
# each set an EXIT trap of their own: this one replaces them).
bench_end() {
	local rc=$? m
	set +e
	[ -z "$tracer" ] || stop_tracer
	for m in "${!smb_dir_of[@]}"; do
		smb_use "$m"
		smb_stop
	done
	[ -z "${my_dir:-}" ] || my_stop
	[ -z "${ldap_dir:-}" ] || ldap_stop
	[ -z "${pg_dir:-}" ] || pg_stop
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	end_jobs
	# The agent's Remove, and its rm of $tmpdir and exit.
	if [ -n "${pmda_bin:-}" ]; then
		(exit "$rc")
		pmda_cleanup
	fi
	rm -rf "$tmpdir"
	exit "$rc"
}
own_trap() { trap bench_end EXIT; }
own_trap
trap 'exit 130' INT
trap 'exit 143' TERM

# smb_use MODE: smblib's state is that of the MODE server.
smb_use() {
	smb_pid=${smb_pid_of[$1]} smb_port=${smb_port_of[$1]}
	smb_conf=${smb_conf_of[$1]} smb_dir=${smb_dir_of[$1]}
}

# The agent, where pmcd runs: installed for the pcp tracer's runs only.
case " $tracers " in
*" pcp "*)
	if [ -r /etc/pcp.env ] && (. "$top/tests/pmda/common.sh" &&
		load_pcp_env && pminfo -f pmcd.version) >/dev/null 2>&1; then
		. "$top/tests/pmda/common.sh"
		pmda_setup "$build/pmda/pmdalocktop" "$top/pmda"
		own_trap
	else
		echo "servers: pmcd does not run: no pcp tracer" >&2
		tracers=$(echo " $tracers " | sed 's/ pcp / /')
	fi
	;;
esac

pcp_start() {
	install_agent
	wait_ready 20 || fail "the agent did not become ready"
	agent=$(agent_pid)
	wait_progs '^lt_pwritev2_x$' || fail "the agent did not attach"
	sleep 1.2
}

pcp_stop() {
	local ids
	ids=$(prog_ids_of "$agent")
	remove_agent || fail "the agent's Remove failed"
	agent=
	wait_progs_gone "$ids" 10 || fail "the agent's programs stay loaded"
}

# Each server started, its load made ready and run once (warm-up); the
# pid of the process whose tree is the server in root_of.
declare -A root_of
ldap_count=200
for s in $servers; do
	case $s in
	smb-mutex | smb-fcntl)
		smb_dir=
		smb_start "${s#smb-}"
		smb_pid_of[${s#smb-}]=$smb_pid smb_port_of[${s#smb-}]=$smb_port
		smb_conf_of[${s#smb-}]=$smb_conf smb_dir_of[${s#smb-}]=$smb_dir
		root_of[$s]=$smb_pid
		;;
	pg)
		pg_start
		pg_bench -i -s 1 -q >"$tmpdir/pginit.log" 2>&1 ||
			fail "pgbench -i failed"
		root_of[$s]=$(pg_postmaster_pid)
		;;
	mariadb) my_start; my_sysbench prepare; root_of[$s]=$my_pid ;;
	slapd)
		ldap_start
		root_of[$s]=$ldap_pid
		# Counted, not timed: as many operations as take about
		# the load's seconds untraced.
		ldap_load 8 8 60 "$ldap_count"
		ldap_count=$(awk -v c="$ldap_count" -v t="$ldap_secs" \
			-v s="$secs" 'BEGIN { n = int(c * s / t); print n < 50 ? 50 : n }')
		;;
	esac
	own_trap
done

# CPU time of server $1's process tree so far, in microseconds: each
# process's own and its reaped children's (the comm field may hold
# spaces: the fields are counted after its closing parenthesis).
server_us() {
	local p
	for p in $(srv_tree "${root_of[$1]}" | tr , ' '); do
		cat "/proc/$p/stat" 2>/dev/null || true
	done | awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, "")
		t += $12 + $13 + $14 + $15 } END { printf "%.0f", t * 1e6 / hz }'
}

# load SERVER: one run of its load; sets load_rate (operations per
# second), load_us (the server's CPU microseconds per operation) and
# load_ops.
load() {
	local c0 c1 rate ops
	c0=$(server_us "$1")
	case $1 in
	smb-mutex | smb-fcntl)
		smb_use "${1#smb-}"
		smb_torture 32 "$secs"
		rate=$smb_rate ops=$smb_opens
		;;
	pg)
		pg_bench -c 16 -j 2 -T "$secs" >"$tmpdir/pgbench.log" 2>&1 ||
			fail "pgbench failed: $(cat "$tmpdir/pgbench.log")"
		read -r rate ops < <(awk '/^tps/ { t = $3 }
			/^number of transactions actually processed/ { n = $NF }
			END { print t, n }' "$tmpdir/pgbench.log")
		sleep 0.3 # the backends are reaped
		;;
	mariadb)
		my_sysbench run 32 "$secs"
		rate=$my_tps ops=$my_transactions
		;;
	slapd)
		ldap_load 8 8 $((secs * 10 + 30)) "$ldap_count"
		[ "$ldap_stopped" = 0 ] ||
			fail "slapd: $ldap_stopped clients hit the time limit"
		ops=$((ldap_writes + ldap_reads))
		rate=$(awk -v n="$ops" -v t="$ldap_secs" 'BEGIN { print n / t }')
		;;
	esac
	c1=$(server_us "$1")
	[ "${ops:-0}" -gt 0 ] || fail "$1: no operations"
	load_rate=$(awk -v r="$rate" 'BEGIN { printf "%.1f", r }')
	load_us=$(awk -v c=$((c1 - c0)) -v n="$ops" 'BEGIN { printf "%.2f", c / n }')
	load_ops=$ops
}

for s in $servers; do
	[ "$s" = slapd ] || load "$s"
done

# attach / detach TRACER: "untraced" is no tracer.
attach() {
	case $1 in
	untraced | none) ;;
	pcp) pcp_start ;;
	*) start_tracer "$1" ;;
	esac
}
detach() {
	case $1 in
	untraced | none) ;;
	pcp) pcp_stop ;;
	*) stop_tracer; sleep 0.3 ;;
	esac
}

# ci FILE: "MEAN HALF" of the numbers in FILE, HALF the 95% confidence
# interval's half-width in percent of the mean (Student's t).
ci() {
	awk '{ x[NR] = $1; s += $1 } END {
		n = NR
		if (!n) { print "nan inf"; exit } # every load left out
		m = s / n
		for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
		split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 " \
			"2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 " \
			"2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 " \
			"2.048 2.045 2.042", t)
		if (n < 2) { printf "%.3f inf\n", m; exit }
		q = n - 1 <= 30 ? t[n - 1] : 2.0
		printf "%.3f %.1f\n", m, q * sqrt(v / (n - 1) / n) / m * 100 }' "$1"
}

# fast_us SERVER: the CPU per operation under which a load of SERVER
# ran in a fast phase of the host: --fast percent below the upper
# quartile of its untraced loads (0: none is). The upper quartile, not
# the median: where the host ran fast more often than not, the median
# load is a fast one, and a quarter of the loads at the usual speed is
# still there to measure from.
fast_us() {
	cut -d' ' -f4 "$tmpdir/r.$1.untraced" | sort -g |
		awk -v p="$fast" '{ a[NR] = $1 } END {
			q = a[int((3 * NR + 3) / 4)]
			print (p > 0 ? q * (1 - p / 100) : 0) }'
}

# ratios SERVER TRACER FIELD: each traced figure against the untraced
# loads on either side of it in the same round, their mean: traced over
# untraced for FIELD 2 (throughput), untraced over traced for FIELD 3
# (CPU per operation). A line of r.SERVER.TRACER is "ROUND BLOCK RATE
# US/OP OPS". Loads of a fast phase (fast_us) are left out, traced and
# untraced: a tracer only adds CPU to an operation.
ratios() {
	awk -v f="$3" -v fast="$(fast_us "$1")" 'FNR == 1 { file++ }
		$4 < fast { next }
		file == 1 { u[$1, $2] = f == 2 ? $3 : $4
			if ($2 > last[$1]) last[$1] = $2
			next }
		{ n = s = 0
		  for (b = $2 - 1; b >= 0; b--)
			if (($1, b) in u) { s += u[$1, b]; n++; break }
		  for (b = $2 + 1; b <= last[$1]; b++)
			if (($1, b) in u) { s += u[$1, b]; n++; break }
		  if (!n) next
		  x = f == 2 ? $3 : $4
		  print f == 2 ? x / (s / n) : (s / n) / x }' \
		"$tmpdir/r.$1.untraced" "$tmpdir/r.$1.$2"
}

# left_out SERVER: "N of M", the loads of SERVER a fast phase left out.
left_out() {
	cat "$tmpdir"/r."$1".* | awk -v fast="$(fast_us "$1")" \
		'$4 < fast { n++ } END { printf "%d of %d", n, NR }'
}

# converged SERVER: every tracer's throughput or CPU ratio is within the
# goal.
converged() {
	local t h1 h2
	for t in $tracers; do
		read -r _ h1 < <(ratios "$1" "$t" 2 >"$tmpdir/x"; ci "$tmpdir/x")
		read -r _ h2 < <(ratios "$1" "$t" 3 >"$tmpdir/x"; ci "$tmpdir/x")
		awk -v a="$h1" -v b="$h2" -v g="$ci_goal" \
			'BEGIN { exit !(a <= g || b <= g) }' || return 1
	done
}

declare -A rounds_of
nservers=$(wc -w <<<"$servers")
active=$servers
round=0 round_secs=0
while [ -n "$active" ] && [ "$round" -lt "$rounds_max" ]; do
	# No round that would end past the budget (the statistics phase
	# takes about one load per server more).
	[ "$round" = 0 ] || [ $((SECONDS - started + round_secs +
		stats * (10 + nservers * (secs + 4)))) -le $((budget * 60)) ] ||
		break
	round=$((round + 1))
	t0=$SECONDS
	echo "round $round: $active" >&2
	# Untraced first, then the tracers in a shuffled order with an
	# untraced block after every second one and at the end: each
	# tracer's load is next to an untraced one of its server.
	order=untraced k=0
	for t in $(printf '%s\n' $tracers | shuf); do
		order="$order $t" k=$((k + 1))
		[ $((k % 2)) = 1 ] || order="$order untraced"
	done
	[ $((k % 2)) = 0 ] || order="$order untraced"
	block=0
	for t in $order; do
		attach "$t"
		for s in $active; do
			load "$s"
			printf '%d %d %s %s %s\n' "$round" "$block" "$load_rate" \
				"$load_us" "$load_ops" >>"$tmpdir/r.$s.$t"
			[ "$verbose" = 0 ] || printf '  %-9s %-10s %10s/s %8sus/op\n' \
				"$t" "$s" "$load_rate" "$load_us" >&2
		done
		detach "$t"
		block=$((block + 1))
	done
	round_secs=$((SECONDS - t0))
	left=
	for s in $active; do
		rounds_of[$s]=$round
		if [ "$round" -ge "$rounds_min" ] && converged "$s"; then
			continue
		fi
		left="$left $s"
	done
	active=${left# }
done

# The table: per server, rounds and untraced medians, then each
# tracer's mean ratios with their intervals, throughput then CPU/op.
cell() { printf ' %22s' "$1"; }
echo
echo "Share of the server's throughput and of its CPU per operation kept" \
	"under each tracer (mean of per-round ratios, +-95% CI in %);" \
	"${secs} s loads"
printf '%-10s' server
for s in $servers; do cell "$s"; done
printf '\n%-10s' rounds
for s in $servers; do cell "${rounds_of[$s]:-0}"; done
printf '\n%-10s' 'left out'
for s in $servers; do cell "$(left_out "$s")"; done
printf '\n%-10s' untraced
for s in $servers; do
	cell "$(printf '%s/s %sus/op' \
		"$(cut -d' ' -f3 "$tmpdir/r.$s.untraced" | median | awk '{ printf "%.0f", $1 }')" \
		"$(cut -d' ' -f4 "$tmpdir/r.$s.untraced" | median)")"
done
echo
printf '%-10s' ''
for s in $servers; do cell "ops/s        cpu/op"; done
echo
for t in $tracers; do
	printf '%-10s' "$t"
	for s in $servers; do
		ratios "$s" "$t" 2 >"$tmpdir/x"
		read -r m1 h1 < <(ci "$tmpdir/x")
		ratios "$s" "$t" 3 >"$tmpdir/x"
		read -r m2 h2 < <(ci "$tmpdir/x")
		cell "$(printf '%.3f+-%-4s %.3f+-%s' "$m1" "$h1" "$m2" "$h2")"
	done
	echo
done
# Rounds that the goal would take at the spread seen: for the tracer
# whose better figure (throughput or CPU per operation) spreads most,
# (2 sd / goal)^2, the normal approximation of Student's t.
need() {
	awk -v g="$ci_goal" '{ x[NR] = $1; s += $1 } END {
		n = NR
		if (n < 2) { print "-"; exit }
		m = s / n
		for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
		sd = sqrt(v / (n - 1)) / m * 100
		r = (2 * sd / g) ^ 2
		printf "%d %.1f\n", r == int(r) ? r : int(r) + 1, sd }' "$1"
}
printf '%-10s' 'for +-'"$ci_goal"'%'
for s in $servers; do
	worst=0 sdw=0
	for t in $tracers; do
		ratios "$s" "$t" 2 >"$tmpdir/x"
		read -r n1 sd1 < <(need "$tmpdir/x")
		ratios "$s" "$t" 3 >"$tmpdir/x"
		read -r n2 sd2 < <(need "$tmpdir/x")
		[ "$n1" != - ] || continue
		[ "$n2" -ge "$n1" ] || { n1=$n2 sd1=$sd2; }
		[ "$n1" -le "$worst" ] || { worst=$n1 sdw=$sd1; }
	done
	cell "$(printf '%s rounds (sd %s%%)' "$worst" "$sdw")"
done
echo
echo "($(((SECONDS - started) / 60)) min so far;" \
	"$(bpftool prog show 2>/dev/null | grep -c ' name lt_' || true)" \
	"lt_ programs of others loaded now)"

[ "$stats" = 1 ] || exit 0

# The BPF statistics phase: "NAME RUNS NS" of the programs whose names
# match $1 (locktop's lt_, the floor's floor_).
each_prog() {
	bpftool prog show -j 2>/dev/null | jq -r --arg re "$1" '.[] |
		select((.name // "") | test($re)) |
		"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' |
		awk '{ r[$1] += $2; t[$1] += $3 } END {
			for (n in r) print n, r[n], t[n] }' | sort
}
# perf_shares SERVER: of perf's samples of every CPU over the load, the
# share in locktop's BPF programs, in the rest of the kernel, in locktop
# itself and idle; then the ten busiest symbols.
perf_shares() {
	perf report -i "$tmpdir/perf.data" --no-children --sort comm,sym \
		--stdio -q 2>/dev/null | awk -v s="$1" '$1 ~ /%$/ {
		p = $1 + 0; sym = $NF
		if (sym ~ /^bpf_prog_.*_lt_/) bpf += p
		else if ($2 == "locktop") lt += p
		else if ($2 == "swapper") idle += p
		else if ($3 == "[k]") k += p
		if (n++ < 10) top = top sprintf("%-10s   %6.2f%% %s %s\n", s, p, $2, sym) }
		END { printf "%-10s perf: %.1f%% in locktop'"'"'s programs, %.1f%% " \
			"in locktop, %.1f%% other kernel, %.1f%% idle\n%s",
			s, bpf, lt, k, idle, top }'
}
tracer_cpu_us() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, "")
		printf "%.0f", ($12 + $13) * 1e6 / hz }' "/proc/$tracer/stat"
}
echo
echo "locktop's programs under each load, with the kernel's BPF statistics on"
printf '%-10s %-20s %10s %8s %9s\n' server program runs/s ns/run ns/op
# stat_load SERVER RE: one load with the statistics on; each program
# matching RE's line in $tmpdir/prog.SERVER, its sum in prog_ns_op.
stat_load() {
	sysctl -qw kernel.bpf_stats_enabled=1
	each_prog "$2" >"$tmpdir/p0"
	w0=$(date +%s.%N)
	load "$1"
	w1=$(date +%s.%N)
	each_prog "$2" >"$tmpdir/p1"
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	join "$tmpdir/p0" "$tmpdir/p1" | awk -v s="$1" -v n="$load_ops" \
		-v w="$(awk -v a="$w0" -v b="$w1" 'BEGIN { print b - a }')" \
		'$4 > $2 { r = $4 - $2; t = $5 - $3; tr += r; tt += t
		printf "%-10s %-20s %10.0f %8.0f %9.1f\n", s, $1, r / w,
			t / r, t / n }
		END { printf "%-10s %-20s %10.0f %8.0f %9.1f\n", s, "all",
			tr / w, tr ? tt / tr : 0, tt / n }' |
		sort -k1,1 -k3,3nr >"$tmpdir/prog.$1"
	prog_ns_op=$(awk '$2 == "all" { print $5 }' "$tmpdir/prog.$1")
}
declare -A lt_ns_of lt_us_of floor_ns_of floor_us_of
start_tracer locktop
for s in $servers; do
	c0=$(tracer_cpu_us)
	if [ "$perf" = 1 ]; then
		perf record -q -e cpu-clock -a -o "$tmpdir/perf.data" \
			-- sleep "$secs" >/dev/null 2>&1 &
		pf=$!
	fi
	stat_load "$s" '^lt_'
	c1=$(tracer_cpu_us)
	[ "$perf" = 0 ] || wait "$pf" || true
	cat "$tmpdir/prog.$s"
	lt_ns_of[$s]=$prog_ns_op lt_us_of[$s]=$load_us
	awk -v s="$s" -v us="$load_us" -v c=$((c1 - c0)) -v n="$load_ops" -v w0="$w0" \
		-v w1="$w1" 'BEGIN { printf "%-10s server %.1f us/op; locktop " \
		"itself %.2f us/op, %.1f%% of a core\n", s, us, c / n,
		c / 1e4 / (w1 - w0) }'
	if [ "$perf" = 1 ]; then
		perf_shares "$s"
	fi
done
stop_tracer
# The same loads under empty programs on the same events: what any
# tracer of these events pays before doing anything.
if [[ " $tracers " == *" floor "* ]]; then
	start_tracer floor
	for s in $servers; do
		stat_load "$s" '^floor_'
		floor_ns_of[$s]=$prog_ns_op floor_us_of[$s]=$load_us
	done
	stop_tracer
	echo
	echo "The programs' time per operation, as a share of the server's CPU" \
		"per operation (the statistics' own two clock reads a run included)"
	printf '%-10s %12s %14s %9s %14s %9s\n' server "server/op" \
		"locktop ns/op" share "floor ns/op" share
	for s in $servers; do
		awk -v s="$s" -v a="${lt_ns_of[$s]}" -v ua="${lt_us_of[$s]}" \
			-v b="${floor_ns_of[$s]}" -v ub="${floor_us_of[$s]}" \
			'BEGIN { printf "%-10s %10.1fus %14.0f %8.1f%% %14.0f %8.1f%%\n",
			s, ua, a, a / (ua * 10), b, b / (ub * 10) }'
	done
fi

# With --before: each program's ns a run under this build and under
# BUILD's, one load per server a round, the two in a shuffled order
# each round. A round's ratio compares loads a few seconds apart, so a
# phase of the host that moves every program's figures moves both.
[ -n "$before" ] || exit 0
# ab_table SERVER: per program, the medians of both builds' ns a run,
# the median of the rounds' ratios and their range, busiest first.
ab_table() {
	awk -v s="$1" '
	function med(v, n,    i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
				t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
			}
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	FNR == 1 { f++ }
	{ k = $1 SUBSEP $2; p[$2] = 1; r[$1] = 1
	  if (f == 1) { a[k] = $3; op[k] = $4 } else b[k] = $3 }
	END {
		for (q in p) {
			n = 0
			for (i in r) {
				k = i SUBSEP q
				if (!(k in a) || !(k in b) || !b[k]) continue
				n++; x[n] = a[k] / b[k]; ya[n] = a[k]; yb[n] = b[k]
				yo[n] = op[k]
			}
			if (!n) continue
			lo = hi = x[1]
			for (i = 2; i <= n; i++) {
				if (x[i] < lo) lo = x[i]
				if (x[i] > hi) hi = x[i]
			}
			# The sort key first: ns an operation of the program.
			printf "%s %-10s %-20s %8.0f %8.0f %7.3f %6.2f-%-6.2f %3d\n",
				q == "all" ? 1e18 : med(yo, n), s, q, med(ya, n),
				med(yb, n), med(x, n), lo, hi, n
		}
	}' "$tmpdir/ab.$1.locktop" "$tmpdir/ab.$1.before" |
		sort -k1,1gr | sed 's/^[^ ]* //'
}
for r in $(seq "$stats_rounds"); do
	echo "statistics round $r of $stats_rounds: this build and --before" >&2
	for b in $(printf '%s\n' locktop before | shuf); do
		start_tracer "$b"
		for s in $servers; do
			stat_load "$s" '^lt_'
			awk -v r="$r" '{ print r, $2, $4, $5 }' "$tmpdir/prog.$s" \
				>>"$tmpdir/ab.$s.$b"
		done
		stop_tracer
	done
done
echo
echo "ns per run with the statistics on, this build against --before" \
	"$before, $stats_rounds alternated rounds (the medians, and the" \
	"median and range of the rounds' ratios)"
printf '%-10s %-20s %8s %8s %7s %13s %3s\n' server program ns/run before \
	ratio range n
for s in $servers; do ab_table "$s"; done
