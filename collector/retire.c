// SPDX-License-Identifier: LGPL-2.1-or-later
/* Retiring rows that no process can reach, and compacting the arrays. */
#include <stdlib.h>
#include <string.h>
#include "state.h"

#define RETIRE_MIN 256 /* rows retired at once, at least */
/* The most rows kept of locks and of files whose slots went back. */
#define LT_ASLEEP_LOCKS (2 * LT_MAX_LOCKS)
#define LT_ASLEEP_FILES (2 * LT_MAX_FILES)

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
	return (c->locktab.n_locks > c->snap.lock_entries + LT_ASLEEP_LOCKS ||
		c->filetab.n_files >
			c->filetab.file_entries + LT_ASLEEP_FILES) &&
	       c->reading.read_ns - c->retire.asleep_ns >= age / 4;
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

	c->retire.asleep_ns = c->reading.read_ns;
	list = calloc(c->locktab.n_locks > c->filetab.n_files ?
			      c->locktab.n_locks :
			      c->filetab.n_files,
		      sizeof(*list));
	pinned = calloc(c->locktab.n_locks + 1, sizeof(*pinned));
	if (!list || !pinned)
		goto out;
	for (i = 0; i < c->parties.n_party; i++)
		if (c->parties.party[i].linked && c->parties.party[i].slot >= 0)
			pinned[c->parties.party[i].lock] = true;
	for (i = n = 0; i < c->locktab.n_locks; i++) {
		const struct lock_state *s = &c->locktab.lstate[i];

		if (lmap[i] >= 0 && s->slot < 0 && !s->dead_at && !s->waited &&
		    s->live != c->reading.reads && !pinned[i])
			list[n++] = (struct asleep){ s->moved_at, i };
	}
	drop_oldest(list, n, LT_ASLEEP_LOCKS, lmap);
	for (i = n = 0; i < c->filetab.n_files; i++)
		if (c->filetab.fstate[i].slot < 0)
			list[n++] =
				(struct asleep){ c->filetab.fstate[i].moved_at,
						 i };
	drop_oldest(list, n, LT_ASLEEP_FILES, fmap);
out:
	free(list);
	free(pinned);
}

/*
 * The tables of rows and every position of their rows kept elsewhere,
 * each described once, so that retiring renumbers them all: a new array
 * of rows, list of rows, slot -> row map or link to a row is a new row
 * of one of the tables below.
 */
enum rows {
	ROWS_LOCKS,
	ROWS_PROCS,
	ROWS_SIDES,
	ROWS_PARTIES,
	ROWS_FILES,
	ROWS_NR
};

#define AT(field) offsetof(struct lt_collector, field)

/* An array with one entry per row, in the collector, and its capacity. */
struct row_array {
	size_t at, cap_at;
	size_t size; /* of an entry */
};

#define ARRAY(field, cap)                                            \
	{                                                            \
		AT(field), AT(cap),                                  \
			sizeof(((struct lt_collector *)0)->field[0]) \
	}

/* Rows: their count, their arrays (moved together) and their index. */
struct row_table {
	size_t n_at;
	struct row_array arrays[2]; /* an unused one has size 0 */
	size_t ix_at;
	unsigned int keyed; /* the array the index keys into */
	/* What an entry that goes takes with it, or NULL. */
	void (*drop)(struct lt_collector *c, size_t row);
};

/* A list of rows, and its count. */
struct row_list {
	enum rows of;
	size_t at, n_at;
};

/* A map from the kernel's slots to rows, -1 for none. */
struct row_slots {
	enum rows of;
	size_t at, len;
};

/* A row of one table kept in each entry of another's first array. */
struct row_link {
	enum rows in, of;
	size_t at; /* in the entry */
};

static void drop_lock(struct lt_collector *c, size_t row)
{
	locksites_retire(c, row);
	free(c->locktab.lstate[row].pids);
	free(c->locktab.lstate[row].stack);
	if (c->locktab.lstate[row].dead_at)
		c->retire.n_dead--;
}

