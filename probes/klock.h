/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by klock.bpf.c, filelock.bpf.c and the collector. */
#ifndef LOCKTOP_PROBES_KLOCK_H
#define LOCKTOP_PROBES_KLOCK_H

#include "common.h"

/* The contention tracepoints' flags (include/trace/events/lock.h). */
#define LT_LCB_F_SPIN (1U << 0)
#define LT_LCB_F_READ (1U << 1)
#define LT_LCB_F_WRITE (1U << 2)
#define LT_LCB_F_RT (1U << 3)
#define LT_LCB_F_PERCPU (1U << 4)
#define LT_LCB_F_MUTEX (1U << 5)

#define LT_KFRAMES 12 /* kernel frames kept with a lock's first wait */
#define LT_KDIRS 6 /* an i_rwsem's dentry and parents whose names are kept */
#define LT_KDIR_LEN 32
#define LT_MAX_KWHERES 16384

/* What the probe found a kernel lock to be, by its address. */
enum lt_kname {
	LT_KN_NONE = 0, /* a static lock's symbol, else its caller */
	LT_KN_I_RWSEM, /* an inode's i_rwsem: dev, ino, file, fd */
	LT_KN_MMAP_LOCK, /* a process's mmap_lock: tgid, comm */
};

/*
 * Naming facts for a kernel lock, written by the probe with the lock's
 * first counted wait: its type, what it guards where the probe can tell,
 * and the kernel stack that waited.
 */
struct lt_kwhere {
	__u64 frames[LT_KFRAMES]; /* kernel return addresses, innermost first */
	__u64 dev; /* i_rwsem: the inode's */
	__u64 ino;
	__u32 flags; /* LT_LCB_F_* of the first wait */
	__u32 named; /* enum lt_kname */
	__u32 tgid; /* the waiter: mmap_lock's process */
	__u32 nframes;
	__s32 fd; /* i_rwsem: the waiter's descriptor of the file, or -1 */
	__u32 pad;
	char file[LT_WHERE_NAME_LEN]; /* i_rwsem: base name of the file */
	char comm[LT_COMM_LEN]; /* mmap_lock: its process's name */
	/* i_rwsem: the names of the inode's dentry and its parents,
	 * innermost first, ndirs of them; rooted when the last is a child
	 * of its filesystem's root, so that they make its path there. */
	__u32 ndirs;
	__u32 rooted;
	char dirs[LT_KDIRS][LT_KDIR_LEN];
};

/*
 * A file whose lock context the file lock probe met: the address of
 * its flc_lock names that spinlock. Keyed by that address.
 */
struct lt_flc_name {
	__u64 dev;
	__u64 ino;
	__u32 tgid; /* a process that locked it */
	__s32 fd; /* its descriptor there */
	char file[LT_WHERE_NAME_LEN]; /* base name */
};

#endif /* LOCKTOP_PROBES_KLOCK_H */
