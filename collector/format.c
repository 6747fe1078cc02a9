// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small pure helpers for every consumer of snapshots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collector.h"

static const char *const kind_names[LT_KIND_NR] = {
	[LT_KIND_FUTEX] = "futex", [LT_KIND_FUTEX_PI] = "futex-pi",
	[LT_KIND_FCNTL] = "fcntl", [LT_KIND_OFD] = "ofd",
	[LT_KIND_FLOCK] = "flock", [LT_KIND_KERNEL] = "kernel",
	[LT_KIND_SPIN] = "spin",   [LT_KIND_FUTEX_COND] = "futex-cond",
};

static const char *const drop_names[LT_DROP_REASONS] = {
	"locks_full", "start_full",  "traced_full", "parties_full",
	"held_full",  "files_full",  "stacks_full", "procs_full",
	"race",	      "slot_return",
};

const char *lt_drop_name(unsigned int reason)
{
	return reason < LT_DROP_REASONS ? drop_names[reason] : "?";
}

const char *lt_kind_name(enum lt_kind kind)
{
	if ((unsigned int)kind >= LT_KIND_NR)
		return "?";
	return kind_names[kind];
}

int lt_kind_parse(const char *name)
{
	int k;

	for (k = 0; k < LT_KIND_NR; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

bool lt_kind_is_lock(enum lt_kind kind)
{
	return kind != LT_KIND_FUTEX_COND;
}

const char *lt_format_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
	return buf;
}

uint64_t lt_hist_quantile(const uint64_t *hist, size_t buckets, double q)
{
	uint64_t total = 0, seen = 0, want;
	size_t i;

	for (i = 0; i < buckets; i++)
		total += hist[i];
	if (!total)
		return 0;
	want = (uint64_t)(q * (double)total + 0.5);
	if (want < 1)
		want = 1;
	for (i = 0; i < buckets; i++) {
		seen += hist[i];
		/* Report the bucket's upper bound: never understate a wait. */
		if (seen >= want)
			return i >= 63 ? UINT64_MAX : (2ULL << i) - 1;
	}
	return UINT64_MAX;
}

struct top_ctx {
	bool (*filter)(const struct lt_lock *l, void *arg);
	void *arg;
};

static bool default_filter(const struct lt_lock *l, void *arg)
{
	(void)arg;
	return lt_kind_is_lock(l->kind);
}

static void add_figures(struct lt_figures *to, const struct lt_figures *f)
{
	size_t b;

	to->waits += f->waits;
	to->wait_ns += f->wait_ns;
	if (f->max_wait_ns > to->max_wait_ns)
		to->max_wait_ns = f->max_wait_ns;
	to->acquires += f->acquires;
	to->contended += f->contended;
	to->trylock_failures += f->trylock_failures;
	to->hold_ns += f->hold_ns;
	to->holds_estimated += f->holds_estimated;
	if (f->max_hold_ns > to->max_hold_ns)
		to->max_hold_ns = f->max_hold_ns;
	to->io_under_lock_ns += f->io_under_lock_ns;
	to->wakes += f->wakes;
	to->timeouts += f->timeouts;
	to->interrupted += f->interrupted;
	to->value_changed += f->value_changed;
	to->owner_died += f->owner_died;
	to->deadlocks += f->deadlocks;
	for (b = 0; b < LT_HIST_BUCKETS; b++) {
		to->wait_hist[b] += f->wait_hist[b];
		to->hold_hist[b] += f->hold_hist[b];
	}
}

static bool worse(const struct lt_lock *a, const struct lt_lock *b, bool totals)
{
	const struct lt_figures *x = totals ? &a->total : &a->delta;
	const struct lt_figures *y = totals ? &b->total : &b->delta;

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns > y->wait_ns;
	if (x->waits != y->waits)
		return x->waits > y->waits;
	return a->id < b->id;
}

size_t lt_snapshot_top(const struct lt_snapshot *s, bool totals, size_t n,
		       bool (*filter)(const struct lt_lock *l, void *arg),
		       void *arg, const struct lt_lock **out,
		       struct lt_figures *other)
{
	size_t i, k = 0, j;

	if (!filter)
		filter = default_filter;
	if (other)
		memset(other, 0, sizeof(*other));
	/* Insertion into a bounded sorted list: n is small, locks many. */
	for (i = 0; i < s->n_locks; i++) {
		const struct lt_lock *l = &s->locks[i], *spill = NULL;

		if (!filter(l, arg))
			continue;
		if (k == n) {
			if (!n || !worse(l, out[n - 1], totals)) {
				spill = l;
			} else {
				spill = out[n - 1];
				k--;
			}
		}
		if (spill != l) {
			for (j = k; j > 0 && worse(l, out[j - 1], totals); j--)
				out[j] = out[j - 1];
			out[j] = l;
			k++;
		}
		if (spill && other)
			add_figures(other,
				    totals ? &spill->total : &spill->delta);
	}
	return k;
}

uint64_t lt_hold_estimate(uint64_t skipped, uint64_t samples,
			  uint64_t sample_ns, uint64_t all_samples,
			  uint64_t all_sample_ns)
{
	if (!skipped)
		return 0;
	if (samples)
		return (uint64_t)((double)sample_ns / samples * skipped + 0.5);
	if (all_samples)
		return (uint64_t)((double)all_sample_ns / all_samples *
					  skipped +
				  0.5);
	return 0;
}

uint64_t lt_wait_quantile(const struct lt_figures *f, double q)
{
	uint64_t v = lt_hist_quantile(f->wait_hist, LT_HIST_BUCKETS, q);

	return f->max_wait_ns && v > f->max_wait_ns ? f->max_wait_ns : v;
}
