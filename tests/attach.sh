# Sourced by tests/lib.sh, bench/lib.sh and scripts that run in a
# namespace of their own: knowing when a tracer started in the background
# is in.

# wait_progs REGEX: waits (30 s at most) until a BPF program whose name
# matches the extended regex REGEX is attached (bpftool perf lists its
# tracepoint or probe). Loaded is not enough: locktop loads every object
# before it attaches any, which takes seconds; its last is lt_pwritev2_x.
wait_progs() {
	local _ ids
	for _ in $(seq 300); do
		ids=$(/usr/sbin/bpftool prog show -j 2>/dev/null | jq -c --arg n "$1" \
			'[.[] | select((.name // "") | test($n)) | .id]')
		/usr/sbin/bpftool perf list -j 2>/dev/null | jq -e --argjson ids "$ids" \
			'any(.[]; .prog_id as $p | $ids | index($p))' \
			>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_attaching FILE: waits (30 s at most) until the bpftrace writing
# its output to FILE says it is attaching its probes.
wait_attaching() {
	local _
	for _ in $(seq 300); do
		grep -q Attaching "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
