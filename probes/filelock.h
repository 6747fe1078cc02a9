/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by filelock.bpf.c and the collector. */
#ifndef LOCKTOP_PROBES_FILELOCK_H
#define LOCKTOP_PROBES_FILELOCK_H

#include "common.h"

#define LT_MAX_HELD 16384 /* file locks held at once */

/* A granted lock, until its owner releases it. */
struct lt_held_key {
	__u64 owner; /* fl_owner_t: files_struct, or struct file */
	__u64 dev;
	__u64 ino;
	__u64 start;
	__u64 end;
};

struct lt_held {
	struct lt_lock_key lock;
	__u64 ts;
	__u32 tid;
	__u32 tgid;
};

#endif /* LOCKTOP_PROBES_FILELOCK_H */
