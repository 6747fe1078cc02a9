// SPDX-License-Identifier: LGPL-2.1-or-later
/* The read, as a list of steps, and the housekeeping between reads. */
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"
#include "filelock.skel.h"
#include "fileio.skel.h"
#include "spin.skel.h"
#include "reader.skel.h"
#include "klock.skel.h"

static void swap_lists(size_t **a, size_t *na, size_t *capa, size_t **b,
		       size_t *nb, size_t *capb)
{
	size_t *l = *a, n = *na, cap = *capa;

	*a = *b;
	*na = *nb;
	*capa = *capb;
	*b = l;
	*nb = n;
	*capb = cap;
}

_Static_assert(LT_DROP_NR == LT_DROP_SLOT_RETURN &&
		       LT_DROP_REASONS == LT_DROP_NR + 1,
	       "the collector's drop reasons follow the probes'");

/* ---- the read ---- */

/* Waits that end from here on belong to the next interval's max. */
static void new_epoch(struct lt_collector *c)
{
	c->reading.read_ns = lt_mono_ns();
	__atomic_fetch_add(&c->obj.futex->bss->epoch, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->obj.filelock->bss->epoch, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->obj.fileio->bss->epoch, 1, __ATOMIC_RELAXED);
	if (c->obj.klock)
		__atomic_fetch_add(&c->obj.klock->bss->epoch, 1,
				   __ATOMIC_RELAXED);
	usdt_follow(c);
	__atomic_fetch_add(&c->obj.spin->bss->epoch, 1, __ATOMIC_RELAXED);
}

/* When this read is, and the interval it closes. */
static void stamp_times(struct lt_collector *c)
{
	uint64_t now = lt_mono_ns(), wall = lt_wall_ns();

	c->snap.time = wall / 1e9;
	c->snap.interval_s = (now - c->reading.last_read_ns) / 1e9;
	c->snap.elapsed_s = (now - c->reading.opened_ns) / 1e9;
	c->reading.last_read_ns = now;
}

/*
 * A moving lock's delta is rewritten whole; the locks that moved last
 * time and not now are cleared after the read (clear_quiet()).
 */
static void clear_deltas(struct lt_collector *c)
{
	size_t i;

	c->reading.reads++;
	swap_lists(&c->locktab.live, &c->locktab.n_live, &c->locktab.cap_live,
		   &c->locktab.was_live, &c->locktab.n_was_live,
		   &c->locktab.cap_was_live);
	c->locktab.n_live = 0;
	memset(c->snap.kind_delta, 0, sizeof(c->snap.kind_delta));
	for (i = 0; i < c->proctab.n_procs; i++)
		memset(&c->proctab.procs[i].delta, 0,
		       sizeof(c->proctab.procs[i].delta));
	for (i = 0; i < c->filetab.n_files; i++)
		memset(&c->filetab.files[i].delta, 0,
		       sizeof(c->filetab.files[i].delta));
	memset(c->snap.io_hist_delta, 0, sizeof(c->snap.io_hist_delta));
}

/* The kernel's maps, one after the other; the first error stops it. */
static int read_maps(struct lt_collector *c)
{
	int err;

	err = locks_read(c);
	c->snap.lock_entries = c->obj.reader->bss->visited;
	c->snap.lock_capacity = LT_MAX_LOCKS;
	c->snap.file_capacity = LT_MAX_FILES;
	if (!err)
		err = parties_read(c);
	c->snap.party_entries = c->obj.reader->bss->parties_visited;
	c->snap.party_capacity = LT_MAX_PARTIES;
	if (!err)
		err = parties_read_io(c);
	if (!err)
		parties_rename(c);
	if (!err)
		err = inflight_read(c);
	if (!err)
		err = spin_threads_read(c);
	spin_sampler_read(c);
	kspin_read(c);
	if (!err && c->opts.stacks)
		err = stacks_read(c);
	if (!err)
		err = files_read(c);
	return err;
}

/* The locks that moved last time and not now: their deltas go to zero. */
static void clear_quiet(struct lt_collector *c)
{
	size_t i;

	for (i = 0; i < c->locktab.n_was_live; i++) {
		struct lock_state *s =
			&c->locktab.lstate[c->locktab.was_live[i]];

		if (s->live == c->reading.reads)
			continue;
		memset(&c->locktab.locks[c->locktab.was_live[i]].delta, 0,
		       sizeof(c->locktab.locks[0].delta));
		s->wait_moved = s->hold_moved = 0;
	}
}

/* Idle locks cost nothing here: only new ones, and those to be named
 * again (names_lock() says), which stay for the next read. */
