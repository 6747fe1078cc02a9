/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by futex.bpf.c and the collector. Nothing else lives here.
 * The includer provides __u32/__u64 (vmlinux.h or <linux/types.h>).
 */
#ifndef LOCKTOP_PROBES_FUTEX_H
#define LOCKTOP_PROBES_FUTEX_H

#define LT_HIST_SLOTS 40 /* log2(ns) buckets: the last one holds >= 2^39 ns */
#define LT_MAX_LOCKS 16384 /* distinct locks the kernel side can hold */
#define LT_MAX_THREADS 65536 /* threads that can wait at the same time */
#define LT_MAX_TRACED 8192 /* processes in a --pid / -- COMMAND tree */
#define LT_COMM_LEN 16

/* What a futex wait looked like when it started. */
enum lt_futex_class {
	LT_CLASS_LOCK =
		0, /* mutex-like: glibc lll value 2, or owner TID + waiters bit */
	LT_CLASS_COND =
		1, /* condition, semaphore, join and other event waits */
};

/* Why a wait could not be counted. Indexes the per-CPU `drops` array. */
enum lt_drop_reason {
	LT_DROP_LOCKS_FULL = 0, /* the per-lock map was full */
	LT_DROP_START_FULL, /* the in-flight wait map was full */
	LT_DROP_TRACED_FULL, /* a child could not join the traced set */
	LT_DROP_NR,
};

/* One lock, for now: (process, user address). */
struct lt_futex_key {
	__u64 uaddr;
	__u32 tgid;
	__u32 class;
};

/* Where a lock's address was mapped, found once, on its first wait. */
enum lt_vma_flags {
	LT_VMA_FILE = 1 << 0, /* backed by a file (or a shmem object) */
	LT_VMA_SHARED = 1 << 1, /* MAP_SHARED */
	LT_VMA_HEAP = 1 << 2,
	LT_VMA_STACK = 1 << 3,
};

#define LT_FILE_NAME_LEN 48

struct lt_futex_where {
	__u64 vm_start;
	__u64 offset; /* in the file: (addr - vm_start) + pgoff */
	__u64 ino;
	__u32 dev;
	__u32 flags; /* enum lt_vma_flags */
	char file[LT_FILE_NAME_LEN]; /* the file's base name */
};

/*
 * Per-CPU aggregate for one lock. max_ns is the largest wait seen in
 * epoch max_epoch; the collector advances the epoch once per interval,
 * which gives a true per-interval maximum without resetting anything.
 */
struct lt_futex_stat {
	__u64 waits;
	__u64 wait_ns;
	__u64 max_ns;
	__u64 max_total_ns;
	__u64 max_epoch;
	__u64 hist[LT_HIST_SLOTS];
};

#endif /* LOCKTOP_PROBES_FUTEX_H */
