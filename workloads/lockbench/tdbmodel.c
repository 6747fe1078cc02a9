// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --tdb: the fcntl locks Samba's tdb takes besides its chain and freelist
 * locks, at the offsets tdb takes them.
 *
 *   record lock  tdb_lock_record: a 1-byte F_RDLCK with F_SETLKW at the
 *                record's offset while it is read, so that no delete
 *                happens underneath; tdb_write_lock_record: a probing
 *                F_SETLK F_WRLCK there before each delete, released at
 *                once when granted. A refused probe leaves the record in
 *                its chain marked dead (table.c).
 *   open lock    tdb's OPEN_LOCK byte: F_WRLCK, held while a client opens
 *                the file.
 *   active lock  tdb's ACTIVE_LOCK byte: F_RDLCK, held from open to close.
 *
 * They stay fcntl locks whatever the chain backend is, as they do in tdb's
 * mutex mode; with --lock ofd they are OFD locks. Each lock call is
 * counted as a kernel tracer sees it: a granted call is an acquisition, a
 * refused F_SETLK a try-lock failure, and the blocking call that follows
 * a refused try (never after a probe) a wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lockbench.h"

/* docs/lockbench.md gives the header pread of each open in bytes. */
_Static_assert(sizeof(struct lb_header) == 80, "header size");

const char *const lb_tdb_lock_names[LB_TL_KINDS] = { "record", "open",
						     "active" };

/* One lock call; false only for a refused non-blocking one. */
static bool tl_fcntl(struct lb_worker *w, uint64_t off, short type, bool wait)
{
	bool ofd = w->run->cfg->lock == LB_LOCK_OFD;
	struct flock fl = { .l_type = type,
			    .l_whence = SEEK_SET,
			    .l_start = (off_t)off,
			    .l_len = 1 };
	int cmd = lb_setlk_cmd(w->run, wait);

	for (;;) {
		if (fcntl(w->fd, cmd, &fl) == 0)
			return true;
		if (errno == EINTR)
			continue;
		if (!wait && type != F_UNLCK &&
		    (errno == EAGAIN || errno == EACCES))
			return false;
		/* No cycle of waiters can form here (see table.c), so a
		 * deadlock report is the kernel's conservative detector. */
		if (wait && errno == EDEADLK) {
			sched_yield();
			continue;
		}
		lb_worker_die(w, "%s %s at offset %llu: %s",
			      ofd ? "F_OFD_SETLK" : "F_SETLK",
			      type == F_UNLCK ? "unlock" : "lock",
			      (unsigned long long)off, strerror(errno));
	}
}

static void mark_offset(struct lb_worker *w, uint64_t off)
{
	const struct lb_layout *lay = &w->run->lay;
	uint64_t i = (off - lay->pool_off) / sizeof(struct lb_record);

	w->recbits[i / 8] |= (uint8_t)(1u << (i % 8));
}

/*
 * Try first, then block, as every lockbench lock does; with --blocking
 * one blocking call, as tdb makes. A probe does not block: a refusal is
 * its answer.
 */
static bool tl_lock(struct lb_worker *w, enum lb_tdb_lock kind, uint64_t off,
		    short type, bool probe)
{
	struct lb_flstat *s = &w->st->tdb.tl[kind];
	uint64_t t0, dt;
	long vcsw;

	s->called_at = lb_now_ns();
	if (!tl_fcntl(w, off, type, w->run->cfg->blocking && !probe)) {
		s->trylock_failures++;
		if (probe)
			return false;
		vcsw = lb_thread_vcsw();
		t0 = lb_now_ns();
		s->called_at = t0;
		tl_fcntl(w, off, type, true);
		dt = lb_now_ns() - t0;
		if (lb_thread_vcsw() != vcsw)
			s->slept++;
		s->contended++;
		s->wait_ns += dt;
		if (dt > s->wait_max)
			s->wait_max = dt;
	}
	s->acquires++;
	s->held_at = lb_now_ns();
	if (kind == LB_TL_RECORD)
		mark_offset(w, off);
	return true;
}

static void tl_unlock(struct lb_worker *w, enum lb_tdb_lock kind, uint64_t off)
{
	struct lb_flstat *s = &w->st->tdb.tl[kind];

	s->hold_ns += lb_now_ns() - s->held_at;
	/* tdb unlocks with the blocking command (fcntl_unlock()). */
	tl_fcntl(w, off, F_UNLCK, w->run->cfg->blocking);
	s->hold_span_ns += lb_now_ns() - s->called_at;
}

void lb_tdb_record_lock(struct lb_worker *w, uint64_t off)
{
	tl_lock(w, LB_TL_RECORD, off, F_RDLCK, false);
	w->st->tdb.reads++;
}