static void name_fresh(struct lt_collector *c)
{
	size_t i, kept = 0, row;

	for (i = 0; i < c->locktab.n_fresh; i++) {
		row = c->locktab.fresh[i];
		if (!c->locktab.lstate[row].named)
			names_lock(c, row);
		if (!c->locktab.lstate[row].named)
			c->locktab.fresh[kept++] = row;
	}
	c->locktab.n_fresh = kept;
}

/* The last holder of each moving lock, named when it changed; one that
 * cannot hold it leaves the last that could. */
static void name_holders(struct lt_collector *c)
{
	size_t i;

	for (i = 0; i < c->locktab.n_live; i++) {
		struct lt_lock *l = &c->locktab.locks[c->locktab.live[i]];
		struct lock_state *s = &c->locktab.lstate[c->locktab.live[i]];

		__u32 tid = (__u32)s->raw.last_holder;
		pid_t pid;

		if (!tid || s->raw.last_holder == s->shown_holder)
			continue;
		s->shown_holder = s->raw.last_holder;
		pid = tids_tgid_of(c, tid);
		if (!parties_may_hold(c, c->locktab.live[i], pid))
			continue;
		l->holder = pid;
		lt_proc_comm(bpf_map__fd(c->obj.futex->maps.comms), l->holder,
			     l->holder_comm);
		l->holder_tid = 0;
		l->holder_thread[0] = '\0';
		/* A futex's holder is a thread: a word's owner, a waker. */
		if (l->kind == LT_KIND_FUTEX || l->kind == LT_KIND_FUTEX_PI) {
			l->holder_tid = (pid_t)tid;
			parties_thread_name(c, pid, (pid_t)tid,
					    l->holder_thread);
		}
	}
}

/* The events lost, by the probes and while slots went back. */
static void count_drops(struct lt_collector *c)
{
	uint64_t raw[LT_DROP_REASONS];
	unsigned int r;

	/* The probes' drops so far, by reason; a reason that cannot be read
	 * keeps its last figure. */
	memcpy(raw, c->reading.drops_raw, sizeof(raw));
	mapio_counter_sums(c, bpf_map__fd(c->obj.futex->maps.drops), LT_DROP_NR,
			   raw);
	raw[LT_DROP_SLOT_RETURN] = c->slots.own_drops;
	c->snap.drops_delta = 0;
	for (r = 0; r < LT_DROP_REASONS; r++) {
		c->snap.drop_delta[r] = diff(raw[r], c->reading.drops_raw[r]);
		c->snap.drop_total[r] += c->snap.drop_delta[r];
		c->snap.drops_delta += c->snap.drop_delta[r];
		c->reading.drops_raw[r] = raw[r];
	}
	c->snap.drops_total += c->snap.drops_delta;
}

/* The snapshot's rows and lists, as this read left them. */
static int fill_snap(struct lt_collector *c)
{
	c->snap.n_procs = c->proctab.n_procs;
	c->snap.procs = c->proctab.procs;
	c->snap.n_files = c->filetab.n_files;
	c->snap.file_entries = c->filetab.file_entries;
	c->snap.files = c->filetab.files;
	c->snap.n_probes = PROBE_NR;
	c->snap.probes = c->cost.probes;
	c->snap.n_deadlocks = c->inflight.n_deadlocks;
	c->snap.deadlocks = c->inflight.deadlocks;
	return locksites_build(c); /* the locks too */
}

int lt_collector_read(struct lt_collector *c, const struct lt_snapshot **snap)
{
	int err;

	new_epoch(c);
	usdt_scan(c); /* a server started since */
	exits_take(c);
	lt_collector_housekeep(c);
	stamp_times(c);
	clear_deltas(c);
	err = read_maps(c);
	if (err) {
		lt_vma_cache_next_read(&c->naming.vmas);
		return err;
	}
	clear_quiet(c);
	usdt_rename(c); /* relations' names learned since */
	name_fresh(c);
	name_holders(c);
	/* Last: the naming above may still need what the dead left. */
	exits_forget(c);
	reclaim_slots(c);
	reclaim_publish(c);
	retire_rows(c);
	lt_vma_cache_next_read(&c->naming.vmas);
	lt_symbolizer_prune(c->naming.syms);
	count_drops(c);
	cost_read(c);
	err = fill_snap(c);
	*snap = &c->snap;
	return err;
}

/* ---- between reads ---- */

/* The reads start from now. */
void read_start(struct lt_collector *c)
{
	c->reading.opened_ns = lt_mono_ns();
	c->reading.last_read_ns = c->reading.opened_ns;
}

void lt_collector_housekeep(struct lt_collector *c)
{
	cost_window_close(c);
	cost_window_retry(c);
	exits_execs(c);
	sites_judge(c);
	spin_judge(c);
	spin_pace(c);
	if (c->opts.stacks)
		stacks_resolve(c);
}

void lt_collector_set_interval(struct lt_collector *c, unsigned int ms)
{
	c->opts.interval_ms = ms ? ms : 1000;
}
