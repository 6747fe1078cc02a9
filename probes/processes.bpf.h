/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Processes and threads as locktop names them: their numbers in
 * locktop's PID namespace (targ_pidns_*, globals.bpf.h), whether a
 * process is traced, and its name, kept past its end.
 */
#ifndef LOCKTOP_PROBES_PROCESSES_BPF_H
#define LOCKTOP_PROBES_PROCESSES_BPF_H

#include "globals.bpf.h"
#include "maps.bpf.h"

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/*
 * The number pid p has in locktop's namespace, or 0 when it has none
 * there (a task of an outer namespace). A pid has a number in its own
 * namespace and in each one above it, at each one's depth: plain loads
 * at a place fixed at load, no helper.
 */
static __always_inline __u32 pid_nr_here(struct pid *p)
{
	if (!p || p->level < targ_pidns_level)
		return 0;
	if (p->numbers[targ_pidns_level].ns->ns.inum != targ_pidns_ino)
		return 0; /* a sibling namespace at the same depth */
	return p->numbers[targ_pidns_level].nr;
}

/* task's tgid << 32 | pid in locktop's namespace; see pid_nr_here(). */
static __always_inline __u64 task_ids_here(struct task_struct *task)
{
	__u32 tgid = pid_nr_here(task->signal->pids[PIDTYPE_TGID]);

	if (!tgid)
		return 0;
	return (__u64)tgid << 32 | pid_nr_here(task->thread_pid);
}

/*
 * The current thread's tgid << 32 | pid as bpf_get_current_pid_tgid()
 * gives them, but in locktop's namespace when that is not the initial
 * one: the numbers the collector finds in /proc and the user gives. 0
 * for a thread of an outer namespace, which locktop cannot name.
 */
static __always_inline __u64 current_ids(void)
{
	if (!targ_pidns_ino)
		return bpf_get_current_pid_tgid();
	return task_ids_here(bpf_get_current_task_btf());
}

/*
 * A tgid the kernel gives in its own numbering (the initial
 * namespace's: a file lock's flc_pid), in locktop's; 0 when the process
 * is gone or has no number there.
 */
static __always_inline __u32 kernel_tgid_here(__s32 tgid)
{
	struct task_struct *task;
	__u64 ids;

	if (!targ_pidns_ino)
		return (__u32)tgid;
	if (tgid <= 0)
		return 0;
	task = bpf_task_from_pid(tgid);
	if (!task)
		return 0;
	ids = task_ids_here(task);
	bpf_task_release(task);
	return ids >> 32;
}

/* Whether tgid's events count: a traced process, not locktop. */
static __always_inline bool wanted(__u32 tgid)
{
	/* 0: a process of a namespace outside locktop's (current_ids()).
	 * No task that makes these calls is 0 to the kernel itself. */
	if (!tgid || tgid == targ_self)
		return false;
	return !targ_filter || bpf_map_lookup_elem(&traced, &tgid);
}

/* Keeps the current process's name as tgid's, unless one is kept. */
static __always_inline void remember_comm(__u32 tgid)
{
	char comm[LT_COMM_LEN];

	if (bpf_map_lookup_elem(&comms, &tgid))
		return;
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&comms, &tgid, comm, BPF_NOEXIST);
}

#endif /* LOCKTOP_PROBES_PROCESSES_BPF_H */
