// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where locktop's PID namespace lies: run once by the collector, from
 * its own thread (BPF_PROG_TEST_RUN), before the probes load, and only
 * when that namespace is not the initial one. Its depth lets the probes
 * read a task's number there with plain loads at a place fixed at load
 * (targ_pidns_level in globals.bpf.h); bpf_get_ns_current_pid_tgid()
 * added some 70 ns to every futex event on this machine.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

__u32 level = 0; /* the depth of the caller's PID namespace */
__u64 inum = 0; /* and its inode, for the collector to check */

SEC("raw_tp")
int lt_pidns(void *ctx)
{
	struct pid *p = bpf_get_current_task_btf()->thread_pid;
	struct upid up;

	level = p->level;
	if (!bpf_core_read(&up, sizeof(up), &p->numbers[level]))
		inum = BPF_CORE_READ(up.ns, ns.inum);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