static void drop_proc(struct lt_collector *c, size_t row)
{
	(void)row; /* only the ended go */
	c->retire.n_dead_procs--;
}

static void drop_side(struct lt_collector *c, size_t row)
{
	if (c->parties.side[row].dead_at)
		c->retire.n_dead_sides--;
}

static void drop_party(struct lt_collector *c, size_t row)
{
	if (!c->parties.party[row].linked)
		c->retire.n_unlinked--;
}

static const struct row_table tables[ROWS_NR] = {
	[ROWS_LOCKS] = { .n_at = AT(locktab.n_locks),
			 .arrays = { ARRAY(locktab.locks, locktab.cap_locks),
				     ARRAY(locktab.lstate, locktab.cap_lstate) },
			 .ix_at = AT(locktab.lock_ix),
			 .keyed = 1,
			 .drop = drop_lock },
	[ROWS_PROCS] = { .n_at = AT(proctab.n_procs),
			 .arrays = { ARRAY(proctab.procs, proctab.cap_procs),
				     ARRAY(proctab.pstate, proctab.cap_pstate) },
			 .ix_at = AT(proctab.proc_ix),
			 .keyed = 1,
			 .drop = drop_proc },
	[ROWS_SIDES] = { .n_at = AT(parties.n_side),
			 .arrays = { ARRAY(parties.side, parties.cap_side) },
			 .ix_at = AT(parties.side_ix),
			 .drop = drop_side },
	[ROWS_PARTIES] = { .n_at = AT(parties.n_party),
			   .arrays = { ARRAY(parties.party, parties.cap_party) },
			   .ix_at = AT(parties.party_ix),
			   .drop = drop_party },
	[ROWS_FILES] = { .n_at = AT(filetab.n_files),
			 .arrays = { ARRAY(filetab.files, filetab.cap_files),
				     ARRAY(filetab.fstate, filetab.cap_fstate) },
			 .ix_at = AT(filetab.file_ix),
			 .keyed = 1 },
};

static const struct row_list lists[] = {
	{ ROWS_LOCKS, AT(locktab.live), AT(locktab.n_live) },
	{ ROWS_LOCKS, AT(locktab.was_live), AT(locktab.n_was_live) },
	{ ROWS_LOCKS, AT(inflight.waited), AT(inflight.n_waited) },
	{ ROWS_LOCKS, AT(sampler.spinning), AT(sampler.n_spinning) },
	{ ROWS_LOCKS, AT(locktab.fresh), AT(locktab.n_fresh) },
};

static const struct row_slots slot_maps[] = {
	{ ROWS_LOCKS, AT(slots.slot_row), LT_MAX_LOCKS },
	{ ROWS_PARTIES, AT(slots.party_row), LT_MAX_PARTIES },
	{ ROWS_FILES, AT(slots.file_row), LT_MAX_FILES },
};

/* Only a linked party stays (mark_rows()), so every kept link is valid. */
static const struct row_link links[] = {
	{ ROWS_PARTIES, ROWS_LOCKS, offsetof(struct party_state, lock) },
	{ ROWS_PARTIES, ROWS_SIDES, offsetof(struct party_state, side) },
	{ ROWS_PARTIES, ROWS_PROCS, offsetof(struct party_state, proc) },
};

/* The collector's field at offset at. */
static void *field(struct lt_collector *c, size_t at)
{
	return (char *)c + at;
}

/* The array of rows the collector's field at offset at points to. */
static char *array_at(struct lt_collector *c, size_t at)
{
	void *array;

	memcpy(&array, field(c, at), sizeof(array));
	return array;
}

/*
 * One retirement of one table: where its entries go (-1: they go), from
 * the count at its start; how many stay; and its index's table remade
 * over those.
 */
struct row_plan {
	size_t n, keep;
	ssize_t *map;
	uint32_t *ix_table;
	size_t ix_size;
};

