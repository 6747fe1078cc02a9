// SPDX-License-Identifier: LGPL-2.1-or-later
/* Lock sites: the private copies of one lock in many processes, one row. */
#include <stdlib.h>
#include <string.h>
#include "state.h"

/*
 * A private lock is (process, address) in the probes and in the
 * collector's rows: waiters now, holders and deadlocks are per process.
 * Its name and key say where it is in the program (a symbol, an image
 * and offset, [heap]+0xOFF), so the copies of one lock in many
 * processes of one program share them. Those with the same kind and
 * key, and for a lock in anonymous memory ([heap], [stack], an address)
 * the same process name, are one lock site; a site of two members or
 * more gets a row of its own that adds them up (docs/design.md, "One
 * row per lock site"). Membership is found anew at every read, in a
 * table that lives for the read only: a renamed lock moves.
 *
 * A shared lock joins a site only where private locks have its key: a
 * shared file mapping's word the probe could not place at its first
 * waits (its process's maps changing) is counted per process until the
 * collector places it (names.c, place_word()), and those copies, named
 * in the file, are the one lock's with it. A shared lock alone is a
 * group of one, never a site.
 */

/* A read's table of groups, at most half full. */
struct group_slot {
	uint64_t hash;
	size_t lock; /* a member's row, plus 1; 0: empty */
};

static bool may_join(const struct lt_collector *c, size_t i)
{
	const struct lock_state *s = &c->locktab.lstate[i];
	enum lt_kind k = c->locktab.locks[i].kind;

	return s->named && c->locktab.locks[i].key[0] &&
	       (k == LT_KIND_FUTEX || k == LT_KIND_FUTEX_PI ||
		k == LT_KIND_FUTEX_COND || k == LT_KIND_SPIN);
}

/* Anonymous memory: its offset means something in one program only. */
static bool anonymous(const struct lt_lock *l)
{
	return l->name[0] == '[' || !strncmp(l->name, "0x", 2);
}

