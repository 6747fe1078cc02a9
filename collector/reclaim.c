// SPDX-License-Identifier: LGPL-2.1-or-later
/* Idle slots of the kernel's maps, given back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "room.h"
#include "futex.skel.h"
#include "filelock.skel.h"
#include "fileio.skel.h"
#include "reader.skel.h"

/* Room for one CPU's value of any slot kind. */
#define SLOT_VALUE_MAX                                                \
	(sizeof(struct lt_lock_stat) + sizeof(struct lt_party_stat) + \
	 sizeof(struct lt_file_stat))

/* Zeroes a slot no name leads to and queues it as free again. */
static int queue_slot(struct lt_collector *c, struct bpf_map *values,
		      struct bpf_map *free, __u32 slot, size_t value_size)
{
	memset(c->zero_values, 0, (size_t)c->ncpus * value_size);
	if (bpf_map_update_elem(bpf_map__fd(values), &slot, c->zero_values,
				BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(free), NULL, &slot, BPF_ANY))
		return -errno; /* the slot is lost: one fewer fits */
	if (free == c->futex->maps.free_party_slots)
		c->slots_back[LT_HIGH_PARTIES]++;
	else if (free == c->fileio->maps.free_file_slots)
		c->slots_back[LT_HIGH_FILES]++;
	else
		c->slots_back[LT_HIGH_LOCKS]++;
	return 0;
}

/*
 * Tells the probes how many slots went back (slot_use, common.h), once
 * a read, and whether they now fold new byte ranges into their files.
 */
void reclaim_publish(struct lt_collector *c)
{
	int fd = bpf_map__fd(c->futex->maps.slot_use);
	__u64 use[LT_SLOT_USE_NR] = { 0 };
	__u32 k;

	for (k = 0; k < LT_HIGH_NR; k++) {
		__u32 t = 2 * k, b = t + 1;

		bpf_map_update_elem(fd, &b, &c->slots_back[k], BPF_ANY);
		if (!bpf_map_lookup_elem(fd, &t, &use[t]))
			use[b] = c->slots_back[k];
	}
	c->snap.folding =
		(use[2 * LT_HIGH_LOCKS] - use[2 * LT_HIGH_LOCKS + 1]) * 100 >=
			(__u64)LT_MAX_LOCKS * LT_FOLD_AT ||
		(use[2 * LT_HIGH_PARTIES] - use[2 * LT_HIGH_PARTIES + 1]) *
				100 >=
			(__u64)LT_MAX_PARTIES * LT_FOLD_AT;
}

/*
 * Takes key's slot back, zeroed, among the free ones: names maps keys to
 * slots of values, whose free ones are in the queue free. Only keys no
 * thread can reach any more go: a slot kept in a thread's cache or a
 * held range stays valid while that thread lives. Returns 0 when the
 * key had a slot.
 */
int reclaim_free_slot(struct lt_collector *c, struct bpf_map *names,
		      struct bpf_map *values, struct bpf_map *free,
		      const void *key, size_t value_size)
{
	__u32 slot;

	if (bpf_map_lookup_elem(bpf_map__fd(names), key, &slot) ||
	    bpf_map_delete_elem(bpf_map__fd(names), key))
		return -ENOENT;
	return queue_slot(c, values, free, slot, value_size);
}

/* Every slot is free when the probes load. */
int reclaim_fill_slots(struct lt_collector *c)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u32 slot;

	for (slot = 0; slot < LT_MAX_LOCKS; slot++)
		c->slot_row[slot] = -1;
	for (slot = 0; slot < LT_MAX_PARTIES; slot++)
		c->party_row[slot] = -1;
	for (slot = 0; slot < LT_MAX_FILES; slot++) {
		c->file_row[slot] = -1;
		if (bpf_map_update_elem(
			    bpf_map__fd(c->fileio->maps.free_file_slots), NULL,
			    &slot, BPF_ANY))
			return -errno;
	}
	c->zero_values = calloc((size_t)c->ncpus, SLOT_VALUE_MAX);
	c->peek = calloc((size_t)c->ncpus, SLOT_VALUE_MAX);
	if (!c->zero_values || !c->peek)
		return -ENOMEM;
	if (bpf_prog_test_run_opts(
		    bpf_program__fd(c->reader->progs.lt_fill_slots), &opts) ||
	    bpf_prog_test_run_opts(
		    bpf_program__fd(c->filelock->progs.lt_fill_owners), &opts))
		return -errno;
	return c->reader->bss->fill_failed ||
			       c->filelock->bss->owners_fill_failed ?
		       -ENOSPC :
		       0;
}

/* What every event adds to: a lock's figures that only grow, summed. */
static uint64_t stat_mass(const struct lt_lock_stat *v)
{
	return v->waits + v->wait_ns + v->contended + v->acquires +
	       v->trylock_failures + v->hold_ns + v->wakes + v->timeouts +
	       v->interrupted + v->value_changed + v->owner_died +
	       v->deadlocks + v->io_under_lock_ns;
}

