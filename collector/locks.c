// SPDX-License-Identifier: LGPL-2.1-or-later
/* Locks: their rows, and their figures from the reader. */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"
#include "reader.skel.h"

ssize_t locks_add(struct lt_collector *c, const struct lt_lock_key *key)
{
	struct lt_lock *l;
	struct lock_state *s;
	size_t i = c->locktab.n_locks;

	if (lt_grow((void **)&c->locktab.locks, &c->locktab.cap_locks, i + 1,
		    sizeof(*c->locktab.locks)) ||
	    lt_grow((void **)&c->locktab.lstate, &c->locktab.cap_lstate, i + 1,
		    sizeof(*c->locktab.lstate)))
		return -ENOMEM;
	l = &c->locktab.locks[i];
	s = &c->locktab.lstate[i];
	memset(l, 0, sizeof(*l));
	memset(s, 0, sizeof(*s));
	s->key = *key;
	s->top_stack = -1;
	s->shown_stack = -1;
	s->slot = -1;
	s->moved_at = lt_mono_ns();
	if (lt_index_add(&c->locktab.lock_ix, i, c->locktab.lstate) ||
	    push_index(&c->locktab.fresh, &c->locktab.n_fresh,
		       &c->locktab.cap_fresh, i))
		return -ENOMEM;
	c->locktab.n_locks++;
	l->id = ++c->locktab.next_id;
	l->procs = 1;
	l->kind = key->kind < LT_KIND_NR ? (enum lt_kind)key->kind :
					   LT_KIND_FUTEX;
	if (key->kind == LT_PK_KERNEL) {
		l->address = key->start;
	} else if (key->kind <= LT_PK_FUTEX_PI ||
		   key->kind == LT_PK_FUTEX_COND || key->kind == LT_PK_SPIN) {
		l->address = key->start;
		if (key->shared) {
			l->dev = key->dev_or_tgid;
			l->ino = key->ino;
		}
	} else {
		l->dev = key->dev_or_tgid;
		l->ino = key->ino;
		l->end = key->end;
	}
	l->start = key->start;
	return (ssize_t)i;
}

/*
 * The change of a wrapping histogram (32-bit in the kernel: diffed
 * modulo 2^32), written into out. Only the slots that moved now, or
 * moved last time and are cleared now (the bits of *moved), are written:
 * a lock that waits once an interval touches one slot of its rows, not
 * all of them, which keeps cold memory cold. Only the slots `used` names
 * are read: they are all the reader wrote.
 */
static void hist_delta32(uint64_t *out, uint64_t *total, const __u32 *now,
			 __u32 *before, uint64_t used, uint64_t *moved)
{
	uint64_t m = 0, stale;
	size_t b;
	__u32 d;

	for (; used; used &= used - 1) {
		b = (size_t)__builtin_ctzll(used);
		if (b >= LT_HIST_SLOTS)
			break;
		d = now[b] - before[b];
		if (!d)
			continue;
		out[b] = d;
		total[b] += d;
		before[b] = now[b];
		m |= 1ULL << b;
	}
	for (stale = *moved & ~m; stale; stale &= stale - 1)
		out[__builtin_ctzll(stale)] = 0;
	*moved = m;
}

#define DELTA(field)                                            \
	do {                                                    \
		l->delta.field = diff(sum.field, s->raw.field); \
		l->total.field += l->delta.field;               \
	} while (0)

/* The holds not timed this interval, at the sampled holds' mean. */
static void add_estimated_holds(struct lt_lock *l,
				const struct lt_lock_stat *now,
				const struct lt_lock_stat *before)
{
	uint64_t skipped = diff(now->hold_skipped, before->hold_skipped);
	uint64_t ns;

	if (!skipped)
		return;
	ns = lt_hold_estimate(skipped,
			      diff(now->hold_samples, before->hold_samples),
			      diff(now->hold_sample_ns, before->hold_sample_ns),
			      now->hold_samples, now->hold_sample_ns);
	l->delta.hold_ns += ns;
	l->total.hold_ns += ns;
	l->delta.holds_estimated = skipped;
	l->total.holds_estimated += skipped;
}

