// SPDX-License-Identifier: LGPL-2.1-or-later
/* Waits in flight: the waiters now, and the deadlocks among them. */
#include <errno.h>
#include <string.h>
#include "state.h"
#include "futex.skel.h"
#include "reader.skel.h"

#define CYCLE_MIN_AGE_NS 200000000ULL /* a wait this old may be a deadlock */

static int merge_inflight(struct lt_collector *c, const void *rec)
{
	const struct lt_inflight *in = rec;
	uint64_t now = lt_mono_ns();
	struct lt_lock *l;
	ssize_t i;

	if (!in->ts || (in->lock.kind >= LT_PK_FCNTL &&
			in->lock.kind <= LT_PK_FLOCK && !in->lock.ino))
		return 0; /* a file lock call not yet inside the lock code */
	i = lt_index_find(&c->locktab.lock_ix, &in->lock, c->locktab.lstate);
	if (i < 0) {
		/* Nobody finished a wait on it yet; it is still a lock. */
		i = locks_add(c, &in->lock);
		if (i < 0)
			return (int)i;
		if (in->lock.kind <= LT_PK_FUTEX_PI ||
		    in->lock.kind == LT_PK_FUTEX_COND)
			c->locktab.locks[i].address = in->uaddr;
		if (parties_add_pid(c, (size_t)i, (pid_t)in->tgid))
			return -ENOMEM;
	}
	l = &c->locktab.locks[i];
	if (c->locktab.lstate[i].dead_at) {
		c->locktab.lstate[i].dead_at = 0;
		c->retire.n_dead--;
	}
	l->waiters_now++;
	if (!c->locktab.lstate[i].waited) {
		c->locktab.lstate[i].waited = true;
		if (push_index(&c->inflight.waited, &c->inflight.n_waited,
			       &c->inflight.cap_waited, (size_t)i))
			return -ENOMEM;
	}
	if (!in->holder || !lt_kind_is_lock(l->kind) || now < in->ts ||
	    now - in->ts < CYCLE_MIN_AGE_NS)
		return 0;
	if (lt_grow((void **)&c->inflight.edges, &c->inflight.cap_edges,
		    c->inflight.n_edges + 1, sizeof(*c->inflight.edges)))
		return -ENOMEM;
	c->inflight.edges[c->inflight.n_edges].waiter = (pid_t)in->tgid;
	c->inflight.edges[c->inflight.n_edges].holder =
		tids_tgid_of(c, in->holder);
	c->inflight.edges[c->inflight.n_edges].lock = l->id;
	c->inflight.n_edges++;
	return 0;
}

/* The first edge waiter w waits by, or NULL. */
static const struct lt_wait_edge *edge_from(const struct lt_wait_edge *edges,
					    size_t n, pid_t w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (edges[i].waiter == w)
			return &edges[i];
	return NULL;
}

/* Whether pid is a member of one of the n deadlocks in found. */
static bool cycle_known(const struct lt_deadlock *found, size_t n, pid_t pid)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < found[i].n; j++)
			if (found[i].pids[j] == pid)
				return true;
	return false;
}

/*
 * The walk from edge e: true when it returns to its start with two
 * members or more, which d then holds; *lowest is its lowest PID.
 */
static bool walk(const struct lt_wait_edge *edges, size_t n,
		 const struct lt_wait_edge *e, struct lt_deadlock *d,
		 pid_t *lowest)
{
	pid_t start = e->waiter, at = start;
	size_t k;

	memset(d, 0, sizeof(*d));
	*lowest = start;
	for (k = 0; k < LT_CYCLE_MAX; k++) {
		d->pids[d->n] = at;
		d->locks[d->n] = e->lock;
		d->n++;
		if (at < *lowest)
			*lowest = at;
		at = e->holder;
		if (at == start || at <= 0)
			break;
		e = edge_from(edges, n, at);
		if (!e)
			break;
	}
	return at == start && d->n >= 2;
}

/*
 * Each process waits on few locks, so walks that take each process's
 * first edge find the cycles that matter.
 */
size_t lt_find_cycles(const struct lt_wait_edge *edges, size_t n,
		      struct lt_deadlock *out, size_t max)
{
	struct lt_deadlock d;
	size_t i, found = 0;
	pid_t lowest;

	for (i = 0; i < n; i++) {
		if (!walk(edges, n, &edges[i], &d, &lowest) ||
		    cycle_known(out, found, lowest))
			continue;
		if (found == max)
			return max + 1;
		out[found++] = d;
	}
	return found;
}

/* The deadlocks among this read's waits, their members named. */
static void find_deadlocks(struct lt_collector *c)
{
	size_t n, i, k;

	n = lt_find_cycles(c->inflight.edges, c->inflight.n_edges,
			   c->inflight.deadlocks, c->inflight.cap_deadlocks);
	while (n > c->inflight.cap_deadlocks &&
	       !lt_grow((void **)&c->inflight.deadlocks,
			&c->inflight.cap_deadlocks, n,
			sizeof(*c->inflight.deadlocks)))
		n = lt_find_cycles(c->inflight.edges, c->inflight.n_edges,
				   c->inflight.deadlocks,
				   c->inflight.cap_deadlocks);
	c->inflight.n_deadlocks =
		n > c->inflight.cap_deadlocks ? c->inflight.cap_deadlocks : n;
	for (i = 0; i < c->inflight.n_deadlocks; i++)
		for (k = 0; k < c->inflight.deadlocks[i].n; k++)
			lt_proc_comm(bpf_map__fd(c->obj.futex->maps.comms),
				     c->inflight.deadlocks[i].pids[k],
				     c->inflight.deadlocks[i].comms[k]);
}

int inflight_read(struct lt_collector *c)
{
	size_t i;
	int err;

	for (i = 0; i < c->inflight.n_waited; i++) {
		c->locktab.locks[c->inflight.waited[i]].waiters_now = 0;
		c->locktab.lstate[c->inflight.waited[i]].waited = false;
	}
	c->inflight.n_waited = 0;
	c->inflight.n_edges = 0;
	err = mapio_run_reader(c, c->obj.reader->progs.lt_read_waits,
			       c->obj.wait_out, sizeof(*c->obj.wait_out),
			       &c->obj.reader->bss->n_waits, merge_inflight);
	if (err)
		return err;
	find_deadlocks(c);
	return 0;
}
