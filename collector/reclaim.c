// SPDX-License-Identifier: LGPL-2.1-or-later
/* Idle slots of the kernel's maps, given back: one table of slot kinds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"
#include "filelock.skel.h"
#include "fileio.skel.h"
#include "spin.skel.h"
#include "reader.skel.h"
#include "klock.skel.h"

/* Room for one CPU's value of any slot kind. */
#define SLOT_VALUE_MAX                                                \
	(sizeof(struct lt_lock_stat) + sizeof(struct lt_party_stat) + \
	 sizeof(struct lt_file_stat))

/* The collector's rows that hold the slots of one kind. */
struct slot_rows {
	void *states; /* the rows' states */
	size_t n; /* how many */
	ssize_t *row_of; /* the row of each slot, or -1 */
	uint64_t used; /* slots in use, as last counted */
};

/* The kernel's maps of one kind's slots: names, key -> slot; values, the
 * figures by slot; free, the queue of free slots. */
struct slot_maps {
	struct bpf_map *names, *values, *free;
};

/*
 * A kind of slot. Its rows' states keep their key, their slot (or -1)
 * and when their figures last moved at the offsets given; what else a
 * row does with its slot is the kind's own functions'. A new kind is a
 * new row of kinds[] (and of enum slot_kind).
 */
struct slot_kind_ops {
	size_t max; /* slots in the kernel's map */
	size_t value_size; /* of one CPU's value */
	enum lt_high high; /* where the slots it gives back count */
	size_t state_size, key_at, slot_at, moved_at; /* in a row's state */
	struct slot_rows (*rows)(struct lt_collector *c);
	struct slot_maps (*maps)(struct lt_collector *c);
	/* What every event adds to: one CPU's value summed, and the same
	 * of a row as last read. */
	uint64_t (*counter_sum)(const void *value);
	uint64_t (*read_counter_sum)(const struct lt_collector *c, size_t row);
	/* Whether a row's idle slot is not chosen (NULL: any may be). */
	bool (*kept)(const struct lt_collector *c, size_t row);
	/* Whether a row's chosen slot stays after all (NULL: none). */
	bool (*busy)(const struct lt_collector *c, size_t row);
	/* The row's slot went back: it counts from zero against its next. */
	void (*forget)(struct lt_collector *c, size_t row);
	/* The same of what the kernel keeps of the row beside its slot
	 * (NULL: nothing). */
	void (*forget_kernel)(struct lt_collector *c, size_t row);
};

/* What every event adds to: a lock's figures that only grow, summed. */
static uint64_t stat_counter_sum(const struct lt_lock_stat *v)
{
	uint64_t sum = 0;

#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) sum += v->NAME;
#include "figures.def"
	return sum;
}

static struct slot_rows lock_rows(struct lt_collector *c)
{
	return (struct slot_rows){ .states = c->locktab.lstate,
				   .n = c->locktab.n_locks,
				   .row_of = c->slots.slot_row,
				   .used = c->snap.lock_entries };
}

static struct slot_maps lock_maps(struct lt_collector *c)
{
	return (struct slot_maps){ .names = c->obj.futex->maps.lock_slots,
				   .values = c->obj.futex->maps.stat_map,
				   .free = c->obj.futex->maps.free_slots };
}

static uint64_t lock_counter_sum(const void *value)
{
	return stat_counter_sum(value);
}

static uint64_t lock_read_counter_sum(const struct lt_collector *c, size_t row)
{
	return stat_counter_sum(&c->locktab.lstate[row].raw);
}

/* A lock waited on now, or no process can reach, keeps its slot. */
static bool lock_kept(const struct lt_collector *c, size_t row)
{
	return c->locktab.lstate[row].waited || c->locktab.lstate[row].dead_at;
}

static bool lock_busy(const struct lt_collector *c, size_t row)
{
	return c->locktab.lstate[row].waited;
}

/* Its holder stays named. */
static void lock_forget(struct lt_collector *c, size_t row)
{
	struct lock_state *s = &c->locktab.lstate[row];
	__u64 holder = s->raw.last_holder;

	memset(&s->raw, 0, sizeof(s->raw));
	s->raw.last_holder = holder;
	if (c->snap.lock_entries)
		c->snap.lock_entries--;
}