struct retire_plan {
	struct row_plan t[ROWS_NR];
};

/* A map for each table, every entry kept; false without the memory. */
static bool plan_maps(struct lt_collector *c, struct retire_plan *p)
{
	bool ok = true;
	size_t r;

	for (r = 0; r < ROWS_NR; r++) {
		struct row_plan *t = &p->t[r];

		t->n = *(size_t *)field(c, tables[r].n_at);
		t->map = calloc(t->n + 1, sizeof(*t->map));
		ok &= t->map != NULL;
	}
	return ok;
}

/*
 * What goes: the rows due (a lock only if this read saw it neither move
 * nor waited on), the asleep past their bound, the sides of locks that
 * go, and the parties unlinked or linked to anything that goes.
 */
static void mark_rows(struct lt_collector *c, struct retire_plan *p,
		      uint64_t now, uint64_t age)
{
	ssize_t *lmap = p->t[ROWS_LOCKS].map, *rmap = p->t[ROWS_PROCS].map,
		*smap = p->t[ROWS_SIDES].map, *pmap = p->t[ROWS_PARTIES].map;
	size_t i;

	for (i = 0; i < p->t[ROWS_LOCKS].n; i++) {
		const struct lock_state *s = &c->locktab.lstate[i];

		if (due(s->dead_at, now, age) && s->live != c->reading.reads &&
		    !s->waited)
			lmap[i] = -1;
	}
	if (asleep_due(c, age))
		choose_asleep(c, lmap, p->t[ROWS_FILES].map);
	for (i = 0; i < p->t[ROWS_PROCS].n; i++)
		if (due(c->proctab.pstate[i].dead_at, now, age))
			rmap[i] = -1;
	for (i = 0; i < p->t[ROWS_SIDES].n; i++) {
		ssize_t l = lt_index_find(&c->locktab.lock_ix,
					  &c->parties.side[i].key.lock,
					  c->locktab.lstate);

		if (due(c->parties.side[i].dead_at, now, age) ||
		    (l >= 0 && lmap[l] < 0))
			smap[i] = -1;
	}
	for (i = 0; i < p->t[ROWS_PARTIES].n; i++) {
		const struct party_state *ps = &c->parties.party[i];

		if (!ps->linked || lmap[ps->lock] < 0 || smap[ps->side] < 0 ||
		    rmap[ps->proc] < 0)
			pmap[i] = -1;
	}
}

/* The new positions in every map; returns how many entries go. */
static size_t plan_all(struct retire_plan *p)
{
	size_t gone = 0, r;

	for (r = 0; r < ROWS_NR; r++)
		gone += plan_rows(p->t[r].map, p->t[r].n, &p->t[r].keep);
	return gone;
}

/* The indexes' tables for what stays; false without the memory. */
static bool plan_tables(struct retire_plan *p)
{
	bool ok = true;
	size_t r;

	for (r = 0; r < ROWS_NR; r++) {
		struct row_plan *t = &p->t[r];

		t->ix_table = lt_index_table(t->keep, &t->ix_size);
		ok &= t->ix_table != NULL;
	}
	return ok;
}

/* The links of the entries that stay, while they are where they were. */
static void remap_links(struct lt_collector *c, const struct retire_plan *p)
{
	size_t k, i;

	for (k = 0; k < sizeof(links) / sizeof(links[0]); k++) {
		const struct row_link *l = &links[k];
		const struct row_array *a = &tables[l->in].arrays[0];
		const struct row_plan *in = &p->t[l->in];
		char *base = array_at(c, a->at);

		for (i = 0; i < in->n; i++) {
			size_t *row = (size_t *)(base + i * a->size + l->at);

			if (in->map[i] >= 0)
				*row = (size_t)p->t[l->of].map[*row];
		}
	}
}

