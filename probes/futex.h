/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by futex.bpf.c and the collector. */
#ifndef LOCKTOP_PROBES_FUTEX_H
#define LOCKTOP_PROBES_FUTEX_H

#include "common.h"

/* Where a lock's address was mapped, found once, on its first wait. */
enum lt_vma_flags {
	LT_VMA_FILE = 1 << 0, /* backed by a file (or a shmem object) */
	LT_VMA_SHARED = 1 << 1, /* MAP_SHARED */
	LT_VMA_HEAP = 1 << 2,
	LT_VMA_STACK = 1 << 3,
};

#define LT_MAX_SITES 8192 /* call sites of futex waits judged */

/*
 * (tgid, address) -> lock identity, the futex object's ident map: only a
 * lock's first wait looks it up. The collector places a shared word the
 * probe could not (its process's maps were changing) by writing here.
 */
struct lt_ident_key {
	__u64 uaddr;
	__u32 tgid;
	__u32 pad;
};

/*
 * A call site of futex waits in one process: the user IP the wait
 * syscall came from, or a return address one frame up from it.
 */
struct lt_site_key {
	__u32 tgid;
	__u32 pad;
	__u64 ip;
};

/* What the collector made of a site, from the function it lies in. */
enum lt_site_verdict {
	LT_SITE_NEW = 0, /* not judged yet */
	LT_SITE_VALUE = 1, /* no function of a known kind: a lock's wait */
	LT_SITE_LOCK = 2, /* a lock's wait: mutex, rwlock */
	LT_SITE_EVENT = 3, /* an event wait: condvar, semaphore, join */
	LT_SITE_CALLER = 4, /* a shared helper: judge its caller instead */
};

struct lt_site {
	__u32 verdict; /* enum lt_site_verdict */
	__s32 ra_off; /* LT_SITE_CALLER: the return address is at sp+ra_off */
};

#endif /* LOCKTOP_PROBES_FUTEX_H */