/* The kernel's maps of a slot kind: names, figures and free slots. */
struct slot_maps {
	struct bpf_map *names, *values, *free;
	size_t size; /* of one CPU's value */
};

static struct slot_maps maps_of(struct lt_collector *c,
				const struct idle_entry *e)
{
	switch (e->kind) {
	case SLOT_PARTY:
		return (struct slot_maps){ c->futex->maps.party_slots,
					   c->futex->maps.parties,
					   c->futex->maps.free_party_slots,
					   sizeof(struct lt_party_stat) };
	case SLOT_FILE:
		return (struct slot_maps){ c->fileio->maps.file_slots,
					   c->fileio->maps.file_stat,
					   c->fileio->maps.free_file_slots,
					   sizeof(struct lt_file_stat) };
	default:
		return (struct slot_maps){ c->futex->maps.lock_slots,
					   c->futex->maps.stat_map,
					   c->futex->maps.free_slots,
					   sizeof(struct lt_lock_stat) };
	}
}

/* The same of an idle entry, as the kernel has it now and as last read;
 * false when the kernel's values cannot be read. */
static bool masses(struct lt_collector *c, const struct idle_entry *e,
		   uint64_t *now, uint64_t *read)
{
	struct slot_maps m = maps_of(c, e);
	int cpu;

	if (bpf_map_lookup_elem(bpf_map__fd(m.values), &e->slot, c->peek))
		return false;
	*now = 0;
	for (cpu = 0; cpu < c->ncpus; cpu++) {
		const char *v = (const char *)c->peek + (size_t)cpu * m.size;

		if (e->kind == SLOT_PARTY)
			*now += ((const struct lt_party_stat *)v)->count +
				((const struct lt_party_stat *)v)->ns;
		else if (e->kind == SLOT_FILE)
			*now += files_mass((const struct lt_file_stat *)v);
		else
			*now += stat_mass((const struct lt_lock_stat *)v);
	}
	if (e->kind == SLOT_PARTY)
		*read = c->party[e->row].count + c->party[e->row].ns;
	else if (e->kind == SLOT_FILE)
		*read = files_mass(&c->fstate[e->row].raw);
	else
		*read = stat_mass(&c->lstate[e->row].raw);
	return true;
}

/* Every probe looks up again the slots it kept. */
static void advance_gen(struct lt_collector *c)
{
	__atomic_fetch_add(&c->futex->bss->slot_gen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->filelock->bss->slot_gen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->fileio->bss->slot_gen, 1, __ATOMIC_RELAXED);
}

/* The key an idle entry is named by in the kernel. */
static const void *idle_key(struct lt_collector *c, const struct idle_entry *e)
{
	switch (e->kind) {
	case SLOT_PARTY:
		return &c->party[e->row].key;
	case SLOT_FILE:
		return &c->fstate[e->row].key;
	default:
		return &c->lstate[e->row].key;
	}
}

/* Still idle: nothing moved since the read that chose it. */
static bool still_idle(struct lt_collector *c, const struct idle_entry *e)
{
	switch (e->kind) {
	case SLOT_PARTY:
		return c->party[e->row].slot == (__s32)e->slot &&
		       c->party[e->row].moved_at < c->idle_ns;
	case SLOT_FILE:
		return c->fstate[e->row].slot == (__s32)e->slot &&
		       c->fstate[e->row].moved_at < c->idle_ns;
	default:
		return c->lstate[e->row].slot == (__s32)e->slot &&
		       c->lstate[e->row].moved_at < c->idle_ns &&
		       !c->lstate[e->row].waited;
	}
}

/* The slot is free again: zeroed, queued, and its row starts anew. */
static void release(struct lt_collector *c, const struct idle_entry *e)
{
	struct slot_maps m = maps_of(c, e);

	if (queue_slot(c, m.values, m.free, e->slot, m.size))
		return;
	if (e->kind == SLOT_PARTY) {
		struct party_state *ps = &c->party[e->row];

		c->party_row[e->slot] = -1;
		ps->slot = -1;
		ps->count = ps->ns = 0; /* its next slot counts from 0 */
	} else if (e->kind == SLOT_FILE) {
		struct file_state *fs = &c->fstate[e->row];

		c->file_row[e->slot] = -1;
		fs->slot = -1;
		memset(&fs->raw, 0, sizeof(fs->raw));
		if (c->file_entries)
			c->file_entries--;
	} else {
		struct lock_state *s = &c->lstate[e->row];
		__u64 holder = s->raw.last_holder;

		c->slot_row[e->slot] = -1;
		s->slot = -1;
		memset(&s->raw, 0, sizeof(s->raw));
		s->raw.last_holder = holder;
		bpf_map_delete_elem(bpf_map__fd(c->futex->maps.wheres),
				    &s->key);
		if (c->snap.lock_entries)
			c->snap.lock_entries--;
	}
}

/* Queues an idle slot to go back at the next read. */
static bool choose(struct lt_collector *c, enum slot_kind kind, size_t row,
		   __s32 slot)
{
	if (lt_grow((void **)&c->idle, &c->cap_idle, c->n_idle + 1,
		    sizeof(*c->idle)))
		return false;
	c->idle[c->n_idle++] = (struct idle_entry){ .kind = kind,
						    .row = row,
						    .slot = (__u32)slot };
	return true;
}

