# Shared by the bench/ scripts: sourced, not run.

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# The tracers start_tracer knows, in the order the tables show them;
# bpftrace's only where it is installed. TRACERS="locktop clock", say,
# picks some.
all_tracers() {
	if [ -n "${TRACERS:-}" ]; then
		echo "$TRACERS"
		return
	fi
	if command -v bpftrace >/dev/null; then
		echo "locktop lt-user bt-waits bt-figs floor clock"
	else
		echo "locktop lt-user floor clock"
	fi
}

. "$(dirname "${BASH_SOURCE[0]}")/../tests/attach.sh"

# Stops the background tracer whose pid is in $tracer, and the one in
# $tracer_floor if there is one: SIGINT, again every 2 s (a tracer still
# setting up may lose one), SIGKILL after 10 s.
stop_tracer() {
	local i p
	for p in $tracer ${tracer_floor:-}; do
		for i in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			[ $((i % 10)) = 1 ] && kill -INT "$p" 2>/dev/null
			sleep 0.2
		done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	tracer= tracer_floor=
}

# A tracer started in the background, ready when its probes are in:
# locktop, lt-user, lt-noio, lt-kfloor, bt-waits, bt-figs, bt-same, bt-io,
# floor or clock (see overhead.sh). Uses $locktop, $floor and $here; sets $tracer (and
# $tracer_floor for lt-kfloor).
start_tracer() {
	tracer_floor=
	case $1 in
	locktop) "$locktop" -b -d 1 -o /dev/null & ;;
	# Another build's locktop (before_locktop), its defaults: a change
	# judged against what it replaced, in the same rounds.
	before) "$before_locktop" -b -d 1 -o /dev/null & ;;
	lt-noio) "$locktop" -b -d 1 -o /dev/null --no-io & ;;
	lt-user) "$locktop" -b -d 1 -o /dev/null --no-kernel-locks \
		--spin-hz 0 & ;;
	lt-kfloor)
		# lt-user beside the kernel lock events' empty programs: the
		# floor of locktop's kernel lock probe.
		"$floor" --kernel-locks >/dev/null &
		tracer_floor=$!
		"$locktop" -b -d 1 -o /dev/null --no-kernel-locks \
			--spin-hz 0 & ;;
	bt-waits) bpftrace "$here/futex-fcntl-wait.bt" >/dev/null 2>&1 & ;;
	bt-figs) bpftrace "$here/fcntl-lock-figures.bt" >/dev/null 2>&1 & ;;
	bt-same) bpftrace "$here/locktop-same.bt" >/dev/null 2>&1 & ;;
	bt-io) bpftrace "$here/pread-figures.bt" >/dev/null 2>&1 & ;;
	floor) "$floor" >/dev/null & ;;
	clock) "$floor" --clock >/dev/null & ;;
	esac
	tracer=$!
	case $1 in
	locktop | lt-user | lt-kfloor | before) re='^lt_pwritev2_x$' ;; # its last object, attached last
	lt-noio) re='^lt_futex2_wake$' ;; # its last syscall tracepoint; the rest attach in the 1.2 s below
	bt-io) re='^sys_exit_pwrite' ;;
	bt-*) re='^(sys_enter_futex|posix_lock_inod)' ;;
	*) re='^floor_exit$' ;;
	esac
	wait_progs "$re" || { echo "overhead: $1 did not attach" >&2; exit 1; }
	[ "$1" != lt-kfloor ] || wait_progs '^floor_kend$' ||
		{ echo "overhead: $1's floor did not attach" >&2; exit 1; }
	# Steady state: locktop's first sampling window of the kernel's
	# BPF statistics (at most a second) is over.
	sleep 1.2
}

# Stops the tracer in $tracer and every background job, and removes
# $tmp, however the script ends (a signal too), so that none of its
# programs stays loaded.
end_with_cleanup() {
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
bench_cleanup() {
	[ -z "${tracer:-}" ] || stop_tracer
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}

# One path's microbenchmark, side by side: ROUNDS rounds in which each
# kind in KINDS runs untraced, then under each tracer of $tracers with
# an untraced run after each, the kinds' order turned every other round
# so that machine noise hits all alike. RUN KIND prints one figure (ns
# per call, say); they go to $tmp/KIND.base and $tmp/KIND.TRACER.
#   micro_rounds ROUNDS "KINDS" RUN
micro_rounds() {
	local rounds=$1 all=$2 run=$3 r k t kinds
	for k in $all; do
		: >"$tmp/$k.base"
		for t in $tracers; do : >"$tmp/$k.$t"; done
	done
	for r in $(seq "$rounds"); do
		echo "round $r/$rounds" >&2
		kinds=$all
		[ $((r % 2)) = 0 ] && kinds=$(tr ' ' '\n' <<<"$all" | tac | xargs)
		for k in $kinds; do "$run" "$k" >>"$tmp/$k.base"; done
		for t in $tracers; do
			start_tracer "$t"
			for k in $kinds; do "$run" "$k" >>"$tmp/$k.$t"; done
			stop_tracer
			sleep 0.5
			for k in $kinds; do "$run" "$k" >>"$tmp/$k.base"; done
		done
	done
}

# The medians of micro_rounds' figures, a row per kind under a header
# whose first column is COLUMN, and below each the figure each tracer
# adds to untraced, also left in $tmp/KIND.TRACER.added.
#   micro_table "KINDS" COLUMN
micro_table() {
	local k t b m
	printf '%-9s %9s' "$2" untraced
	for t in $tracers; do printf ' %9s' "$t"; done
	echo
	for k in $1; do
		b=$(median <"$tmp/$k.base")
		printf '%-9s %9.1f' "$k" "$b"
		for t in $tracers; do
			m=$(median <"$tmp/$k.$t")
			printf ' %9.1f' "$m"
			awk -v m="$m" -v b="$b" 'BEGIN { printf "%.1f\n", m - b }' \
				>"$tmp/$k.$t.added"
		done
		echo
		printf '%-9s %9s' "  added" -
		for t in $tracers; do printf ' %+9.1f' "$(cat "$tmp/$k.$t.added")"; done
		echo
	done
}