void lb_tdb_record_unlock(struct lb_worker *w, uint64_t off)
{
	tl_unlock(w, LB_TL_RECORD, off);
}

/* tdb_write_lock_record, then tdb_write_unlock_record when it was granted. */
bool lb_tdb_record_probe(struct lb_worker *w, uint64_t off)
{
	w->st->tdb.probes++;
	if (!tl_lock(w, LB_TL_RECORD, off, F_WRLCK, true)) {
		w->st->tdb.refused++;
		return false;
	}
	tl_unlock(w, LB_TL_RECORD, off);
	return true;
}

/*
 * tdb_open: the open lock is held while the file is opened and its header
 * read and checked, and until the active read lock is held.
 */
void lb_tdb_open(struct lb_worker *w)
{
	const struct lb_run *run = w->run;
	struct lb_header hdr;
	struct stat st;

	w->fd = open(run->path, O_RDWR | O_CLOEXEC);
	if (w->fd < 0)
		lb_worker_die(w, "open '%s': %s", run->path, strerror(errno));
	tl_lock(w, LB_TL_OPEN, LB_OPEN_LOCK, F_WRLCK, false);
	if (pread(w->fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    hdr.magic != LB_MAGIC || fstat(w->fd, &st) ||
	    st.st_ino != run->ino || st.st_dev != run->dev)
		lb_worker_die(w, "'%s' is no longer this run's table",
			      run->path);
	tl_lock(w, LB_TL_ACTIVE, LB_ACTIVE_LOCK, F_RDLCK, false);
	tl_unlock(w, LB_TL_OPEN, LB_OPEN_LOCK);
	w->st->tdb.opens++;
}

/*
 * tdb_close leaves its locks to close(2); here the active lock is
 * released with F_UNLCK first, so that its hold ends in a lock call.
 */
void lb_tdb_close(struct lb_worker *w)
{
	tl_unlock(w, LB_TL_ACTIVE, LB_ACTIVE_LOCK);
	close(w->fd);
	w->fd = -1;
}

/* After every --reopen operations but the last: close and open again. */
void lb_tdb_maybe_reopen(struct lb_worker *w)
{
	const struct lb_config *cfg = w->run->cfg;
	uint64_t done = w->st->loops_done;

	if (cfg->reopen <= 0 || done % (uint64_t)cfg->reopen ||
	    done >= (uint64_t)cfg->loops)
		return;
	lb_tdb_close(w);
	lb_tdb_open(w);
	w->st->tdb.reopens++;
}

static void flstat_add(struct lb_flstat *to, const struct lb_flstat *from)
{
	to->acquires += from->acquires;
	to->trylock_failures += from->trylock_failures;
	to->contended += from->contended;
	to->slept += from->slept;
	to->wait_ns += from->wait_ns;
	to->hold_ns += from->hold_ns;
	to->hold_span_ns += from->hold_span_ns;
	if (from->wait_max > to->wait_max)
		to->wait_max = from->wait_max;
}

void lb_tdb_merge(struct lb_run *run)
{
	struct lb_tdbstat *t = &run->res.tdb;
	uint8_t *bits = run->recbits;

	for (long i = 0; i < run->cfg->procs; i++) {
		const struct lb_tdbstat *s = &run->ws[i].tdb;

		for (int k = 0; k < LB_TL_KINDS; k++)
			flstat_add(&t->tl[k], &s->tl[k]);
		t->reads += s->reads;
		t->probes += s->probes;
		t->refused += s->refused;
		t->dead_marked += s->dead_marked;
		t->dead_purged += s->dead_purged;
		t->opens += s->opens;
		t->reopens += s->reopens;
	}
	if (!bits)
		return;
	/* Fold every worker's bitmap into the first and count its bits. */
	for (long i = 1; i < run->cfg->procs; i++)
		for (size_t b = 0; b < run->recbits_size; b++)
			bits[b] |= bits[(size_t)i * run->recbits_size + b];
	for (size_t b = 0; b < run->recbits_size; b++)
		run->res.record_offsets +=
			(uint64_t)__builtin_popcount(bits[b]);
}

/* Everything taken with fcntl or OFD calls on the table file. */
static void file_totals(const struct lb_run *run, struct lb_flstat *f)
{
	const struct lb_result *res = &run->res;
	enum lb_lock_kind lock = run->cfg->lock;

	*f = (struct lb_flstat){ 0 };
	if (lock == LB_LOCK_FCNTL || lock == LB_LOCK_OFD) {
		/* A chain or freelist lock's refused try is always followed
		 * by a wait. */
		f->acquires = res->acquires;
		f->trylock_failures = res->contended;
		f->contended = res->contended;
		f->slept = res->slept;
		f->wait_ns = res->wait_ns;
		f->wait_max = res->wait_max;
		f->hold_ns = res->hold_ns;
		f->hold_span_ns = res->hold_span_ns;
	}
	for (int k = 0; k < LB_TL_KINDS; k++)
		flstat_add(f, &res->tdb.tl[k]);
}

void lb_tdb_report_human(const struct lb_run *run)
{
	const struct lb_tdbstat *t = &run->res.tdb;
	struct lb_flstat f;
	char a[32], b[32];

	if (!run->cfg->tdb)
		return;
	printf("tdb       record %llu acquires (%llu reads, %llu probes, %llu refused) at %llu offsets; %llu opens, %llu reopens; %llu dead left\n",
	       (unsigned long long)t->tl[LB_TL_RECORD].acquires,
	       (unsigned long long)t->reads, (unsigned long long)t->probes,
	       (unsigned long long)t->refused,
	       (unsigned long long)run->res.record_offsets,
	       (unsigned long long)t->opens, (unsigned long long)t->reopens,
	       (unsigned long long)run->res.dead_records);
	lb_format_ns(a, sizeof(a), t->tl[LB_TL_OPEN].wait_ns);
	lb_format_ns(b, sizeof(b), t->tl[LB_TL_OPEN].wait_max);
	printf("open lock %llu contended, %s waited, max %s\n",
	       (unsigned long long)t->tl[LB_TL_OPEN].contended, a, b);
	file_totals(run, &f);
	lb_format_ns(a, sizeof(a), f.wait_ns);
	lb_format_ns(b, sizeof(b), f.hold_ns);
	printf("file      fcntl locks: %llu acquires, %llu try-lock failures, %llu contended, %s waited, %s held\n",
	       (unsigned long long)f.acquires,
	       (unsigned long long)f.trylock_failures,
	       (unsigned long long)f.contended, a, b);
}

static json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static json_object *flstat_json(const struct lb_flstat *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "acquires", u64(s->acquires));
	json_object_object_add(o, "trylock_failures", u64(s->trylock_failures));
	json_object_object_add(o, "contended", u64(s->contended));
	json_object_object_add(o, "refused",
			       u64(s->trylock_failures - s->contended));
	json_object_object_add(o, "slept", u64(s->slept));
	json_object_object_add(o, "wait_ns", u64(s->wait_ns));
	json_object_object_add(o, "wait_max_ns", u64(s->wait_max));
	json_object_object_add(o, "hold_ns", u64(s->hold_ns));
	json_object_object_add(o, "hold_span_ns", u64(s->hold_span_ns));
	return o;
}

