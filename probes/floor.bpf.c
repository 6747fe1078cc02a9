// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor for bench/overhead.sh: an empty program on every event the
 * probes attach to, attached the same way (syscall tracepoints, BTF
 * tracepoints, and servers' USDT probes, each hit a trap into the
 * kernel). What tracing these points costs before any work: the
 * slow path every system call takes once a syscall tracepoint is on,
 * and the dispatch of each program. The spin kind's sampling is its own
 * floor (attach-floor --sample-hz, bench/spin-cost.sh). With with_clock set, each program
 * reads the kernel clock once: the least a tracer that times anything
 * pays on every event.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>

const volatile bool with_clock = false;
__u64 never = 0; /* keeps the clock read from being optimised away */

/* One empty program; every kind of program here can take a void *ctx. */
#define EMPTY(sec, fn)                                     \
	SEC(sec)                                           \
	int fn(void *ctx)                                  \
	{                                                  \
		if (with_clock && bpf_ktime_get_ns() == 0) \
			never++;                           \
		return 0;                                  \
	}

#define SYSCALL(name)                                               \
	EMPTY("tracepoint/syscalls/sys_enter_" #name, floor_##name) \
	EMPTY("tracepoint/syscalls/sys_exit_" #name, floor_##name##_x)

SYSCALL(futex)
SYSCALL(futex_wait)
SYSCALL(futex_waitv)
SYSCALL(pread64)
SYSCALL(preadv)
SYSCALL(preadv2)
SYSCALL(pwrite64)
SYSCALL(pwritev)
SYSCALL(pwritev2)
EMPTY("tracepoint/syscalls/sys_enter_futex_wake", floor_futex_wake)
EMPTY("tracepoint/syscalls/sys_enter_sched_yield", floor_yield)
EMPTY("tp_btf/contention_begin", floor_kbegin)
EMPTY("tp_btf/contention_end", floor_kend)
EMPTY("tp_btf/posix_lock_inode", floor_posix_lock)
EMPTY("tp_btf/flock_lock_inode", floor_flock_lock)
EMPTY("tp_btf/signal_deliver", floor_signal)
EMPTY("tp_btf/sched_process_fork", floor_fork)
EMPTY("tp_btf/sched_process_exit", floor_exit)
/* Not attached by the skeleton: attach-floor --sample-hz puts it on a
 * sampling event per CPU, */
EMPTY("perf_event", floor_sample)
/* and attach-floor puts this one on the servers' probes locktop uses,
 * in the binaries of the servers running when it starts. */
EMPTY("usdt", floor_usdt)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