static uint64_t fnv(uint64_t h, const char *p)
{
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

static uint64_t group_hash(const struct lt_lock *l)
{
	uint64_t h = fnv(1469598103934665603ULL, l->key);

	h = (h ^ (uint64_t)l->kind) * 1099511628211ULL;
	if (anonymous(l))
		h = fnv(h ^ 0xff, l->comm);
	return h ? h : 1;
}

/* Whether two locks are copies of one lock site. */
static bool same_group(const struct lt_lock *a, const struct lt_lock *b)
{
	return a->kind == b->kind && !strcmp(a->key, b->key) &&
	       (!anonymous(a) || !strcmp(a->comm, b->comm));
}

/* The slot of lock i's group: its own, or an empty one to take. */
static struct group_slot *group_slot(struct lt_collector *c,
				     struct group_slot *t, size_t mask,
				     uint64_t h, size_t i)
{
	size_t at = (size_t)h & mask;

	for (;; at = (at + 1) & mask) {
		if (!t[at].lock)
			return &t[at];
		if (t[at].hash == h &&
		    same_group(&c->locktab.locks[t[at].lock - 1],
			       &c->locktab.locks[i]))
			return &t[at];
	}
}

/* A new site row, named as its first member a; its number plus 1. */
static size_t new_site(struct lt_collector *c, uint64_t h, size_t a)
{
	size_t n = c->locksites.n_site_rows;
	struct lt_lock *r;

	if (lt_grow((void **)&c->locksites.site_rows,
		    &c->locksites.cap_site_rows, n + 1,
		    sizeof(*c->locksites.site_rows)) ||
	    lt_grow((void **)&c->locksites.site_st, &c->locksites.cap_site_st,
		    n + 1, sizeof(*c->locksites.site_st)))
		return 0;
	r = &c->locksites.site_rows[n];
	memset(r, 0, sizeof(*r));
	memset(&c->locksites.site_st[n], 0, sizeof(c->locksites.site_st[n]));
	c->locksites.site_st[n].hash = h;
	r->id = ++c->locktab.next_id;
	r->kind = c->locktab.locks[a].kind;
	memcpy(r->name, c->locktab.locks[a].name, sizeof(r->name));
	memcpy(r->key, c->locktab.locks[a].key, sizeof(r->key));
	r->address = c->locktab.locks[a].address;
	c->locksites.n_site_rows++;
	return n + 1;
}

/* Which site each lock that may join is a copy of, this read. */
static int find_members(struct lt_collector *c)
{
	struct group_slot *t, *g;
	size_t i, size = 64, mask;
	uint64_t h;

	while (size < 2 * (c->locktab.n_locks + c->locksites.n_site_rows))
		size *= 2;
	t = calloc(size, sizeof(*t));
	if (!t)
		return -ENOMEM;
	mask = size - 1;
	/* Sites first, by a member each, so that they keep their rows. */
	for (i = 0; i < c->locktab.n_locks; i++) {
		struct lock_state *s = &c->locktab.lstate[i];

		if (!s->site)
			continue;
		h = group_hash(&c->locktab.locks[i]);
		if (!may_join(c, i) ||
		    h != c->locksites.site_st[s->site - 1].hash) {
			s->site = 0; /* renamed: it goes where it belongs */
			continue;
		}
		g = group_slot(c, t, mask, h, i);
		if (!g->lock)
			*g = (struct group_slot){ h, i + 1 };
	}
	for (i = 0; i < c->locktab.n_locks; i++) {
		struct lock_state *s = &c->locktab.lstate[i], *first;

		if (s->site || !may_join(c, i))
			continue;
		h = group_hash(&c->locktab.locks[i]);
		g = group_slot(c, t, mask, h, i);
		if (!g->lock) {
			*g = (struct group_slot){ h, i + 1 };
			continue;
		}
		first = &c->locktab.lstate[g->lock - 1];
		if (!first->site)
			first->site = new_site(c, h, g->lock - 1);
		s->site = first->site;
	}
	free(t);
	return 0;
}

/* The top list a member adds to its site's, by process. */
static void add_parties(struct lt_party *to, size_t *n,
			const struct lt_party *p, size_t np)
{
	size_t i, j;

	for (i = 0; i < np && i < LT_TOP_PARTIES; i++) {
		for (j = 0; j < *n && to[j].pid != p[i].pid; j++)
			;
		if (j < *n) {
			to[j].count += p[i].count;
			to[j].ns += p[i].ns;
			continue;
		}
		if (*n < LT_TOP_PARTIES) {
			to[(*n)++] = p[i];
			continue;
		}
		/* Full: it replaces the least, if it is more. */
		for (j = 1, np = 0; j < *n; j++)
			if (to[j].ns < to[np].ns)
				np = j;
		if (p[i].ns > to[np].ns)
			to[np] = p[i];
	}
}

static int cmp_party(const void *a, const void *b)
{
	const struct lt_party *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->count > y->count ? -1 : x->count < y->count;
}

static int add_pid(struct site_state *st, pid_t pid)
{
	size_t k;

	for (k = 0; k < st->n_pids; k++)
		if (st->pids[k] == pid)
			return 0;
	if (lt_grow((void **)&st->pids, &st->cap_pids, st->n_pids + 1,
		    sizeof(*st->pids)))
		return -ENOMEM;
	st->pids[st->n_pids++] = pid;
	return 0;
}

/* One member into its site's row. */
static int add_member(struct lt_collector *c, size_t i)
{
	const struct lt_lock *m = &c->locktab.locks[i];
	size_t at = c->locktab.lstate[i].site - 1, k;
	struct site_state *st = &c->locksites.site_st[at];
	struct lt_lock *r = &c->locksites.site_rows[at];
	bool first = !st->n_members;

	if (lt_grow((void **)&st->members, &st->cap_members, st->n_members + 1,
		    sizeof(*st->members)))
		return -ENOMEM;
	st->members[st->n_members++] = m->id;
	for (k = 0; k < m->n_pids; k++)
		if (add_pid(st, m->pids[k]))
			return -ENOMEM;
	lt_figures_add(&r->total, &m->total);
	lt_figures_add(&r->delta, &m->delta);
	r->waiters_now += m->waiters_now;
	r->spinning_now += m->spinning_now;
	add_parties(r->holders, &r->n_holders, m->holders, m->n_holders);
	add_parties(r->waiters, &r->n_waiters, m->waiters, m->n_waiters);
	if (first)
		memcpy(r->comm, m->comm, sizeof(r->comm));
	else if (strcmp(r->comm, m->comm))
		r->comm[0] = '\0'; /* of many programs */
	/* The member with the most wait names its holder and stack. */
	if (!first && m->total.wait_ns <= st->best_ns)
		return 0;
	st->best_ns = m->total.wait_ns;
	if (m->holder) {
		r->holder = m->holder;
		r->holder_tid = m->holder_tid;
		memcpy(r->holder_comm, m->holder_comm, sizeof(r->holder_comm));
		memcpy(r->holder_thread, m->holder_thread,
		       sizeof(r->holder_thread));
	}
	if (m->stack)
		r->stack = m->stack;
	return 0;
}

/* A site's row, emptied of the last read's members. */
static void clear_site(struct lt_collector *c, size_t at)
{
	struct site_state *st = &c->locksites.site_st[at];
	struct lt_lock *r = &c->locksites.site_rows[at];

	st->n_members = st->n_pids = 0;
	st->best_ns = 0;
	r->total = st->retired;
	memset(&r->delta, 0, sizeof(r->delta));
	r->waiters_now = r->spinning_now = 0;
	r->n_holders = r->n_waiters = 0;
	r->holder = r->holder_tid = 0;
	r->holder_comm[0] = r->holder_thread[0] = '\0';
	r->stack = NULL;
}

/* A site's row as its members left it. */
static void finish_site(struct lt_collector *c, size_t at)
{
	struct site_state *st = &c->locksites.site_st[at];
	struct lt_lock *r = &c->locksites.site_rows[at];

	qsort(r->holders, r->n_holders, sizeof(r->holders[0]), cmp_party);
	qsort(r->waiters, r->n_waiters, sizeof(r->waiters[0]), cmp_party);
	r->pids = st->pids;
	r->n_pids = st->n_pids;
	r->members = st->members;
	r->n_members = st->n_members;
	r->procs = (unsigned int)st->n_pids; /* a shared member has many */
}

/* The lock row with this id: rows keep the order of their ids. */
static ssize_t lock_by_id(const struct lt_collector *c, uint64_t id)
{
	size_t lo = 0, hi = c->locktab.n_locks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->locktab.locks[mid].id < id)
			lo = mid + 1;
		else if (c->locktab.locks[mid].id > id)
			hi = mid;
		else
			return (ssize_t)mid;
	}
	return -1;
}

