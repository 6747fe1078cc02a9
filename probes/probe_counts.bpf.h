/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The counts the probes keep of themselves: the runs of each object's
 * programs (runs) and the events dropped, by reason (drops).
 */
#ifndef LOCKTOP_PROBES_PROBE_COUNTS_BPF_H
#define LOCKTOP_PROBES_PROBE_COUNTS_BPF_H

#include "globals.bpf.h"
#include "maps.bpf.h"

/* A reason that counts nothing: the caller tries again later. */
#define LT_DROP_NONE LT_DROP_NR

static __always_inline void count_run(void)
{
	__u32 k = targ_obj;
	__u64 *n = bpf_map_lookup_elem(&runs, &k);

	if (n)
		(*n)++;
}

static __always_inline void count_drop(__u32 reason)
{
	__u64 *n;

	if (reason >= LT_DROP_NR)
		return; /* LT_DROP_NONE */
	n = bpf_map_lookup_elem(&drops, &reason);
	if (n)
		(*n)++;
}

#endif /* LOCKTOP_PROBES_PROBE_COUNTS_BPF_H */
