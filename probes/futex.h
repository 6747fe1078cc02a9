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

#endif /* LOCKTOP_PROBES_FUTEX_H */
