// SPDX-License-Identifier: LGPL-2.1-or-later
/* Waits in flight: the waiters now, and the deadlocks among them. */
#include <errno.h>
#include <string.h>
#include "room.h"
#include "reader.skel.h"

#define CYCLE_MIN_AGE_NS 200000000ULL /* a wait this old may be a deadlock */

static int merge_inflight(struct lt_collector *c, const void *rec)
{
	const struct lt_inflight *in = rec;
	uint64_t now = mono_ns();
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
	c->edges[c->n_edges].holder = parties_tgid_of(c, in->holder);
	c->edges[c->n_edges].lock = l->id;
	c->n_edges++;
	return 0;
}

static const struct edge *edge_from(const struct lt_collector *c, pid_t w,
				    size_t skip)
{
	size_t i;

	for (i = 0; i < c->n_edges; i++)
		if (c->edges[i].waiter == w && !skip--)
			return &c->edges[i];
	return NULL;
}

static bool cycle_known(const struct lt_collector *c, pid_t lowest)
{
	size_t i, j;

	for (i = 0; i < c->n_deadlocks; i++)
		for (j = 0; j < c->deadlocks[i].n; j++)
			if (c->deadlocks[i].pids[j] == lowest)
				return true;
	return false;
}

/*
 * Follows waiter -> holder from each waiter; returning to the start is a
 * deadlock. Each process waits on few locks, so a walk that takes each
 * process's first edge finds the cycles that matter.
 */
static void find_cycles(struct lt_collector *c)
{
	struct lt_deadlock d;
	size_t i, k;

	c->n_deadlocks = 0;
	for (i = 0; i < c->n_edges; i++) {
		pid_t start = c->edges[i].waiter, at = start, lowest = start;
		const struct edge *e = &c->edges[i];

		memset(&d, 0, sizeof(d));
		for (k = 0; k < LT_CYCLE_MAX; k++) {
			d.pids[d.n] = at;
			d.locks[d.n] = e->lock;
			d.n++;
			if (at < lowest)
				lowest = at;
			at = e->holder;
			if (at == start || at <= 0)
				break;
			e = edge_from(c, at, 0);
			if (!e)
				break;
		}
		if (at != start || d.n < 2 || cycle_known(c, lowest))
			continue;
		if (lt_grow((void **)&c->deadlocks, &c->cap_deadlocks,
			    c->n_deadlocks + 1, sizeof(*c->deadlocks)))
			return;
		for (k = 0; k < d.n; k++)
			locks_read_comm(c, d.pids[k], d.comms[k]);
		c->deadlocks[c->n_deadlocks++] = d;
	}
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
	err = read_run_reader(c, c->reader->progs.lt_read_waits, c->wait_out,
			      sizeof(*c->wait_out), &c->reader->bss->n_waits,
			      merge_inflight);
	if (err)
		return err;
	find_cycles(c);
	return 0;
}