/* Its name for the futex goes with the slot. */
static void lock_forget_kernel(struct lt_collector *c, size_t row)
{
	bpf_map_delete_elem(bpf_map__fd(c->obj.futex->maps.wheres),
			    &c->locktab.lstate[row].key);
}

static struct slot_rows party_rows(struct lt_collector *c)
{
	return (struct slot_rows){ .states = c->parties.party,
				   .n = c->parties.n_party,
				   .row_of = c->slots.party_row,
				   .used = c->snap.party_entries };
}

static struct slot_maps party_maps(struct lt_collector *c)
{
	return (struct slot_maps){ .names = c->obj.futex->maps.party_slots,
				   .values = c->obj.futex->maps.parties,
				   .free = c->obj.futex->maps.free_party_slots };
}

static uint64_t party_counter_sum(const void *value)
{
	const struct lt_party_stat *v = value;

	return v->count + v->ns;
}

static uint64_t party_read_counter_sum(const struct lt_collector *c, size_t row)
{
	return c->parties.party[row].count + c->parties.party[row].ns;
}

/* A party not linked to its rows is exits_forget()'s to let go. */
static bool party_kept(const struct lt_collector *c, size_t row)
{
	return !c->parties.party[row].linked;
}

static void party_forget(struct lt_collector *c, size_t row)
{
	c->parties.party[row].count = c->parties.party[row].ns = 0;
}

static struct slot_rows file_rows(struct lt_collector *c)
{
	return (struct slot_rows){ .states = c->filetab.fstate,
				   .n = c->filetab.n_files,
				   .row_of = c->slots.file_row,
				   .used = c->filetab.file_entries };
}

static struct slot_maps file_maps(struct lt_collector *c)
{
	return (struct slot_maps){ .names = c->obj.fileio->maps.file_slots,
				   .values = c->obj.fileio->maps.file_stat,
				   .free = c->obj.fileio->maps.free_file_slots };
}

static uint64_t file_counter_sum(const void *value)
{
	return files_counter_sum(value);
}

static uint64_t file_read_counter_sum(const struct lt_collector *c, size_t row)
{
	return files_counter_sum(&c->filetab.fstate[row].raw);
}

static void file_forget(struct lt_collector *c, size_t row)
{
	memset(&c->filetab.fstate[row].raw, 0,
	       sizeof(c->filetab.fstate[row].raw));
	if (c->filetab.file_entries)
		c->filetab.file_entries--;
}

#define STATE(type)                             \
	.state_size = sizeof(struct type),      \
	.key_at = offsetof(struct type, key),   \
	.slot_at = offsetof(struct type, slot), \
	.moved_at = offsetof(struct type, moved_at)

static const struct slot_kind_ops kinds[SLOT_KIND_NR] = {
	[SLOT_LOCK] = { .max = LT_MAX_LOCKS,
			.value_size = sizeof(struct lt_lock_stat),
			.high = LT_HIGH_LOCKS,
			STATE(lock_state),
			.rows = lock_rows,
			.maps = lock_maps,
			.counter_sum = lock_counter_sum,
			.read_counter_sum = lock_read_counter_sum,
			.kept = lock_kept,
			.busy = lock_busy,
			.forget = lock_forget,
			.forget_kernel = lock_forget_kernel },
	[SLOT_PARTY] = { .max = LT_MAX_PARTIES,
			 .value_size = sizeof(struct lt_party_stat),
			 .high = LT_HIGH_PARTIES,
			 STATE(party_state),
			 .rows = party_rows,
			 .maps = party_maps,
			 .counter_sum = party_counter_sum,
			 .read_counter_sum = party_read_counter_sum,
			 .kept = party_kept,
			 .forget = party_forget },
	[SLOT_FILE] = { .max = LT_MAX_FILES,
			.value_size = sizeof(struct lt_file_stat),
			.high = LT_HIGH_FILES,
			STATE(file_state),
			.rows = file_rows,
			.maps = file_maps,
			.counter_sum = file_counter_sum,
			.read_counter_sum = file_read_counter_sum,
			.forget = file_forget },
};

