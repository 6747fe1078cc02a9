// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The shared hash table: chains of fixed-size records, a freelist, and a
 * per-chain undo journal that makes every update atomic with respect to
 * a worker killed while it holds the chain lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lockbench.h"

_Static_assert(sizeof(struct lb_record) == 64, "record size");
_Static_assert(sizeof(struct lb_journal) == 128, "journal size");
_Static_assert(sizeof(struct lb_header) <= LB_HEADER_SIZE, "header size");

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

int lb_layout_compute(const struct lb_config *cfg, struct lb_layout *lay)
{
	uint64_t h = (uint64_t)cfg->hash;

	lay->keys = cfg->keys > 0 ? (uint64_t)cfg->keys : h * 4;
	if (lay->keys > UINT32_MAX)
		lay->keys = UINT32_MAX;
	lay->nlocks = h + 1;
	lay->lock_off = LB_HEADER_SIZE;
	lay->head_off =
		align_up(lay->lock_off + lay->nlocks * LB_LOCK_SLOT, 64);
	lay->journal_off = align_up(lay->head_off + h * 8, 64);
	lay->pool_off = align_up(
		lay->journal_off + h * sizeof(struct lb_journal), 4096);
	/*
	 * Live records never exceed the key space; on top of that each
	 * worker may hold one allocation in flight, and each injected kill
	 * may strand one until its chain is repaired.
	 */
	lay->nrecords = lay->keys + (uint64_t)cfg->procs +
			(uint64_t)cfg->kill_holder + 8;
	/* --tdb: room for the records left dead while they were read. */
	if (cfg->tdb)
		lay->nrecords += (uint64_t)cfg->procs;
	lay->size = align_up(
		lay->pool_off + lay->nrecords * sizeof(struct lb_record), 4096);
	return 0;
}

static uint32_t key_chain(const struct lb_layout *lay, uint32_t key)
{
	uint32_t h = key * 0x9e3779b1u;

	h ^= h >> 15;
	h *= 0x85ebca77u;
	h ^= h >> 13;
	return h % (uint32_t)(lay->nlocks - 1);
}

static uint32_t record_csum(const struct lb_record *r)
{
	uint32_t h = 2166136261u;
	uint32_t hdr[3] = { r->key, r->chain, r->len };
	const uint8_t *p = (const uint8_t *)hdr;
	uint32_t len = r->len > LB_DATA_MAX ? LB_DATA_MAX : r->len;

	for (size_t i = 0; i < sizeof(hdr); i++)
		h = (h ^ p[i]) * 16777619u;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ r->data[i]) * 16777619u;
	return h;
}

void lb_table_format(struct lb_run *run)
{
	const struct lb_layout *lay = &run->lay;
	struct lb_header *hdr = (struct lb_header *)run->map;

	*hdr = (struct lb_header){
		.magic = LB_MAGIC,
		.version = LB_VERSION,
		.lock_kind = run->cfg->lock,
		.hash = lay->nlocks - 1,
		.nrecords = lay->nrecords,
		.lock_off = lay->lock_off,
		.head_off = lay->head_off,
		.journal_off = lay->journal_off,
		.pool_off = lay->pool_off,
		.size = lay->size,
		.free_head = lay->pool_off,
	};
	for (uint64_t i = 0; i < lay->nrecords; i++) {
		struct lb_record *r =
			(struct lb_record *)(run->map + lay->pool_off) + i;

		r->next = i + 1 < lay->nrecords ?
				  lay->pool_off + (i + 1) * sizeof(*r) :
				  0;
	}
}

static bool rec_off_valid(const struct lb_layout *lay, uint64_t off)
{
	return off >= lay->pool_off && off < lay->size &&
	       (off - lay->pool_off) % sizeof(struct lb_record) == 0 &&
	       (off - lay->pool_off) / sizeof(struct lb_record) < lay->nrecords;
}

static bool rec_dead(const struct lb_record *r)
{
	return r->chain & LB_REC_DEAD;
}

static uint64_t read_u64(struct lb_worker *w, uint64_t off)
{
	uint64_t v;

	lb_io_read(w, off, &v, sizeof(v));
	return v;
}

static void write_u64(struct lb_worker *w, uint64_t off, uint64_t v)
{
	lb_io_write(w, off, &v, sizeof(v));
}

static uint64_t head_off(const struct lb_layout *lay, uint32_t chain)
{
	return lay->head_off + (uint64_t)chain * 8;
}

