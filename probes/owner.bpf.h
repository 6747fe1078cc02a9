/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether a futex word names its owner, for the futex probe: a word's
 * TID part is read as its owner's only where that thread can hold the
 * word, and the names of threads named as holders.
 */
#ifndef LOCKTOP_PROBES_OWNER_BPF_H
#define LOCKTOP_PROBES_OWNER_BPF_H

#include "processes.bpf.h"

#define FUTEX_WAITERS 0x80000000U
#define FUTEX_OWNER_DIED 0x40000000U
#define FUTEX_TID_MASK 0x3fffffffU
#define PID_MAX_LIMIT (4 * 1024 * 1024)
#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

/*
 * Processes found to map a shared object, by (kernel tgid, dev, ino): a
 * shared word's owner is looked for among its mappings once. The task's
 * start time tells a recycled tgid.
 */
struct mapper_key {
	__u64 dev;
	__u64 ino;
	__u32 tgid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_TRACED);
	__type(key, struct mapper_key);
	__type(value, __u64);
} mappers SEC(".maps");

/*
 * The names of threads named as holders (a word's owner, a waker), by
 * TID: a thread may end before the read that shows it. The collector
 * forgets an ended thread's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, __u32);
	__type(value, char[LT_COMM_LEN]);
} thread_comms SEC(".maps");

/* Keeps the name of thread t, numbered tid, unless one is kept. */
static __always_inline void name_thread(__u32 tid, struct task_struct *t)
{
	char comm[LT_COMM_LEN];

	if (bpf_map_lookup_elem(&thread_comms, &tid))
		return;
	bpf_probe_read_kernel(comm, sizeof(comm), t->comm);
	bpf_map_update_elem(&thread_comms, &tid, comm, BPF_NOEXIST);
}

/*
 * Words found to name their owner, by the owner's TID: a robust mutex
 * is waited on again and again behind the same few holders, and a
 * verdict kept spares the task lookup, its reference and the mapping
 * check. An entry holds for one word's scope: the waiting process for
 * a private word (tgid), the object for a shared one (dev, ino). It
 * goes when its thread ends (owner_thread_ended()), before the TID can
 * be another thread's, and when its process execs another program.
 * check guards against two CPUs writing one entry at once: a torn entry
 * does not add up.
 */
#define LT_OWNERS_SEEN 4096 /* a power of two */

struct owner_seen {
	__u32 tid; /* 0: none */
	__u32 tgid; /* the waiting process, for a private word; else 0 */
	__u64 dev; /* the object, for a shared word; else 0 */
	__u64 ino;
	__u64 check;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_OWNERS_SEEN);
	__type(key, __u32);
	__type(value, struct owner_seen);
} owners_seen SEC(".maps");

static __always_inline __u64 seen_check(__u32 tid, __u32 tgid, __u64 dev,
					__u64 ino)
{
	return ((__u64)tid << 32 | tgid) ^ (dev * 0x9e3779b97f4a7c15ULL) ^ ino ^
	       0x6c6f636b746f70ULL;
}

static __always_inline struct owner_seen *owner_seen_at(__u32 tid)
{
	__u32 k = tid & (LT_OWNERS_SEEN - 1);

	return bpf_map_lookup_elem(&owners_seen, &k);
}

/* Whether a word naming tid, in scope (tgid, dev, ino), was found to
 * name its owner, and its thread has not ended since. */
static __always_inline bool owner_known(__u32 tid, __u32 tgid, __u64 dev,
					__u64 ino)
{
	struct owner_seen *e = owner_seen_at(tid);

	return e && e->tid == tid && e->tgid == tgid && e->dev == dev &&
	       e->ino == ino && e->check == seen_check(tid, tgid, dev, ino);
}

/* Keeps a verdict; undone when the thread t is already ending, whose
 * end may have forgotten it first. */