/* The state of a row of a kind, among its rows. */
static char *state_of(const struct slot_rows *r, enum slot_kind kind,
		      size_t row)
{
	return (char *)r->states + row * kinds[kind].state_size;
}

static const void *key_of(const struct slot_rows *r, enum slot_kind kind,
			  size_t row)
{
	return state_of(r, kind, row) + kinds[kind].key_at;
}

static __s32 *slot_of(const struct slot_rows *r, enum slot_kind kind,
		      size_t row)
{
	return (__s32 *)(state_of(r, kind, row) + kinds[kind].slot_at);
}

static uint64_t moved_at(const struct slot_rows *r, enum slot_kind kind,
			 size_t row)
{
	return *(const uint64_t *)(state_of(r, kind, row) +
				   kinds[kind].moved_at);
}

/* Zeroes a slot no name leads to and queues it as free again. */
static int queue_slot(struct lt_collector *c, enum slot_kind kind, __u32 slot)
{
	const struct slot_kind_ops *k = &kinds[kind];
	struct slot_maps m = k->maps(c);

	memset(c->slots.zero_values, 0, (size_t)c->opts.ncpus * k->value_size);
	if (bpf_map_update_elem(bpf_map__fd(m.values), &slot,
				c->slots.zero_values, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(m.free), NULL, &slot, BPF_ANY))
		return -errno; /* the slot is lost: one fewer fits */
	c->slots.slots_back[k->high]++;
	return 0;
}

/*
 * Tells the probes how many slots went back (slot_use, common.h), once
 * a read, and whether they now fold new byte ranges into their files.
 */
void reclaim_publish(struct lt_collector *c)
{
	int fd = bpf_map__fd(c->obj.futex->maps.slot_use);
	__u64 use[LT_SLOT_USE_NR] = { 0 };
	__u32 k;

	for (k = 0; k < LT_HIGH_NR; k++) {
		__u32 t = 2 * k, b = t + 1;

		bpf_map_update_elem(fd, &b, &c->slots.slots_back[k], BPF_ANY);
		if (!bpf_map_lookup_elem(fd, &t, &use[t]))
			use[b] = c->slots.slots_back[k];
	}
	c->snap.folding =
		(use[2 * LT_HIGH_LOCKS] - use[2 * LT_HIGH_LOCKS + 1]) * 100 >=
			(__u64)LT_MAX_LOCKS * LT_FOLD_AT ||
		(use[2 * LT_HIGH_PARTIES] - use[2 * LT_HIGH_PARTIES + 1]) *
				100 >=
			(__u64)LT_MAX_PARTIES * LT_FOLD_AT;
}

/*
 * Takes key's slot of the given kind back, zeroed, among the free ones.
 * Only keys no thread can reach any more go: a slot kept in a thread's
 * cache or a held range stays valid while that thread lives. Returns 0
 * when the key had a slot.
 */
int reclaim_free_slot(struct lt_collector *c, enum slot_kind kind,
		      const void *key)
{
	struct slot_maps m = kinds[kind].maps(c);
	__u32 slot;

	if (bpf_map_lookup_elem(bpf_map__fd(m.names), key, &slot) ||
	    bpf_map_delete_elem(bpf_map__fd(m.names), key))
		return -ENOENT;
	return queue_slot(c, kind, slot);
}

/* Every slot is free when the probes load. */
int reclaim_fill_slots(struct lt_collector *c)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	enum slot_kind kind;
	__u32 slot;

	for (kind = 0; kind < SLOT_KIND_NR; kind++) {
		struct slot_rows r = kinds[kind].rows(c);

		for (slot = 0; slot < kinds[kind].max; slot++)
			r.row_of[slot] = -1;
	}
	for (slot = 0; slot < LT_MAX_FILES; slot++)
		if (bpf_map_update_elem(
			    bpf_map__fd(c->obj.fileio->maps.free_file_slots),
			    NULL, &slot, BPF_ANY))
			return -errno;
	c->slots.zero_values = calloc((size_t)c->opts.ncpus, SLOT_VALUE_MAX);
	c->slots.peek = calloc((size_t)c->opts.ncpus, SLOT_VALUE_MAX);
	if (!c->slots.zero_values || !c->slots.peek)
		return -ENOMEM;
	if (bpf_prog_test_run_opts(
		    bpf_program__fd(c->obj.reader->progs.lt_fill_slots),
		    &opts) ||
	    bpf_prog_test_run_opts(
		    bpf_program__fd(c->obj.filelock->progs.lt_fill_owners),
		    &opts))
		return -errno;
	return c->obj.reader->bss->fill_failed ||
			       c->obj.filelock->bss->owners_fill_failed ?
		       -ENOSPC :
		       0;
}

