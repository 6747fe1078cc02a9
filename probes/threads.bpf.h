/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Each thread's state, struct lt_thread (common.h), in task storage
 * (threads): its wait in flight, the file locks it holds, its pread call
 * in progress, and caches of its locks with their slots.
 */
#ifndef LOCKTOP_PROBES_THREADS_BPF_H
#define LOCKTOP_PROBES_THREADS_BPF_H

#include "maps.bpf.h"
#include "probe_counts.bpf.h"

/* task's state; created when create is set. */
static __always_inline struct lt_thread *task_thread(struct task_struct *task,
						     bool create)
{
	return bpf_task_storage_get(&threads, task, NULL,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE :
					     0);
}

/* The current thread's state; created when create is set. */
static __always_inline struct lt_thread *this_thread(bool create)
{
	return task_thread(bpf_get_current_task_btf(), create);
}

/* The current thread's state, made if new, for an event that starts
 * something (a wait, an I/O); NULL, counted as a drop, when there is no
 * room for it. */
static __always_inline struct lt_thread *starting_thread(void)
{
	struct lt_thread *th = this_thread(true);

	if (!th)
		count_drop(LT_DROP_START_FULL);
	return th;
}

#endif /* LOCKTOP_PROBES_THREADS_BPF_H */
