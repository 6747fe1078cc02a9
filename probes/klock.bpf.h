/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The map the file lock probe fills and the kernel lock probe's
 * collector reads: each file lock context's flc_lock address, with the
 * file it belongs to. The filelock object owns it; the klock object
 * reuses its descriptor.
 */
#ifndef LOCKTOP_PROBES_KLOCK_BPF_H
#define LOCKTOP_PROBES_KLOCK_BPF_H

#include "klock.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_KWHERES);
	__type(key, __u64);
	__type(value, struct lt_flc_name);
} flc_names SEC(".maps");

#endif /* LOCKTOP_PROBES_KLOCK_BPF_H */
