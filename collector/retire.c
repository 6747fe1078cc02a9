// SPDX-License-Identifier: LGPL-2.1-or-later
/* Retiring rows that no process can reach, and compacting the arrays. */
#include <stdlib.h>
#include "room.h"

#define RETIRE_MIN 256 /* rows retired at once, at least */
/* The most rows kept of locks and of files whose slots went back. */
#define LT_ASLEEP_LOCKS (2 * LT_MAX_LOCKS)
#define LT_ASLEEP_FILES (2 * LT_MAX_FILES)

/* Renumbers the row positions in list by map, dropping those it drops. */
static void remap_list(size_t *list, size_t *n, const ssize_t *map)
{
	size_t i, k = 0;

	for (i = 0; i < *n; i++)
		if (map[list[i]] >= 0)
			list[k++] = (size_t)map[list[i]];
	*n = k;
}

/* Renumbers a slot -> row table by map: a slot's row that goes is -1. */
static void remap_rows(ssize_t *rows, size_t n, const ssize_t *map)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i] >= 0)
			rows[i] = map[rows[i]];
}

/*
 * The new position of each entry that keep() keeps, -1 for the others;
 * returns how many are kept.
 */
static size_t plan_rows(ssize_t *map, size_t n, size_t *kept)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		map[i] = map[i] < 0 ? -1 : (ssize_t)k++;
	*kept = k;
	return n - k;
}

/* Whether an entry that became unreachable at dead_at is due to go. */
static bool due(uint64_t dead_at, uint64_t now, uint64_t age)
{
	return dead_at && now - dead_at >= age;
}

/* A row whose slot went back, by when its figures last moved. */
struct asleep {
	uint64_t moved_at;
	size_t row;
};