/* The entries of one table that stay move down; its index is remade. */
static void move_rows(struct lt_collector *c, enum rows r, struct row_plan *p)
{
	const struct row_table *t = &tables[r];
	size_t i, a;

	for (i = 0; i < p->n; i++) {
		if (p->map[i] < 0) {
			if (t->drop)
				t->drop(c, i);
			continue;
		}
		if ((size_t)p->map[i] == i)
			continue;
		for (a = 0; a < 2 && t->arrays[a].size; a++) {
			char *base = array_at(c, t->arrays[a].at);
			size_t size = t->arrays[a].size;

			memcpy(base + (size_t)p->map[i] * size, base + i * size,
			       size);
		}
	}
	*(size_t *)field(c, t->n_at) = p->keep;
	lt_index_refill(field(c, t->ix_at), p->ix_table, p->ix_size, p->keep,
			array_at(c, t->arrays[t->keyed].at));
	p->ix_table = NULL;
}

/* Every list of rows and slot -> row map, renumbered; a row that goes
 * leaves its list, and its slot leads to -1. */
static void remap_positions(struct lt_collector *c, const struct retire_plan *p)
{
	size_t k, i, n;

	for (k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
		const ssize_t *map = p->t[lists[k].of].map;
		size_t *list = *(size_t **)field(c, lists[k].at);
		size_t *count = field(c, lists[k].n_at);

		for (i = n = 0; i < *count; i++)
			if (map[list[i]] >= 0)
				list[n++] = (size_t)map[list[i]];
		*count = n;
	}
	for (k = 0; k < sizeof(slot_maps) / sizeof(slot_maps[0]); k++) {
		const ssize_t *map = p->t[slot_maps[k].of].map;
		ssize_t *rows = field(c, slot_maps[k].at);

		for (i = 0; i < slot_maps[k].len; i++)
			if (rows[i] >= 0)
				rows[i] = map[rows[i]];
	}
}

/* What a burst of short-lived processes took goes back. */
static void shrink_rows(struct lt_collector *c)
{
	size_t r, a;

	for (r = 0; r < ROWS_NR; r++)
		for (a = 0; a < 2 && tables[r].arrays[a].size; a++)
			lt_shrink(field(c, tables[r].arrays[a].at),
				  field(c, tables[r].arrays[a].cap_at),
				  *(size_t *)field(c, tables[r].n_at),
				  tables[r].arrays[a].size);
}

/*
 * Moves every table's rows by the plan and renumbers every position of
 * them kept elsewhere; it cannot fail.
 */
static void move_all(struct lt_collector *c, struct retire_plan *p)
{
	size_t r;

	remap_links(c, p);
	for (r = 0; r < ROWS_NR; r++)
		move_rows(c, r, &p->t[r]);
	remap_positions(c, p);
	c->slots.n_idle = 0; /* chosen by rows that moved: chosen again later */
	shrink_rows(c);
}

static void free_plan(struct retire_plan *p)
{
	size_t r;

	for (r = 0; r < ROWS_NR; r++) {
		free(p->t[r].ix_table);
		free(p->t[r].map);
	}
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
	uint64_t now = lt_mono_ns();
	uint64_t age = (uint64_t)c->opts.retire_s * 1000000000ULL;
	struct retire_plan p = { 0 };

	if (!c->opts.retire_s ||
	    (c->retire.n_dead < RETIRE_MIN &&
	     c->retire.n_dead_sides < RETIRE_MIN &&
	     c->retire.n_dead_procs < RETIRE_MIN &&
	     c->retire.n_unlinked < RETIRE_MIN && !asleep_due(c, age)))
		return;
	if (!plan_maps(c, &p))
		goto out;
	mark_rows(c, &p, now, age);
	if (plan_all(&p) < RETIRE_MIN || !plan_tables(&p))
		goto out;
	move_all(c, &p); /* nothing in it can fail */
out:
	free_plan(&p);
}

void lt_collector_set_retire(struct lt_collector *c, unsigned int s)
{
	c->opts.retire_s = s;
}
