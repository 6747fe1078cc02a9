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
	i = lt_index_find(&c->lock_ix, &in->lock, c->lstate);
	if (i < 0) {
		/* Nobody finished a wait on it yet; it is still a lock. */
		i = locks_add(c, &in->lock);
		if (i < 0)
			return (int)i;
		if (in->lock.kind <= LT_PK_FUTEX_PI ||
		    in->lock.kind == LT_PK_FUTEX_COND)
			c->locks[i].address = in->uaddr;
		if (parties_add_pid(c, (size_t)i, (pid_t)in->tgid))
			return -ENOMEM;
	}
	l = &c->locks[i];
	if (c->lstate[i].dead_at) {
		c->lstate[i].dead_at = 0;
		c->n_dead--;
	}
	l->waiters_now++;
	if (!c->lstate[i].waited) {
		c->lstate[i].waited = true;
		if (push_index(&c->waited, &c->n_waited, &c->cap_waited,
			       (size_t)i))
			return -ENOMEM;
	}
	if (!in->holder || !lt_kind_is_lock(l->kind) || now < in->ts ||
	    now - in->ts < CYCLE_MIN_AGE_NS)
		return 0;
	if (lt_grow((void **)&c->edges, &c->cap_edges, c->n_edges + 1,
		    sizeof(*c->edges)))
		return -ENOMEM;
	c->edges[c->n_edges].waiter = (pid_t)in->tgid;
	c->edges[c->n_edges].holder = tids_tgid_of(c, in->holder);
	c->edges[c->n_edges].lock = l->id;
	c->n_edges++;
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

	n = lt_find_cycles(c->edges, c->n_edges, c->deadlocks,
			   c->cap_deadlocks);
	while (n > c->cap_deadlocks &&
	       !lt_grow((void **)&c->deadlocks, &c->cap_deadlocks, n,
			sizeof(*c->deadlocks)))
		n = lt_find_cycles(c->edges, c->n_edges, c->deadlocks,
				   c->cap_deadlocks);
	c->n_deadlocks = n > c->cap_deadlocks ? c->cap_deadlocks : n;
	for (i = 0; i < c->n_deadlocks; i++)
		for (k = 0; k < c->deadlocks[i].n; k++)
			lt_proc_comm(bpf_map__fd(c->futex->maps.comms),
				     c->deadlocks[i].pids[k],
				     c->deadlocks[i].comms[k]);
}

int inflight_read(struct lt_collector *c)
{
	size_t i;
	int err;

	for (i = 0; i < c->n_waited; i++) {
		c->locks[c->waited[i]].waiters_now = 0;
		c->lstate[c->waited[i]].waited = false;
	}
	c->n_waited = 0;
	c->n_edges = 0;
	err = mapio_run_reader(c, c->reader->progs.lt_read_waits, c->wait_out,
			       sizeof(*c->wait_out), &c->reader->bss->n_waits,
			       merge_inflight);
	if (err)
		return err;
	find_deadlocks(c);
	return 0;
}