/*
 * When the kernel's lock or file map is more than a quarter full, the
 * slots of locks, parties and files idle for retire_s seconds
 * (LT_RETIRE_S when it is 0) go back, so that a long run on a host that
 * keeps meeting new locks (byte ranges, files, shared memory) or reading
 * new files keeps room for them; their rows and totals stay. It takes two
 * reads. The first chooses and advances slot_gen, so the probes look up
 * again any slot they kept. The next takes the names of those still idle
 * out of the kernel's maps, so no probe finds them, advances it again (a
 * slot found by its name in between is not used either), waits a moment
 * for a probe that found one just before, and then gives back each slot
 * whose figures did not move.
 * One that moved keeps its name back; if it cannot (its next event took
 * a new slot meanwhile) what it gained is lost, and counted as a drop.
 * The row of a slot that went back counts from zero against the next
 * slot its lock, party or file takes.
 */

#define RECLAIM_FILL 4 /* a map more than 1/RECLAIM_FILL full is trimmed */

/* The fullest of the kernel's lock, party and file maps, in percent. */
static unsigned int fill_percent(const struct lt_collector *c)
{
	uint64_t l = c->snap.lock_entries * 100 / LT_MAX_LOCKS,
		 p = c->snap.party_entries * 100 / LT_MAX_PARTIES,
		 f = (uint64_t)c->file_entries * 100 / LT_MAX_FILES;

	return (unsigned int)(l > p ? (l > f ? l : f) : (p > f ? p : f));
}

/*
 * How long a slot must have been idle to go back: the retire time while
 * the maps have room, an eighth of it past half full, and two intervals
 * past three quarters, so a store that keeps meeting new byte ranges
 * (tdb's record locks at moving offsets) finds room for the next ones.
 */
static uint64_t idle_age(const struct lt_collector *c, uint64_t age)
{
	uint64_t least = 2ULL * c->interval_ms * 1000000ULL, cut = age;
	unsigned int fill = fill_percent(c);

	if (fill >= 75)
		cut = least;
	else if (fill >= 50)
		cut = age / 8 > least ? age / 8 : least;
	return cut < age ? cut : age;
}

void reclaim_slots(struct lt_collector *c)
{
	const struct timespec grace = { .tv_nsec = 2000000L };
	/* Rows kept for the whole run still let idle slots go, then. */
	uint64_t age = (uint64_t)(c->retire_s ? c->retire_s : LT_RETIRE_S) *
		       1000000000ULL,
		 now, read;
	bool any = false;
	size_t i;

	for (i = 0; i < c->n_idle; i++) {
		struct idle_entry *e = &c->idle[i];

		e->named = !still_idle(c, e) ||
			   bpf_map_delete_elem(bpf_map__fd(maps_of(c, e).names),
					       idle_key(c, e));
		any |= !e->named;
	}
	if (any) {
		/* A slot kept since before the names went is not used. */
		advance_gen(c);
		nanosleep(&grace, NULL);
	}
	for (i = 0; i < c->n_idle; i++) {
		const struct idle_entry *e = &c->idle[i];

		if (e->named)
			continue;
		if (!masses(c, e, &now, &read))
			continue; /* not reached: the slot stays taken */
		if (now == read) {
			release(c, e);
			continue;
		}
		if (!bpf_map_update_elem(bpf_map__fd(maps_of(c, e).names),
					 idle_key(c, e), &e->slot, BPF_NOEXIST))
			continue; /* named again: read as ever */
		c->own_drops++;
		release(c, e);
	}
	c->n_idle = 0;

	/* Nothing becomes due faster: a busy full map is not scanned on
	 * every read. */
	age = idle_age(c, age);
	if (fill_percent(c) * RECLAIM_FILL < 100 ||
	    c->read_ns - c->scanned_ns < age / 4)
		return;
	c->scanned_ns = c->read_ns;
	for (i = 0; i < c->n_locks; i++) {
		const struct lock_state *s = &c->lstate[i];

		if (s->slot < 0 || s->waited || s->dead_at ||
		    c->read_ns - s->moved_at < age)
			continue;
		if (!choose(c, SLOT_LOCK, i, s->slot))
			break;
	}
	for (i = 0; i < c->n_party; i++) {
		const struct party_state *ps = &c->party[i];

		if (!ps->linked || ps->slot < 0 ||
		    c->read_ns - ps->moved_at < age)
			continue;
		if (!choose(c, SLOT_PARTY, i, ps->slot))
			break;
	}
	for (i = 0; i < c->n_files; i++) {
		const struct file_state *fs = &c->fstate[i];

		if (fs->slot < 0 || c->read_ns - fs->moved_at < age)
			continue;
		if (!choose(c, SLOT_FILE, i, fs->slot))
			break;
	}
	if (!c->n_idle)
		return;
	advance_gen(c);
	c->idle_ns = c->read_ns;
}