/* Only locks that changed come. */
int locks_merge(struct lt_collector *c, const void *rec)
{
	const struct lt_lock_rec *r = rec;
	const struct lt_lock_stat *v = &r->sum;
	struct lt_lock_stat sum;
	struct lock_state *s;
	struct lt_lock *l;
	ssize_t i;

	/* The row the slot led to last time, if the slot still holds that
	 * lock: slots are handed to other locks once forgotten. */
	i = r->slot < LT_MAX_LOCKS ? c->slots.slot_row[r->slot] : -1;
	if (i < 0 ||
	    memcmp(&c->locktab.lstate[i].key, &r->key, sizeof(r->key))) {
		i = lt_index_find(&c->locktab.lock_ix, &r->key,
				  c->locktab.lstate);
		if (i < 0)
			i = locks_add(c, &r->key);
		if (i < 0)
			return (int)i;
		if (r->slot < LT_MAX_LOCKS)
			c->slots.slot_row[r->slot] = i;
	}
	l = &c->locktab.locks[i];
	s = &c->locktab.lstate[i];
	if (s->dead_at) {
		/* Its PID came back and used the same address. */
		s->dead_at = 0;
		c->retire.n_dead--;
	}
	s->slot = r->slot < LT_MAX_LOCKS ? (__s32)r->slot : -1;
	s->moved_at = c->reading.read_ns;
	/* Histograms that did not move keep a zero delta. */
	if (v->waits != s->raw.waits || s->wait_moved)
		hist_delta32(l->delta.wait_hist, l->total.wait_hist, v->hist,
			     s->raw.hist, v->hist_used, &s->wait_moved);
	if (v->hold_ns != s->raw.hold_ns || s->hold_moved)
		hist_delta32(l->delta.hold_hist, l->total.hold_hist,
			     v->hold_hist, s->raw.hold_hist, v->hold_used,
			     &s->hold_moved);
	/* The counters; the histograms are already up to date in raw. */
	memcpy(&sum, v, offsetof(struct lt_lock_stat, hist));
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) DELTA(NAME);
#include "figures.def"
	add_estimated_holds(l, &sum, &s->raw);
	l->delta.max_wait_ns = l->delta.waits ? v->max_ns : 0;
	if (sum.max_total_ns > l->total.max_wait_ns)
		l->total.max_wait_ns = sum.max_total_ns;
	if (l->delta.max_wait_ns > l->total.max_wait_ns)
		l->total.max_wait_ns = l->delta.max_wait_ns;
	/* A per-interval hold maximum needs an epoch too; the total one is
	 * exact and bounds it. */
	l->delta.max_hold_ns = l->delta.hold_ns ? sum.max_hold_ns : 0;
	l->total.max_hold_ns = sum.max_hold_ns;
	if (sum.last_holder)
		s->raw.last_holder = sum.last_holder;
	sum.last_holder = s->raw.last_holder;
	memcpy(&s->raw, &sum, offsetof(struct lt_lock_stat, hist));
	c->snap.kind_delta[l->kind].waits += l->delta.waits;
	c->snap.kind_delta[l->kind].wait_ns += l->delta.wait_ns;
	c->snap.kind_total[l->kind].waits += l->delta.waits;
	c->snap.kind_total[l->kind].wait_ns += l->delta.wait_ns;
	if (s->live != c->reading.reads) {
		s->live = c->reading.reads;
		return push_index(&c->locktab.live, &c->locktab.n_live,
				  &c->locktab.cap_live, (size_t)i);
	}
	return 0;
}

/* Locks touched since the last read's epoch, which this read's maxima
 * also start from. */
int locks_read(struct lt_collector *c)
{
	c->obj.reader->bss->since = c->obj.futex->bss->epoch - 1;
	c->obj.reader->bss->max_epoch = c->obj.futex->bss->epoch - 1;
	return mapio_run_reader(c, c->obj.reader->progs.lt_read_locks,
				c->obj.lock_out, sizeof(*c->obj.lock_out),
				&c->obj.reader->bss->n_locks, locks_merge);
}