static __always_inline void owner_keep(__u32 tid, __u32 tgid, __u64 dev,
				       __u64 ino, struct task_struct *t)
{
	struct owner_seen *e = owner_seen_at(tid);

	if (!e)
		return;
	e->tid = tid;
	e->tgid = tgid;
	e->dev = dev;
	e->ino = ino;
	e->check = seen_check(tid, tgid, dev, ino);
	if (t->flags & PF_EXITING)
		e->tid = 0;
}

/*
 * A thread ends: a verdict on its TID goes, by the number a word names
 * it with (its own namespace's) and by the kernel's.
 */
static __always_inline void owner_thread_ended(struct task_struct *task)
{
	struct pid *p = task->thread_pid;
	struct owner_seen *e;
	__u32 tid = task->pid;

	e = owner_seen_at(tid);
	if (e && e->tid == tid)
		e->tid = 0;
	if (!p || !p->level)
		return; /* the kernel's number is its own namespace's */
	tid = BPF_CORE_READ(p, numbers[p->level].nr);
	e = owner_seen_at(tid);
	if (e && e->tid == tid)
		e->tid = 0;
}

extern struct task_struct *bpf_task_from_vpid(s32 vpid) __ksym __weak;
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it,
				 struct task_struct *task,
				 __u64 addr) __weak __ksym;
extern struct vm_area_struct *
bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __weak __ksym;
extern void
bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __weak __ksym;

/* Whether task maps the file or shmem object (dev, ino); see mappers. */
static __always_inline bool maps_object(struct task_struct *task, __u64 dev,
					__u64 ino)
{
	struct mapper_key mk = { .dev = dev, .ino = ino, .tgid = task->tgid };
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	__u64 born = task->group_leader->start_time, *known;
	bool found = false;

	known = bpf_map_lookup_elem(&mappers, &mk);
	if (known && *known == born)
		return true;
	bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct file *f = vma->vm_file;

		if (f && f->f_inode->i_ino == ino &&
		    f->f_inode->i_sb->s_dev == dev) {
			found = true;
			break;
		}
	}
	bpf_iter_task_vma_destroy(&it);
	if (found)
		bpf_map_update_elem(&mappers, &mk, &born, BPF_ANY);
	return found;
}

/*
 * Whether a word's TID part names its owner: only where the word is one
 * that holds its owner (glibc's robust and PI mutexes) is its low part a
 * TID, and then of a user thread that can reach the word: of the
 * waiter's own process for a private word, of a process that maps the
 * object for a shared one. A flag bit and a count (InnoDB's lock words)
 * name no thread, or one that cannot hold the lock: init, a kernel
 * thread, another program. tid is in the waiter's PID namespace.
 */
static __always_inline bool word_names_owner(__u32 val,
					     const struct lt_lock_key *key)
{
	struct task_struct *me = bpf_get_current_task_btf(), *t;
	__u32 tid = val & FUTEX_TID_MASK, tgid = 0;
	__u64 dev = 0, ino = 0;
	bool ok;

	/* No TID is above PID_MAX_LIMIT: all ones is a counter or -1. */
	if (!(val & FUTEX_WAITERS) || !tid || tid > PID_MAX_LIMIT)
		return false;
	if (key->shared) {
		dev = key->dev_or_tgid;
		ino = key->ino;
	} else {
		tgid = me->tgid;
	}
	if (owner_known(tid, tgid, dev, ino))
		return true;
	t = bpf_task_from_vpid(tid);
	if (!t)
		return false;
	ok = t->mm && !(t->flags & PF_KTHREAD);
	if (ok && t->tgid != me->tgid)
		ok = key->shared && maps_object(t, key->dev_or_tgid, key->ino);
	if (ok) {
		name_thread(tid, t);
		owner_keep(tid, tgid, dev, ino, t);
	}
	bpf_task_release(t);
	return ok;
}

#endif /* LOCKTOP_PROBES_OWNER_BPF_H */