void lb_tdb_report_json(const struct lb_run *run, struct json_object *o)
{
	const struct lb_tdbstat *t = &run->res.tdb;
	static const uint64_t offsets[LB_TL_KINDS] = { 0, LB_OPEN_LOCK,
						       LB_ACTIVE_LOCK };
	json_object *rec, *l;
	struct lb_flstat f;

	json_object_object_add(o, "tdb",
			       json_object_new_boolean(run->cfg->tdb));
	json_object_object_add(
		o, "reopen",
		json_object_new_int64(run->cfg->tdb ? run->cfg->reopen : 0));
	json_object_object_add(o, "read_us",
			       json_object_new_int64(run->cfg->read_us));
	json_object_object_add(o, "opens", u64(t->opens));
	json_object_object_add(o, "reopens", u64(t->reopens));
	json_object_object_add(o, "record_offsets",
			       u64(run->res.record_offsets));
	json_object_object_add(o, "dead_marked", u64(t->dead_marked));
	json_object_object_add(o, "dead_purged", u64(t->dead_purged));
	json_object_object_add(o, "dead_records", u64(run->res.dead_records));
	rec = flstat_json(&t->tl[LB_TL_RECORD]);
	json_object_object_add(rec, "reads", u64(t->reads));
	json_object_object_add(rec, "probes", u64(t->probes));
	json_object_object_add(o, "record_locks", rec);
	for (int k = LB_TL_OPEN; k < LB_TL_KINDS; k++) {
		char name[32];

		l = flstat_json(&t->tl[k]);
		json_object_object_add(l, "offset", u64(offsets[k]));
		snprintf(name, sizeof(name), "%s_lock", lb_tdb_lock_names[k]);
		json_object_object_add(o, name, l);
	}
	file_totals(run, &f);
	json_object_object_add(o, "file_locks", flstat_json(&f));
}
