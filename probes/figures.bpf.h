/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A wait or a hold added to a lock's figures (struct lt_lock_stat, from
 * figures.def): the count, the time, the log2 histogram and the maxima.
 */
#ifndef LOCKTOP_PROBES_FIGURES_BPF_H
#define LOCKTOP_PROBES_FIGURES_BPF_H

#include "globals.bpf.h"

/* v's bucket of a log2 histogram, the last for all beyond it. */
static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 r = 0;

	/* Unrolled binary search: the verifier likes bounded shifts. */
	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r < LT_HIST_SLOTS ? r : LT_HIST_SLOTS - 1;
}

static __always_inline void add_wait(struct lt_lock_stat *st, __u64 delta)
{
	__u32 b = log2_slot(delta);

	st->waits++;
	st->wait_ns += delta;
	st->hist[b]++;
	st->hist_used |= 1ULL << b;
	if (st->max_epoch != epoch) {
		st->max_epoch = epoch;
		st->max_ns = delta;
	} else if (delta > st->max_ns) {
		st->max_ns = delta;
	}
	if (delta > st->max_total_ns)
		st->max_total_ns = delta;
}

/* A hold timed, standing for weight holds in the histogram (a sample
 * stands for LT_HOLD_EVERY). */
static __always_inline void add_hold(struct lt_lock_stat *st, __u64 delta,
				     __u32 weight)
{
	__u32 b = log2_slot(delta);

	st->hold_ns += delta;
	st->hold_hist[b] += weight;
	st->hold_used |= 1ULL << b;
	if (delta > st->max_hold_ns)
		st->max_hold_ns = delta;
}

#endif /* LOCKTOP_PROBES_FIGURES_BPF_H */
