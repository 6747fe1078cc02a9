/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The globals of every probe object, which the collector writes into
 * each object's own copy (the maps, by contrast, are one set for all;
 * see maps.bpf.h): the settings fixed before the probes load
 * (SET_TARGETS in collector/attach.c), and the epoch and slot generation
 * it advances as it runs.
 */
#ifndef LOCKTOP_PROBES_GLOBALS_BPF_H
#define LOCKTOP_PROBES_GLOBALS_BPF_H

#include "common.h"

const volatile bool targ_filter = false; /* only the `traced` set */
const volatile __u32 targ_self = 0; /* our own tgid, never traced */
const volatile bool targ_stacks = false; /* record stacks of waits */
const volatile bool targ_hold_exact = false; /* time every file lock hold */
const volatile __u32 targ_obj = 0; /* enum lt_probe_obj: which this is */

/*
 * locktop's PID namespace (the inode of /proc/self/ns/pid) and its depth
 * (1 for a child of the initial one), set only when it is not the
 * initial one: the probes then name processes and threads as that
 * namespace does, as its /proc and its user do. Left 0, every branch on
 * them goes at load.
 */
const volatile __u64 targ_pidns_ino = 0;
const volatile __u32 targ_pidns_level = 0;

/* Advanced by the collector once per interval; see struct lt_lock_stat. */
__u64 epoch = 0;

/*
 * Advanced by the collector when it chooses the slots of long-idle locks
 * to take back (a full map would refuse new locks), and again when it
 * takes their names away: a slot kept in a thread's cache, in a wait in
 * flight or beside a held range since an earlier value is looked up
 * again by its lock's key, so none is used after it went back and was
 * handed to another lock.
 */
__u32 slot_gen = 0;

#endif /* LOCKTOP_PROBES_GLOBALS_BPF_H */