static int cmp_asleep(const void *a, const void *b)
{
	const struct asleep *x = a, *y = b;

	if (x->moved_at != y->moved_at)
		return x->moved_at < y->moved_at ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/*
 * Of the n rows in list, whose slots went back, the longest idle leave
 * map when there are more than cap: down to three quarters of cap, so
 * that this is rare.
 */
static void drop_oldest(struct asleep *list, size_t n, size_t cap, ssize_t *map)
{
	size_t i;

	if (n <= cap)
		return;
	qsort(list, n, sizeof(*list), cmp_asleep);
	for (i = 0; i < n - cap / 4 * 3; i++)
		map[list[i].row] = -1;
}

/* Whether choose_asleep() has work: too many rows without slots, and
 * not counted in the last quarter of the retire time. */
static bool asleep_due(const struct lt_collector *c, uint64_t age)
{
	return (c->n_locks > c->snap.lock_entries + LT_ASLEEP_LOCKS ||
		c->n_files > c->file_entries + LT_ASLEEP_FILES) &&
	       c->read_ns - c->asleep_ns >= age / 4;
}

/*
 * The rows of locks and files whose slots went back (idle for the retire
 * time while the kernel's map was more than a quarter full) stay, with
 * their totals, for when they come back. Past LT_ASLEEP_LOCKS and
 * LT_ASLEEP_FILES of them the longest idle go too, so that a run that
 * keeps meeting new locks and files (byte ranges, temporary files, the
 * mutexes of short-lived objects) stays bounded. A lock whose holder or
 * waiter entries still have slots stays. Counted at most four times per
 * retire time (asleep_due()): rows lose their slots no faster.
 */
static void choose_asleep(struct lt_collector *c, ssize_t *lmap, ssize_t *fmap)
{
	struct asleep *list;
	bool *pinned;
	size_t i, n;

	c->asleep_ns = c->read_ns;
	list = calloc(c->n_locks > c->n_files ? c->n_locks : c->n_files,
		      sizeof(*list));
	pinned = calloc(c->n_locks + 1, sizeof(*pinned));
	if (!list || !pinned)
		goto out;
	for (i = 0; i < c->n_party; i++)
		if (c->party[i].linked && c->party[i].slot >= 0)
			pinned[c->party[i].lock] = true;
	for (i = n = 0; i < c->n_locks; i++) {
		const struct lock_state *s = &c->lstate[i];

		if (lmap[i] >= 0 && s->slot < 0 && !s->dead_at && !s->waited &&
		    s->live != c->reads && !pinned[i])
			list[n++] = (struct asleep){ s->moved_at, i };
	}
	drop_oldest(list, n, LT_ASLEEP_LOCKS, lmap);
	for (i = n = 0; i < c->n_files; i++)
		if (c->fstate[i].slot < 0)
			list[n++] = (struct asleep){ c->fstate[i].moved_at, i };
	drop_oldest(list, n, LT_ASLEEP_FILES, fmap);
out:
	free(list);
	free(pinned);
}

/*
 * One retirement: where each array's entries go (-1: they go), from the
 * counts at its start; how many stay; and the tables of the indexes
 * remade over those.
 */
struct retire_plan {
	size_t n_locks, n_party, n_side, n_procs, n_files;
	ssize_t *lmap, *pmap, *smap, *rmap, *fmap;
	size_t keep_l, keep_p, keep_s, keep_r, keep_f;
	uint32_t *lt, *pt, *st, *rt, *ft;
	size_t lsz, psz, ssz, rsz, fsz;
};

/* A map for each array, every entry kept; false without the memory. */
static bool plan_maps(const struct lt_collector *c, struct retire_plan *p)
{
	p->n_locks = c->n_locks;
	p->n_party = c->n_party;
	p->n_side = c->n_side;
	p->n_procs = c->n_procs;
	p->n_files = c->n_files;
	p->lmap = calloc(p->n_locks + 1, sizeof(*p->lmap));
	p->pmap = calloc(p->n_party + 1, sizeof(*p->pmap));
	p->smap = calloc(p->n_side + 1, sizeof(*p->smap));
	p->rmap = calloc(p->n_procs + 1, sizeof(*p->rmap));
	p->fmap = calloc(p->n_files + 1, sizeof(*p->fmap));
	return p->lmap && p->pmap && p->smap && p->rmap && p->fmap;
}

/*
 * What goes: the rows due (a lock only if this read saw it neither move
 * nor waited on), the asleep past their bound, the sides of locks that
 * go, and the parties unlinked or linked to anything that goes.
 */
static void mark_rows(struct lt_collector *c, struct retire_plan *p,
		      uint64_t now, uint64_t age)
{
	size_t i;

	for (i = 0; i < p->n_locks; i++) {
		const struct lock_state *s = &c->lstate[i];

		if (due(s->dead_at, now, age) && s->live != c->reads &&
		    !s->waited)
			p->lmap[i] = -1;
	}
	if (asleep_due(c, age))
		choose_asleep(c, p->lmap, p->fmap);
	for (i = 0; i < p->n_procs; i++)
		if (due(c->pstate[i].dead_at, now, age))
			p->rmap[i] = -1;
	for (i = 0; i < p->n_side; i++) {
		ssize_t l = lt_index_find(&c->lock_ix, &c->side[i].key.lock,
					  c->lstate);

		if (due(c->side[i].dead_at, now, age) ||
		    (l >= 0 && p->lmap[l] < 0))
			p->smap[i] = -1;
	}
	for (i = 0; i < p->n_party; i++) {
		const struct party_state *ps = &c->party[i];

		if (!ps->linked || p->lmap[ps->lock] < 0 ||
		    p->smap[ps->side] < 0 || p->rmap[ps->proc] < 0)
			p->pmap[i] = -1;
	}
}

/* The new positions in every map; returns how many entries go. */
static size_t plan_all(struct retire_plan *p)
{
	size_t gone;

	gone = plan_rows(p->lmap, p->n_locks, &p->keep_l);
	gone += plan_rows(p->pmap, p->n_party, &p->keep_p);
	gone += plan_rows(p->smap, p->n_side, &p->keep_s);
	gone += plan_rows(p->rmap, p->n_procs, &p->keep_r);
	gone += plan_rows(p->fmap, p->n_files, &p->keep_f);
	return gone;
}

/* The indexes' tables for what stays; false without the memory. */
static bool plan_tables(struct retire_plan *p)
{
	p->lt = lt_index_table(p->keep_l, &p->lsz);
	p->pt = lt_index_table(p->keep_p, &p->psz);
	p->st = lt_index_table(p->keep_s, &p->ssz);
	p->rt = lt_index_table(p->keep_r, &p->rsz);
	p->ft = lt_index_table(p->keep_f, &p->fsz);
	return p->lt && p->pt && p->st && p->rt && p->ft;
}

/* The locks that stay move down; every list of them is renumbered. */
static void move_locks(struct lt_collector *c, struct retire_plan *p)
{
	const ssize_t *lmap = p->lmap;
	size_t i;

	for (i = 0; i < p->n_locks; i++) {
		if (lmap[i] < 0) {
			free(c->lstate[i].pids);
			free(c->lstate[i].stack);
			if (c->lstate[i].dead_at)
				c->n_dead--;
		} else if ((size_t)lmap[i] != i) {
			c->locks[lmap[i]] = c->locks[i];
			c->lstate[lmap[i]] = c->lstate[i];
		}
	}
	c->n_locks = p->keep_l;
	c->n_idle = 0; /* chosen by rows that moved: chosen again later */
	lt_index_refill(&c->lock_ix, p->lt, p->lsz, p->keep_l, c->lstate);
	p->lt = NULL;
	remap_list(c->live, &c->n_live, lmap);
	remap_list(c->was_live, &c->n_was_live, lmap);
	remap_list(c->waited, &c->n_waited, lmap);
	remap_list(c->fresh, &c->n_fresh, lmap);

	remap_rows(c->slot_row, LT_MAX_LOCKS, lmap);
}

static void move_procs(struct lt_collector *c, struct retire_plan *p)
{
	const ssize_t *rmap = p->rmap;
	size_t i;

	for (i = 0; i < p->n_procs; i++) {
		if (rmap[i] < 0) {
			c->n_dead_procs--;
		} else if ((size_t)rmap[i] != i) {
			c->procs[rmap[i]] = c->procs[i];
			c->pstate[rmap[i]] = c->pstate[i];
		}
	}
	c->n_procs = p->keep_r;
	lt_index_refill(&c->proc_ix, p->rt, p->rsz, p->keep_r, c->pstate);
	p->rt = NULL;
}

static void move_sides(struct lt_collector *c, struct retire_plan *p)
{
	const ssize_t *smap = p->smap;
	size_t i;

	for (i = 0; i < p->n_side; i++) {
		if (smap[i] < 0) {
			if (c->side[i].dead_at)
				c->n_dead_sides--;
		} else if ((size_t)smap[i] != i) {
			c->side[smap[i]] = c->side[i];
		}
	}
	c->n_side = p->keep_s;
	lt_index_refill(&c->side_ix, p->st, p->ssz, p->keep_s, c->side);
	p->st = NULL;
}

/* The parties that stay move down, and so do the rows they point at. */
static void move_parties(struct lt_collector *c, struct retire_plan *p)
{
	const ssize_t *pmap = p->pmap;
	size_t i;

	for (i = 0; i < p->n_party; i++) {
		struct party_state *ps = &c->party[i];

		if (pmap[i] < 0) {
			if (!ps->linked)
				c->n_unlinked--;
			continue;
		}
		ps->lock = (size_t)p->lmap[ps->lock];
		ps->side = (size_t)p->smap[ps->side];
		ps->proc = (size_t)p->rmap[ps->proc];
		if ((size_t)pmap[i] != i)
			c->party[pmap[i]] = *ps;
	}
	c->n_party = p->keep_p;
	lt_index_refill(&c->party_ix, p->pt, p->psz, p->keep_p, c->party);
	p->pt = NULL;
	remap_rows(c->party_row, LT_MAX_PARTIES, pmap);
}

static void move_files(struct lt_collector *c, struct retire_plan *p)
{
	const ssize_t *fmap = p->fmap;
	size_t i;

	for (i = 0; i < p->n_files; i++) {
		if (fmap[i] >= 0 && (size_t)fmap[i] != i) {
			c->files[fmap[i]] = c->files[i];
			c->fstate[fmap[i]] = c->fstate[i];
		}
	}
	c->n_files = p->keep_f;
	lt_index_refill(&c->file_ix, p->ft, p->fsz, p->keep_f, c->fstate);
	p->ft = NULL;
	remap_rows(c->file_row, LT_MAX_FILES, fmap);
}

/* What a burst of short-lived processes took goes back. */
static void shrink_rows(struct lt_collector *c)
{
	lt_shrink((void **)&c->locks, &c->cap_locks, c->n_locks,
		  sizeof(*c->locks));
	lt_shrink((void **)&c->lstate, &c->cap_lstate, c->n_locks,
		  sizeof(*c->lstate));
	lt_shrink((void **)&c->procs, &c->cap_procs, c->n_procs,
		  sizeof(*c->procs));
	lt_shrink((void **)&c->pstate, &c->cap_pstate, c->n_procs,
		  sizeof(*c->pstate));
	lt_shrink((void **)&c->side, &c->cap_side, c->n_side, sizeof(*c->side));
	lt_shrink((void **)&c->party, &c->cap_party, c->n_party,
		  sizeof(*c->party));
	lt_shrink((void **)&c->files, &c->cap_files, c->n_files,
		  sizeof(*c->files));
	lt_shrink((void **)&c->fstate, &c->cap_fstate, c->n_files,
		  sizeof(*c->fstate));
}

static void free_plan(struct retire_plan *p)
{
	free(p->lt);
	free(p->pt);
	free(p->st);
	free(p->rt);
	free(p->ft);
	free(p->lmap);
	free(p->pmap);
	free(p->smap);
	free(p->rmap);
	free(p->fmap);
}

/*
 * Drops what no process can reach any more, retire_s seconds after it
 * became so: the rows of an ended process's private locks (their slots
 * in the kernel went back at its end, see exits_forget()), the
 * process's own row and its sides of the locks that stay (their top
 * lists keep its figures), with every party of any of these, and the
 * parties exits_forget() unlinked; and past a bound, the rows of locks
 * and files idle long enough to lose their slots (choose_asleep()). The
 * entries left move down to close the gaps, and every position kept
 * elsewhere is renumbered; lock ids stay. It works in batches of
 * RETIRE_MIN entries at least, and gives up for this read, changing
 * nothing, when the memory it needs is not there.
 */
void retire_rows(struct lt_collector *c)
{
	uint64_t now = mono_ns(), age = (uint64_t)c->retire_s * 1000000000ULL;
	struct retire_plan p = { 0 };

	if (!c->retire_s ||
	    (c->n_dead < RETIRE_MIN && c->n_dead_sides < RETIRE_MIN &&
	     c->n_dead_procs < RETIRE_MIN && c->n_unlinked < RETIRE_MIN &&
	     !asleep_due(c, age)))
		return;
	if (!plan_maps(c, &p))
		goto out;
	mark_rows(c, &p, now, age);
	if (plan_all(&p) < RETIRE_MIN || !plan_tables(&p))
		goto out;

	/* Nothing below can fail. */
	move_locks(c, &p);
	move_procs(c, &p);
	move_sides(c, &p);
	move_parties(c, &p);
	move_files(c, &p);
	shrink_rows(c);
out:
	free_plan(&p);
}

void lt_collector_set_retire(struct lt_collector *c, unsigned int s)
{
	c->retire_s = s;
}
