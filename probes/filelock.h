/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by filelock.bpf.c and the collector. */
#ifndef LOCKTOP_PROBES_FILELOCK_H
#define LOCKTOP_PROBES_FILELOCK_H

#include "common.h"

#define LT_MAX_OWNERS 16384 /* (owner, file) pairs holding locks at once */
#define LT_OWNER_RANGES 8 /* ranges one owner holds on one file */

/* The locks one owner holds on one file. */
struct lt_owner_key {
	__u64 owner; /* fl_owner_t: files_struct, or struct file */
	__u64 dev;
	__u64 ino;
};

struct lt_owned {
	__u64 start;
	__u64 end;
	__u64 ts; /* when it was granted; 0: not timed (LT_HOLD_EVERY) */
	/* Untimed: the holder's run-queue wait so far at the grant, less
	 * its waits for the file's other ranges since (wait_in_holds()). */
	__u64 run_delay;
	__u32 tid; /* the thread it was granted to, as the kernel numbers it */
	__u16 kind;
	__u8 folded; /* its figures are its file's other ranges' */
	__u8 sampled; /* its hold is a sample */
	__s32 slot; /* the lock's slot in stat_map, or LT_NO_SLOT */
	__u32 gen; /* slot_gen when slot was found */
	__u32 nvcsw; /* the holder's context switches at the grant: */
	__u32 nivcsw; /* voluntary (it slept) and not (it was preempted) */
	__u64 steal; /* the CPU's time taken by its hypervisor, at the grant */
	/* --stacks: the slot of a lock a waiter was deferred on behind this
	 * range, whose release then ends that wait, or LT_NO_SLOT. */
	__s32 wslot;
	__u32 wgen; /* slot_gen when wslot was found */
};

/* One slot of the owned map: its pair's key, zero while free. */
struct lt_owner_locks {
	struct lt_owner_key key;
	__u32 n;
	__u32 pad;
	struct lt_owned r[LT_OWNER_RANGES];
};

#endif /* LOCKTOP_PROBES_FILELOCK_H */
