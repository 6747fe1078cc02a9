// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which locks every consumer shows, in which order, and how figures add. */
#include <string.h>
#include "collector.h"

const struct lt_figures *lt_lock_figures(const struct lt_lock *l, bool totals)
{
	return totals ? &l->total : &l->delta;
}

/* ---- which locks are shown ---- */

bool lt_figures_active(const struct lt_figures *f)
{
	/* The counts and times; a maximum or a histogram bucket moves
	 * only with them. */
	bool any = false;

#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) any = any || f->NAME;
#define LT_DERIVED(NAME, JSON, PCP, RECORD) any = any || f->NAME;
#include "figures.def"
	return any;
}

bool lt_lock_worth_showing(const struct lt_lock *l, bool totals)
{
	return lt_figures_active(lt_lock_figures(l, totals)) || l->waiters_now;
}

bool lt_lock_waited(const struct lt_lock *l, bool totals)
{
	const struct lt_figures *f = lt_lock_figures(l, totals);

	return f->waits || f->wait_ns || f->samples || f->yields ||
	       l->waiters_now || l->spinning_now;
}

bool lt_kind_in_view(enum lt_kind kind, bool all_kinds)
{
	return all_kinds || lt_kind_is_lock(kind);
}

bool lt_lock_shown(const struct lt_lock *l, const struct lt_view *v)
{
	/* A lock site stands for its members, or they for it. */
	if (v->members ? l->n_members > 0 : l->site != 0)
		return false;
	if (v->waited_only && !lt_lock_waited(l, v->totals))
		return false;
	return lt_kind_in_view(l->kind, v->all_kinds) &&
	       lt_lock_worth_showing(l, v->totals);
}

/* ---- the snapshot's rows ---- */

size_t lt_snapshot_rows(const struct lt_snapshot *s)
{
	return s->n_locks + s->n_sites;
}

const struct lt_lock *lt_snapshot_row(const struct lt_snapshot *s, size_t i)
{
	return i < s->n_locks ? &s->locks[i] : &s->sites[i - s->n_locks];
}

const struct lt_lock *lt_snapshot_find(const struct lt_snapshot *s, uint64_t id)
{
	size_t i, n = lt_snapshot_rows(s);

	for (i = 0; i < n; i++)
		if (lt_snapshot_row(s, i)->id == id)
			return lt_snapshot_row(s, i);
	return NULL;
}

/* ---- their order ---- */

int lt_lock_order(const struct lt_lock *a, const struct lt_lock *b, bool totals)
{
	const struct lt_figures *x = lt_lock_figures(a, totals);
	const struct lt_figures *y = lt_lock_figures(b, totals);

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns > y->wait_ns ? -1 : 1;
	if (x->waits != y->waits)
		return x->waits > y->waits ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

struct shown_ctx {
	const struct lt_view *v;
	size_t n; /* how many passed */
};

static bool shown_filter(const struct lt_lock *l, void *arg)
{
	struct shown_ctx *sc = arg;

	if (!lt_lock_shown(l, sc->v))
		return false;
	sc->n++;
	return true;
}

size_t lt_snapshot_shown(const struct lt_snapshot *s, const struct lt_view *v,
			 size_t n, const struct lt_lock **out,
			 struct lt_figures *other)
{
	struct shown_ctx sc = { .v = v };

	lt_snapshot_top(s, v->totals, n, shown_filter, &sc, out, other);
	return sc.n;
}

size_t lt_snapshot_top(const struct lt_snapshot *s, bool totals, size_t n,
		       bool (*filter)(const struct lt_lock *l, void *arg),
		       void *arg, const struct lt_lock **out,
		       struct lt_figures *other)
{
	struct lt_view locks_only = { .totals = totals };
	struct shown_ctx dflt = { .v = &locks_only };
	size_t i, k = 0, j;

	if (!filter) {
		filter = shown_filter;
		arg = &dflt;
	}
	if (other)
		memset(other, 0, sizeof(*other));
	/* Insertion into a bounded sorted list: n is small, locks many. */
	for (i = 0; i < lt_snapshot_rows(s); i++) {
		const struct lt_lock *l = lt_snapshot_row(s, i), *spill = NULL;

		if (!filter(l, arg))
			continue;
		if (k == n) {
			if (!n || lt_lock_order(l, out[n - 1], totals) >= 0) {
				spill = l;
			} else {
				spill = out[n - 1];
				k--;
			}
		}
		if (spill != l) {
			for (j = k;
			     j > 0 && lt_lock_order(l, out[j - 1], totals) < 0;
			     j--)
				out[j] = out[j - 1];
			out[j] = l;
			k++;
		}
		if (spill && other)
			lt_figures_add(other, lt_lock_figures(spill, totals));
	}
	return k;
}

/* ---- how figures add up ---- */

void lt_figures_add(struct lt_figures *to, const struct lt_figures *f)
{
	size_t b;

#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) to->NAME += f->NAME;
#define LT_DERIVED(NAME, JSON, PCP, RECORD) to->NAME += f->NAME;
#define LT_MAXIMUM(NAME, JSON, RECORD) \
	to->NAME = f->NAME > to->NAME ? f->NAME : to->NAME;
#include "figures.def"
	for (b = 0; b < LT_HIST_BUCKETS; b++) {
		to->wait_hist[b] += f->wait_hist[b];
		to->hold_hist[b] += f->hold_hist[b];
	}
}

void lt_kind_figures_add(struct lt_kind_figures *to, const struct lt_figures *f)
{
	to->waits += f->waits;
	to->wait_ns += f->wait_ns;
}

void lt_snapshot_kinds(const struct lt_snapshot *s, bool totals,
		       struct lt_kind_figures out[LT_KIND_NR])
{
	const struct lt_kind_figures *kf = totals ? s->kind_total :
						    s->kind_delta;
	bool any = false;
	size_t i;
	int k;

	for (k = 0; k < LT_KIND_NR; k++) {
		out[k] = kf[k];
		any = any || kf[k].waits || kf[k].wait_ns;
	}
	if (any)
		return;
	for (i = 0; i < s->n_locks; i++) {
		const struct lt_lock *l = &s->locks[i];

		if ((unsigned int)l->kind < LT_KIND_NR)
			lt_kind_figures_add(&out[l->kind],
					    lt_lock_figures(l, totals));
	}
}

/* ---- quantiles and estimates ---- */

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

uint64_t lt_wait_quantile(const struct lt_figures *f, double q)
{
	uint64_t v = lt_hist_quantile(f->wait_hist, LT_HIST_BUCKETS, q);

	return f->max_wait_ns && v > f->max_wait_ns ? f->max_wait_ns : v;
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