/* What every event added to an idle entry's slot, as the kernel has it
 * now and as last read; false when the kernel's values cannot be read. */
static bool counter_sums(struct lt_collector *c, const struct idle_entry *e,
			 uint64_t *now, uint64_t *read)
{
	const struct slot_kind_ops *k = &kinds[e->kind];
	struct slot_maps m = k->maps(c);
	int cpu;

	if (bpf_map_lookup_elem(bpf_map__fd(m.values), &e->slot, c->slots.peek))
		return false;
	*now = 0;
	for (cpu = 0; cpu < c->opts.ncpus; cpu++)
		*now += k->counter_sum((const char *)c->slots.peek +
				       (size_t)cpu * k->value_size);
	*read = k->read_counter_sum(c, e->row);
	return true;
}

/* Every probe looks up again the slots it kept. */
static void advance_gen(struct lt_collector *c)
{
	__atomic_fetch_add(&c->obj.futex->bss->slot_gen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->obj.filelock->bss->slot_gen, 1,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->obj.fileio->bss->slot_gen, 1, __ATOMIC_RELAXED);
	usdt_follow(c);
	__atomic_fetch_add(&c->obj.spin->bss->slot_gen, 1, __ATOMIC_RELAXED);
	if (c->obj.klock)
		__atomic_fetch_add(&c->obj.klock->bss->slot_gen, 1,
				   __ATOMIC_RELAXED);
}

/* Still idle: nothing moved since the read that chose it. */
static bool still_idle(struct lt_collector *c, const struct idle_entry *e)
{
	const struct slot_kind_ops *k = &kinds[e->kind];
	struct slot_rows r = k->rows(c);

	return *slot_of(&r, e->kind, e->row) == (__s32)e->slot &&
	       moved_at(&r, e->kind, e->row) < c->slots.idle_ns &&
	       !(k->busy && k->busy(c, e->row));
}

/* Takes the name of a chosen slot out of the kernel's map; false when
 * the kernel refused. */
static bool unname(struct lt_collector *c, const struct idle_entry *e)
{
	struct slot_rows r = kinds[e->kind].rows(c);
	struct slot_maps m = kinds[e->kind].maps(c);

	return !bpf_map_delete_elem(bpf_map__fd(m.names),
				    key_of(&r, e->kind, e->row));
}

/* Puts it back; false when the key took another slot meanwhile. */
static bool name_again(struct lt_collector *c, const struct idle_entry *e)
{
	struct slot_rows r = kinds[e->kind].rows(c);
	struct slot_maps m = kinds[e->kind].maps(c);

	return !bpf_map_update_elem(bpf_map__fd(m.names),
				    key_of(&r, e->kind, e->row), &e->slot,
				    BPF_NOEXIST);
}

void reclaim_forget_row(struct lt_collector *c, enum slot_kind kind, size_t row,
			__u32 slot)
{
	struct slot_rows r = kinds[kind].rows(c);

	r.row_of[slot] = -1;
	*slot_of(&r, kind, row) = -1;
	kinds[kind].forget(c, row);
}

/* The slot is free again: zeroed, queued, and its row starts anew. */
static void release(struct lt_collector *c, const struct idle_entry *e)
{
	const struct slot_kind_ops *k = &kinds[e->kind];

	if (queue_slot(c, e->kind, e->slot))
		return;
	if (k->forget_kernel)
		k->forget_kernel(c, e->row);
	reclaim_forget_row(c, e->kind, e->row, e->slot);
}

