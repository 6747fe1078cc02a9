// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor for bench/overhead.sh: an empty program on every event the
 * probes attach to, attached the same way (syscall tracepoints, BTF
 * tracepoints). What tracing these points costs before any work: the
 * slow path every system call takes once a syscall tracepoint is on,
 * and the dispatch of each program.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define SYSCALL(name)                               \
	SEC("tracepoint/syscalls/sys_enter_" #name) \
	int floor_##name(void *ctx)                 \
	{                                           \
		return 0;                           \
	}                                           \
	SEC("tracepoint/syscalls/sys_exit_" #name)  \
	int floor_##name##_x(void *ctx)             \
	{                                           \
		return 0;                           \
	}

SYSCALL(futex)
SYSCALL(futex_wait)
SYSCALL(futex_waitv)
SYSCALL(pread64)
SYSCALL(preadv)
SYSCALL(preadv2)
SYSCALL(pwrite64)
SYSCALL(pwritev)
SYSCALL(pwritev2)

SEC("tracepoint/syscalls/sys_enter_futex_wake")
int floor_futex_wake(void *ctx)
{
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_flock")
int floor_flock_x(void *ctx)
{
	return 0;
}

SEC("tp_btf/posix_lock_inode")
int BPF_PROG(floor_posix_lock)
{
	return 0;
}

SEC("tp_btf/flock_lock_inode")
int BPF_PROG(floor_flock_lock)
{
	return 0;
}

SEC("tp_btf/fcntl_setlk")
int BPF_PROG(floor_setlk)
{
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(floor_fork)
{
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(floor_exit)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