static const struct lt_collector *order_of;

/* Members most wait first, then by id. */
static int cmp_member(const void *a, const void *b)
{
	ssize_t x = lock_by_id(order_of, *(const uint64_t *)a);
	ssize_t y = lock_by_id(order_of, *(const uint64_t *)b);

	return lt_lock_order(&order_of->locktab.locks[x],
			     &order_of->locktab.locks[y], true);
}

/* A process's top lock that is a member names its site. */
static void top_locks(struct lt_collector *c)
{
	size_t i;
	ssize_t l;

	for (i = 0; i < c->proctab.n_procs; i++) {
		l = lock_by_id(c, c->proctab.procs[i].top_lock);
		if (l >= 0 && c->locktab.lstate[l].site)
			c->proctab.procs[i].top_lock =
				c->locksites
					.site_rows[c->locktab.lstate[l].site - 1]
					.id;
	}
}

int locksites_build(struct lt_collector *c)
{
	size_t i;
	int err;

	err = find_members(c);
	for (i = 0; i < c->locksites.n_site_rows; i++)
		clear_site(c, i);
	for (i = 0; !err && i < c->locktab.n_locks; i++) {
		c->locktab.locks[i].site = 0;
		if (!c->locktab.lstate[i].site)
			continue;
		c->locktab.locks[i].site =
			c->locksites.site_rows[c->locktab.lstate[i].site - 1].id;
		err = add_member(c, i);
	}
	for (i = 0; i < c->locksites.n_site_rows; i++)
		finish_site(c, i);
	c->snap.n_locks = c->locktab.n_locks;
	c->snap.locks = c->locktab.locks;
	c->snap.n_sites = c->locksites.n_site_rows;
	c->snap.sites = c->locksites.site_rows;
	order_of = c;
	for (i = 0; i < c->locksites.n_site_rows; i++)
		qsort(c->locksites.site_st[i].members,
		      c->locksites.site_st[i].n_members, sizeof(uint64_t),
		      cmp_member);
	top_locks(c);
	return err;
}

void locksites_retire(struct lt_collector *c, size_t lock)
{
	size_t site = c->locktab.lstate[lock].site;

	if (site)
		lt_figures_add(&c->locksites.site_st[site - 1].retired,
			       &c->locktab.locks[lock].total);
}

void locksites_free(struct lt_collector *c)
{
	size_t i;

	for (i = 0; i < c->locksites.n_site_rows; i++) {
		free(c->locksites.site_st[i].members);
		free(c->locksites.site_st[i].pids);
	}
	free(c->locksites.site_rows);
	free(c->locksites.site_st);
}