/* Queues an idle slot to go back at the next read. */
static bool choose(struct lt_collector *c, enum slot_kind kind, size_t row,
		   __s32 slot)
{
	if (lt_grow((void **)&c->slots.idle, &c->slots.cap_idle,
		    c->slots.n_idle + 1, sizeof(*c->slots.idle)))
		return false;
	c->slots.idle[c->slots.n_idle++] = (struct idle_entry){
		.kind = kind, .row = row, .slot = (__u32)slot
	};
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

/* The fullest of the kernel's maps of slots, in percent. */
static unsigned int fill_percent(struct lt_collector *c)
{
	uint64_t most = 0, fill;
	enum slot_kind kind;

	for (kind = 0; kind < SLOT_KIND_NR; kind++) {
		fill = kinds[kind].rows(c).used * 100 / kinds[kind].max;
		if (fill > most)
			most = fill;
	}
	return (unsigned int)most;
}

/*
 * How long a slot must have been idle to go back: the retire time while
 * the maps have room, an eighth of it past half full, and two intervals
 * past three quarters, so a store that keeps meeting new byte ranges
 * (tdb's record locks at moving offsets) finds room for the next ones.
 */
static uint64_t idle_age(struct lt_collector *c, uint64_t age)
{
	uint64_t least = 2ULL * c->opts.interval_ms * 1000000ULL, cut = age;
	unsigned int fill = fill_percent(c);

	if (fill >= 75)
		cut = least;
	else if (fill >= 50)
		cut = age / 8 > least ? age / 8 : least;
	return cut < age ? cut : age;
}

/* The second read: the slots chosen and still idle go back. */
static void give_back(struct lt_collector *c)
{
	const struct timespec grace = { .tv_nsec = 2000000L };
	uint64_t now, read;
	bool any = false;
	size_t i;

	for (i = 0; i < c->slots.n_idle; i++) {
		struct idle_entry *e = &c->slots.idle[i];

		e->named = !still_idle(c, e) || !unname(c, e);
		any |= !e->named;
	}
	if (any) {
		/* A slot kept since before the names went is not used. */
		advance_gen(c);
		nanosleep(&grace, NULL);
	}
	for (i = 0; i < c->slots.n_idle; i++) {
		const struct idle_entry *e = &c->slots.idle[i];

		if (e->named)
			continue;
		if (!counter_sums(c, e, &now, &read))
			continue; /* not reached: the slot stays taken */
		if (now == read) {
			release(c, e);
			continue;
		}
		if (name_again(c, e))
			continue; /* named again: read as ever */
		c->slots.own_drops++;
		release(c, e);
	}
	c->slots.n_idle = 0;
}

/* The first read: the rows of each kind whose slots are idle for age. */
static void choose_idle(struct lt_collector *c, uint64_t age)
{
	enum slot_kind kind;
	size_t i;

	for (kind = 0; kind < SLOT_KIND_NR; kind++) {
		const struct slot_kind_ops *k = &kinds[kind];
		struct slot_rows r = k->rows(c);

		for (i = 0; i < r.n; i++) {
			__s32 slot = *slot_of(&r, kind, i);

			if (slot < 0 || (k->kept && k->kept(c, i)) ||
			    c->reading.read_ns - moved_at(&r, kind, i) < age)
				continue;
			if (!choose(c, kind, i, slot))
				break;
		}
	}
}

void reclaim_slots(struct lt_collector *c)
{
	/* Rows kept for the whole run still let idle slots go, then. */
	uint64_t age =
		(uint64_t)(c->opts.retire_s ? c->opts.retire_s : LT_RETIRE_S) *
		1000000000ULL;

	give_back(c);

	/* Nothing becomes due faster: a busy full map is not scanned on
	 * every read. */
	age = idle_age(c, age);
	if (fill_percent(c) * RECLAIM_FILL < 100 ||
	    c->reading.read_ns - c->slots.scanned_ns < age / 4)
		return;
	c->slots.scanned_ns = c->reading.read_ns;
	choose_idle(c, age);
	if (!c->slots.n_idle)
		return;
	advance_gen(c);
	c->slots.idle_ns = c->reading.read_ns;
}