static uint64_t journal_off(const struct lb_layout *lay, uint32_t chain)
{
	return lay->journal_off + (uint64_t)chain * sizeof(struct lb_journal);
}

static void journal_clear(struct lb_worker *w, uint32_t chain)
{
	uint32_t idle = LB_JOURNAL_IDLE;

	lb_io_write(w, journal_off(&w->run->lay, chain), &idle, sizeof(idle));
}

/* Returns 0 when the freelist lock could not be had (the run is aborting). */
static uint64_t rec_alloc(struct lb_worker *w)
{
	uint64_t off = offsetof(struct lb_header, free_head);
	uint64_t r;

	if (lb_lock_acquire(w, 0))
		return 0;
	r = read_u64(w, off);
	if (!rec_off_valid(&w->run->lay, r))
		lb_worker_die(w, "freelist %s (head %llu)",
			      r ? "corrupt" : "exhausted",
			      (unsigned long long)r);
	write_u64(w, off, read_u64(w, r + offsetof(struct lb_record, next)));
	lb_lock_release(w, 0);
	w->st->allocs++;
	return r;
}

static int rec_free(struct lb_worker *w, uint64_t r)
{
	uint64_t off = offsetof(struct lb_header, free_head);
	struct lb_record rec = { .next = 0 };

	if (lb_lock_acquire(w, 0))
		return -1;
	rec.next = read_u64(w, off);
	lb_io_write(w, r, &rec, sizeof(rec));
	write_u64(w, off, r);
	lb_lock_release(w, 0);
	if (!w->direct)
		w->st->frees++;
	return 0;
}

void lb_table_repair_chain(struct lb_worker *w, uint32_t chain)
{
	const struct lb_layout *lay = &w->run->lay;
	struct lb_journal j;

	lb_io_read(w, journal_off(lay, chain), &j, sizeof(j));
	if (j.state != LB_JOURNAL_ACTIVE)
		return;
	if ((j.flags & LB_J_REC) && rec_off_valid(lay, j.rec_off))
		lb_io_write(w, j.rec_off, &j.rec_old, sizeof(j.rec_old));
	if (j.flags & LB_J_HEAD)
		write_u64(w, head_off(lay, chain), j.head_before);
	if (j.new_rec && rec_off_valid(lay, j.new_rec))
		rec_free(w, j.new_rec);
	journal_clear(w, chain);
	if (w->direct)
		w->run->res.check_repairs++;
	else
		w->st->repairs++;
}

/*
 * The injected kill lands here: chain lock held, journal written, the
 * chain already changed, the commit not yet made.
 */
static void kill_point(struct lb_worker *w)
{
	const struct lb_wstats *st = w->st;
	uint64_t due;

	if (st->kill_done >= st->kill_plan)
		return;
	/* This slot's kills fall evenly over its loops. */
	due = (uint64_t)w->run->cfg->loops * (st->kill_done + 1) /
	      (st->kill_plan + 1);
	if (st->loops_done < due)
		return;
	__atomic_store_n(&w->st->at_kill_point, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

struct found {
	uint64_t off;
	uint64_t prev;
	struct lb_record rec;
};

static bool chain_find(struct lb_worker *w, uint32_t chain, uint32_t key,
		       struct found *f)
{
	const struct lb_layout *lay = &w->run->lay;
	uint64_t off = read_u64(w, head_off(lay, chain));
	uint64_t prev = 0, steps = 0;

	while (off) {
		if (!rec_off_valid(lay, off) || ++steps > lay->nrecords)
			lb_worker_die(w, "chain %u is corrupt at offset %llu",
				      chain, (unsigned long long)off);
		lb_io_read(w, off, &f->rec, sizeof(f->rec));
		if (f->rec.key == key && !rec_dead(&f->rec)) {
			f->off = off;
			f->prev = prev;
			return true;
		}
		prev = off;
		off = f->rec.next;
	}
	f->off = 0;
	return false;
}

static void record_fill(struct lb_record *r, uint32_t key, uint32_t chain,
			const uint8_t *data, uint32_t len)
{
	r->key = key;
	r->chain = chain;
	r->len = len;
	memset(r->data, 0, sizeof(r->data));
	memcpy(r->data, data, len);
	r->csum = record_csum(r);
}

static int chain_insert(struct lb_worker *w, uint32_t chain, uint32_t op,
			uint32_t key, const uint8_t *data, uint32_t len)
{
	const struct lb_layout *lay = &w->run->lay;
	uint64_t head = read_u64(w, head_off(lay, chain));
	struct lb_journal j = { .state = LB_JOURNAL_ACTIVE,
				.op = op,
				.flags = LB_J_HEAD,
				.key = key,
				.head_before = head };
	struct lb_record rec = { .next = head };
	uint64_t r = rec_alloc(w);

	if (!r)
		return -1;
	j.new_rec = r;
	lb_io_write(w, journal_off(lay, chain), &j, sizeof(j));
	record_fill(&rec, key, chain, data, len);
	lb_io_write(w, r, &rec, sizeof(rec));
	write_u64(w, head_off(lay, chain), r);
	kill_point(w);
	journal_clear(w, chain);
	w->st->inserts++;
	return 0;
}

/* Rewrite the record f found with rec, under the journal. */
static void rec_rewrite(struct lb_worker *w, uint32_t chain, uint32_t op,
			const struct found *f, const struct lb_record *rec)
{
	const struct lb_layout *lay = &w->run->lay;
	struct lb_journal j = { .state = LB_JOURNAL_ACTIVE,
				.op = op,
				.flags = LB_J_REC,
				.key = f->rec.key,
				.rec_off = f->off,
				.rec_old = f->rec };

	lb_io_write(w, journal_off(lay, chain), &j, sizeof(j));
	lb_io_write(w, f->off, rec, sizeof(*rec));
	journal_clear(w, chain);
}

static void chain_update(struct lb_worker *w, uint32_t chain, uint32_t op,
			 const struct found *f, const uint8_t *data,
			 uint32_t len)
{
	struct lb_record rec = f->rec;

	record_fill(&rec, f->rec.key, chain, data, len);
	rec_rewrite(w, chain, op, f, &rec);
}

/*
 * --tdb: a delete whose probe was refused (a reader holds the record's
 * lock) leaves the record in its chain marked dead, as tdb_do_delete
 * does. The key is gone all the same: lookups pass dead records over.
 */
static void mark_dead(struct lb_worker *w, uint32_t chain, uint32_t op,
		      const struct found *f)
{
	struct lb_record rec = f->rec;

	rec.chain |= LB_REC_DEAD;
	rec.csum = record_csum(&rec);
	rec_rewrite(w, chain, op, f, &rec);
	w->st->tdb.dead_marked++;
	w->st->deletes++;
}

/*
 * A value that outgrows its record moves to a new one, as in tdb, whose
 * records are sized for the value they were written with: allocate, link
 * the new record at the head, unlink the old one, free it. That is what
 * makes the freelist lock as busy as tdb's.
 */
static int chain_replace(struct lb_worker *w, uint32_t chain, uint32_t op,
			 const struct found *f, const uint8_t *data,
			 uint32_t len)
{
	const struct lb_layout *lay = &w->run->lay;
	uint64_t head = read_u64(w, head_off(lay, chain));
	struct lb_journal j = { .state = LB_JOURNAL_ACTIVE,
				.op = op,
				.flags = LB_J_HEAD,
				.key = f->rec.key,
				.head_before = head };
	struct lb_record rec = { .next = 0 };
	uint64_t r = rec_alloc(w);

	if (!r)
		return -1;
	j.new_rec = r;
	if (f->prev) {
		j.flags |= LB_J_REC;
		j.rec_off = f->prev;
		lb_io_read(w, f->prev, &j.rec_old, sizeof(j.rec_old));
	}
	lb_io_write(w, journal_off(lay, chain), &j, sizeof(j));
	/* The old record is the head: the new one takes its place. */
	rec.next = f->prev ? head : f->rec.next;
	record_fill(&rec, f->rec.key, chain, data, len);
	lb_io_write(w, r, &rec, sizeof(rec));
	write_u64(w, head_off(lay, chain), r);
	if (f->prev)
		write_u64(w, f->prev + offsetof(struct lb_record, next),
			  f->rec.next);
	kill_point(w);
	journal_clear(w, chain);
	return rec_free(w, f->off);
}

/* In place while the value still fits the space it had, else moved. */
static int chain_store(struct lb_worker *w, uint32_t chain, uint32_t op,
		       const struct found *f, const uint8_t *data, uint32_t len)
{
	/* tdb deletes the old record, with its probe, and inserts anew. */
	if (len > f->rec.len && w->run->cfg->tdb &&
	    !lb_tdb_record_probe(w, f->off)) {
		mark_dead(w, chain, op, f);
		return chain_insert(w, chain, op, f->rec.key, data, len);
	}
	if (len > f->rec.len)
		return chain_replace(w, chain, op, f, data, len);
	chain_update(w, chain, op, f, data, len);
	return 0;
}

/* Unlink and free a record; counted as a delete unless it was dead. */
static int chain_unlink(struct lb_worker *w, uint32_t chain,
			const struct found *f)
{
	const struct lb_layout *lay = &w->run->lay;
	struct lb_journal j = { .state = LB_JOURNAL_ACTIVE,
				.op = LB_OP_DELETE,
				.key = f->rec.key };
	struct lb_record prev;

	if (f->prev) {
		lb_io_read(w, f->prev, &prev, sizeof(prev));
		j.flags = LB_J_REC;
		j.rec_off = f->prev;
		j.rec_old = prev;
		lb_io_write(w, journal_off(lay, chain), &j, sizeof(j));
		write_u64(w, f->prev + offsetof(struct lb_record, next),
			  f->rec.next);
	} else {
		j.flags = LB_J_HEAD;
		j.head_before = f->off;
		lb_io_write(w, journal_off(lay, chain), &j, sizeof(j));
		write_u64(w, head_off(lay, chain), f->rec.next);
	}
	kill_point(w);
	journal_clear(w, chain);
	if (rec_dead(&f->rec))
		w->st->tdb.dead_purged++;
	else
		w->st->deletes++;
	return rec_free(w, f->off);
}

static int chain_delete(struct lb_worker *w, uint32_t chain,
			const struct found *f)
{
	if (w->run->cfg->tdb && !lb_tdb_record_probe(w, f->off)) {
		mark_dead(w, chain, LB_OP_DELETE, f);
		return 0;
	}
	return chain_unlink(w, chain, f);
}

/*
 * --tdb: before a delete, the chain's dead records whose probe is granted
 * now are unlinked and freed, as tdb_delete_hash purges dead records;
 * those still being read stay for a later delete.
 */
static int purge_dead(struct lb_worker *w, uint32_t chain)
{
	const struct lb_layout *lay = &w->run->lay;
	uint64_t off = read_u64(w, head_off(lay, chain));
	uint64_t prev = 0, steps = 0;
	struct found f;

	while (off) {
		if (!rec_off_valid(lay, off) || ++steps > lay->nrecords)
			lb_worker_die(w, "chain %u is corrupt at offset %llu",
				      chain, (unsigned long long)off);
		lb_io_read(w, off, &f.rec, sizeof(f.rec));
		f.off = off;
		f.prev = prev;
		off = f.rec.next;
		if (!rec_dead(&f.rec) || !lb_tdb_record_probe(w, f.off))
			prev = f.off;
		else if (chain_unlink(w, chain, &f))
			return -1;
	}
	return 0;
}

/*
 * --tdb: the record is read under tdb_lock_record's read lock, taken
 * before the chain lock is dropped, as tdb reads a record it traverses to:
 * a delete meanwhile finds its probe refused and leaves the record dead.
 */
static void fetch_record(struct lb_worker *w, uint32_t chain,
			 const struct found *f)
{
	struct lb_record rec;

	lb_tdb_record_lock(w, f->off);
	lb_lock_release(w, chain + 1);
	lb_io_read(w, f->off, &rec, sizeof(rec));
	lb_busy_wait_us(w->run->cfg->read_us);
	if (rec.key != f->rec.key)
		lb_worker_die(w, "record %llu changed under its read lock",
			      (unsigned long long)f->off);
	lb_tdb_record_unlock(w, f->off);
}

static void check_journal(struct lb_worker *w, uint32_t chain)
{
	uint32_t state;

	if (w->run->cfg->no_repair)
		return;
	lb_io_read(w, journal_off(&w->run->lay, chain), &state, sizeof(state));
	if (state == LB_JOURNAL_ACTIVE)
		lb_table_repair_chain(w, chain);
}

/*
 * One tdbtorture-style operation on a random key. Returns non-zero only
 * when the run is being aborted.
 */
int lb_table_op(struct lb_worker *w)
{
	const struct lb_config *cfg = w->run->cfg;
	const struct lb_layout *lay = &w->run->lay;
	uint64_t r = lb_rand(&w->rng);
	unsigned pct = (unsigned)(r % 100);
	uint32_t key = (uint32_t)(lb_rand(&w->rng) % lay->keys);
	uint32_t chain = key_chain(lay, key);
	uint8_t val[LB_DATA_MAX];
	uint32_t len = 1 + (uint32_t)(lb_rand(&w->rng) % 24);
	enum lb_op op;
	struct found f;
	bool ok = true;
	int ret = 0;

	if (pct < 40)
		op = LB_OP_FETCH;
	else if (pct < 65)
		op = LB_OP_STORE;
	else if (pct < 80)
		op = LB_OP_DELETE;
	else if (pct < 90)
		op = LB_OP_APPEND;
	else
		op = LB_OP_LOCKSTORE;
	for (uint32_t i = 0; i < len; i++)
		val[i] = (uint8_t)lb_rand(&w->rng);

	if (lb_lock_acquire(w, chain + 1))
		return -1;
	check_journal(w, chain);
	lb_busy_wait_us(cfg->hold_us);
	if (cfg->tdb && op == LB_OP_DELETE && purge_dead(w, chain))
		return -1;

	switch (op) {
	case LB_OP_FETCH:
		ok = chain_find(w, chain, key, &f);
		break;
	case LB_OP_STORE:
		if (chain_find(w, chain, key, &f))
			ret = chain_store(w, chain, op, &f, val, len);
		else
			ret = chain_insert(w, chain, op, key, val, len);
		break;
	case LB_OP_DELETE:
		ok = chain_find(w, chain, key, &f);
		if (ok)
			ret = chain_delete(w, chain, &f);
		break;
	case LB_OP_APPEND:
		if (chain_find(w, chain, key, &f)) {
			uint8_t buf[LB_DATA_MAX];
			uint32_t old = f.rec.len;

			/* A full record starts over rather than growing. */
			if (old + len > LB_DATA_MAX)
				old = 0;
			memcpy(buf, f.rec.data, old);
			memcpy(buf + old, val, len);
			ret = chain_store(w, chain, op, &f, buf, old + len);
		} else {
			ret = chain_insert(w, chain, op, key, val, len);
		}
		break;
	case LB_OP_LOCKSTORE: {
		/* Read-modify-write of a counter, atomic under the chain lock. */
		uint64_t count = 0;
		uint8_t buf[sizeof(count)];

		if (chain_find(w, chain, key, &f)) {
			if (f.rec.len == sizeof(count))
				memcpy(&count, f.rec.data, sizeof(count));
			count++;
			memcpy(buf, &count, sizeof(count));
			ret = chain_store(w, chain, op, &f, buf, sizeof(buf));
		} else {
			count = 1;
			memcpy(buf, &count, sizeof(count));
			ret = chain_insert(w, chain, op, key, buf, sizeof(buf));
		}
		break;
	}
	default:
		break;
	}
	if (ret)
		return ret;
	if (cfg->tdb && op == LB_OP_FETCH && ok)
		fetch_record(w, chain, &f);
	else
		lb_lock_release(w, chain + 1);

	w->st->ops[op]++;
	if (ok)
		w->st->ok++;
	return 0;
}

static bool bit_test_set(uint8_t *bits, uint64_t i)
{
	bool was = bits[i / 8] & (1u << (i % 8));

	bits[i / 8] |= (uint8_t)(1u << (i % 8));
	return was;
}

/* A journal still active is rolled back, unless --no-repair. */
static void check_journals(struct lb_run *run, struct lb_worker *w)
{
	struct lb_result *res = &run->res;

	for (uint32_t c = 0; c < run->lay.nlocks - 1; c++) {
		struct lb_journal j;

		lb_io_read(w, journal_off(&run->lay, c), &j, sizeof(j));
		if (j.state == LB_JOURNAL_IDLE)
			continue;
		if (j.state != LB_JOURNAL_ACTIVE)
			lb_result_error(res, "chain %u: journal state %u", c,
					j.state);
		else if (run->cfg->no_repair)
			lb_result_error(
				res, "chain %u: torn %s left unrepaired", c,
				j.op < LB_OPS ? lb_op_names[j.op] : "update");
		else
			lb_table_repair_chain(w, c);
	}
}

/* One record of chain c; a dead one holds no key. */
static void check_record(struct lb_run *run, uint32_t c, uint64_t off,
			 const struct lb_record *r, uint8_t *keys)
{
	const struct lb_layout *lay = &run->lay;
	struct lb_result *res = &run->res;
	uint32_t rc = r->chain & ~LB_REC_DEAD;

	if (rc != c || key_chain(lay, r->key) != c)
		lb_result_error(res, "chain %u: key %u belongs to chain %u", c,
				r->key, key_chain(lay, r->key));
	else if (r->key >= lay->keys ||
		 (!rec_dead(r) && bit_test_set(keys, r->key)))
		lb_result_error(res,
				"chain %u: key %u duplicated or out of range",
				c, r->key);
	if (r->len == 0 || r->len > LB_DATA_MAX || r->csum != record_csum(r))
		lb_result_error(
			res,
			"chain %u: record %llu (key %u) fails its checksum", c,
			(unsigned long long)off, r->key);
	if (rec_dead(r) && !run->cfg->tdb)
		lb_result_error(res, "chain %u: record %llu is marked dead", c,
				(unsigned long long)off);
}

static void check_chain(struct lb_run *run, struct lb_worker *w, uint32_t c,
			uint8_t *used, uint8_t *keys)
{
	const struct lb_layout *lay = &run->lay;
	struct lb_result *res = &run->res;
	uint64_t off = read_u64(w, head_off(lay, c)), steps = 0, i;
	struct lb_record r;

	while (off) {
		if (!rec_off_valid(lay, off)) {
			lb_result_error(res, "chain %u: bad record offset %llu",
					c, (unsigned long long)off);
			break;
		}
		i = (off - lay->pool_off) / sizeof(r);
		if (bit_test_set(used, i) || ++steps > lay->nrecords) {
			lb_result_error(res,
					"chain %u: record %llu reached twice",
					c, (unsigned long long)off);
			break;
		}
		lb_io_read(w, off, &r, sizeof(r));
		if (rec_dead(&r))
			res->dead_records++;
		else
			res->records++;
		check_record(run, c, off, &r, keys);
		off = r.next;
	}
}

static void check_freelist(struct lb_run *run, struct lb_worker *w,
			   uint8_t *used)
{
	const struct lb_layout *lay = &run->lay;
	struct lb_result *res = &run->res;
	uint64_t off = read_u64(w, offsetof(struct lb_header, free_head)), i;

	while (off) {
		if (!rec_off_valid(lay, off)) {
			lb_result_error(res, "freelist: bad offset %llu",
					(unsigned long long)off);
			break;
		}
		i = (off - lay->pool_off) / sizeof(struct lb_record);
		if (bit_test_set(used, i)) {
			lb_result_error(
				res,
				"freelist: record %llu is also in use or listed twice",
				(unsigned long long)off);
			break;
		}
		res->free_records++;
		off = read_u64(w, off + offsetof(struct lb_record, next));
	}
}

/*
 * The full check, run by the parent once every worker has ended. It
 * first finishes what a dead holder left behind (as the next locker would
 * have), then walks every chain and the freelist. Dead records (--tdb)
 * are neither live nor free.
 */
void lb_table_check(struct lb_run *run)
{
	const struct lb_layout *lay = &run->lay;
	struct lb_result *res = &run->res;
	struct lb_worker w = {
		.run = run, .idx = UINT_MAX, .fd = run->fd, .direct = true
	};
	uint8_t *used = calloc(lay->nrecords / 8 + 1, 1);
	uint8_t *keys = calloc(lay->keys / 8 + 1, 1);
	uint64_t all, expect;

	if (!used || !keys) {
		lb_result_error(res, "out of memory for the check");
		goto out;
	}
	lb_locks_check(run, &w);
	if (res->stuck)
		goto out;
	check_journals(run, &w);
	for (uint32_t c = 0; c < lay->nlocks - 1; c++)
		check_chain(run, &w, c, used, keys);
	check_freelist(run, &w, used);

	all = res->records + res->dead_records + res->free_records;
	if (all != lay->nrecords)
		lb_result_error(
			res,
			"%llu records are neither in a chain nor free (leaked)",
			(unsigned long long)(lay->nrecords - all));
	expect = res->inserts - res->deletes;
	if (res->records != expect)
		lb_result_error(
			res,
			"table holds %llu records, but %llu inserts - %llu deletes = %llu",
			(unsigned long long)res->records,
			(unsigned long long)res->inserts,
			(unsigned long long)res->deletes,
			(unsigned long long)expect);
out:
	free(used);
	free(keys);
}
