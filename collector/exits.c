// SPDX-License-Identifier: LGPL-2.1-or-later
/* Processes and threads that ended, and what only they could reach. */
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"
#include "fileio.skel.h"
#include "spin.skel.h"

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static bool is_gone(const __u32 *gone, size_t n, __u32 tgid)
{
	/* An empty set may have no array yet. */
	return n && bsearch(&tgid, gone, n, sizeof(*gone), cmp_u32) != NULL;
}

/* A private lock: a process's own futex, keyed by its tgid. */
static bool is_private(const struct lt_lock_key *k)
{
	return !k->shared &&
	       (k->kind < LT_PK_FCNTL || k->kind == LT_PK_FUTEX_COND ||
		k->kind == LT_PK_SPIN);
}

/* A private lock of a process that has ended. */
bool exits_private_gone(const struct lt_collector *c,
			const struct lt_lock_key *k)
{
	return is_private(k) &&
	       is_gone(c->exits.gone, c->exits.n_gone, (__u32)k->dev_or_tgid);
}

/* Drains the queue at qfd into *set, of n elements of size bytes,
 * sorted by cmp. */
static void take_queue(int qfd, void **set, size_t *n, size_t *cap, size_t size,
		       int (*cmp)(const void *, const void *))
{
	__u64 v;

	*n = 0;
	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &v)) {
		if (lt_grow(set, cap, *n + 1, size))
			break;
		memcpy((char *)*set + *n * size, &v, size);
		(*n)++;
	}
	if (*n)
		qsort(*set, *n, size, cmp);
}

/*
 * The processes that ended before this read began: its walk of the maps
 * sees all they ever did, so they can go once it is done. One that ends
 * during the walk waits for the next read. Likewise the threads that
 * ended while their processes went on; those of the read before are kept
 * a read longer, as a waiter woken as its holder thread ended may name
 * it a little later.
 */
void exits_take(struct lt_collector *c)
{
	__u64 *set = c->exits.stale_tids;
	size_t cap = c->exits.cap_stale_tids;

	take_queue(bpf_map__fd(c->obj.futex->maps.exited),
		   (void **)&c->exits.gone, &c->exits.n_gone,
		   &c->exits.cap_gone, sizeof(*c->exits.gone), cmp_u32);
	c->exits.stale_tids = c->exits.gone_tids;
	c->exits.n_stale_tids = c->exits.n_gone_tids;
	c->exits.cap_stale_tids = c->exits.cap_gone_tids;
	c->exits.gone_tids = set;
	c->exits.cap_gone_tids = cap;
	take_queue(bpf_map__fd(c->obj.futex->maps.ended_threads),
		   (void **)&c->exits.gone_tids, &c->exits.n_gone_tids,
		   &c->exits.cap_gone_tids, sizeof(*c->exits.gone_tids),
		   tids_order);
}

/*
 * The processes that exec'd since the last look: the maps and modules
 * kept of them are another program's, and go before any call site or
 * lock of the new one is judged by them.
 */
void exits_execs(struct lt_collector *c)
{
	int qfd = bpf_map__fd(c->obj.futex->maps.execed);
	__u32 tgid;

	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &tgid)) {
		lt_vma_cache_drop(&c->naming.vmas, (pid_t)tgid);
		lt_symbolizer_forget(c->naming.syms, (pid_t)tgid);
	}
}

/* A TID whose process ended before this read, or whose thread ended
 * before the read before. */
static bool tid_gone(const struct lt_collector *c, const struct tid_entry *t)
{
	return is_gone(c->exits.gone, c->exits.n_gone, t->tgid) ||
	       tids_ended_tgid(c->exits.stale_tids, c->exits.n_stale_tids,
			       t->tid);
}

/* The TIDs of ended processes, and of threads that ended a read ago:
 * another process may get them next. */
static void forget_tids(struct lt_collector *c)
{
	size_t i, k = 0, size;
	uint32_t *table;

	if (!c->exits.n_gone && !c->exits.n_stale_tids)
		return;
	for (i = 0; i < c->tidtab.n_tids; i++)
		if (tid_gone(c, &c->tidtab.tids[i]))
			break;
	if (i == c->tidtab.n_tids)
		return;
	table = lt_index_table(c->tidtab.n_tids, &size);
	if (!table)
		return; /* kept a while longer */
	for (i = 0; i < c->tidtab.n_tids; i++) {
		if (!tid_gone(c, &c->tidtab.tids[i]))
			c->tidtab.tids[k++] = c->tidtab.tids[i];
		else /* its name, which another thread's TID may be */
			bpf_map_delete_elem(
				bpf_map__fd(c->obj.futex->maps.thread_comms),
				&c->tidtab.tids[i].tid);
	}
	c->tidtab.n_tids = k;
	lt_index_refill(&c->tidtab.tid_ix, table, size, k, c->tidtab.tids);
	lt_shrink((void **)&c->tidtab.tids, &c->tidtab.cap_tids, k,
		  sizeof(*c->tidtab.tids));
}

/*
 * Drops from the kernel's maps what only ended processes can touch: their
 * private locks and their locks' stacks, after this read took their last
 * figures. Our rows keep the totals; a PID that comes back starts anew.
 */
static void forget_processes(struct lt_collector *c)
{
	int wfd = bpf_map__fd(c->obj.futex->maps.wheres);
	size_t i, n = c->exits.n_gone;

	if (!n)
		return;
	for (i = 0; i < c->locktab.n_locks; i++) {
		const struct lt_lock_key *k = &c->locktab.lstate[i].key;

		if (!exits_private_gone(c, k))
			continue;
		if (!reclaim_free_slot(c, SLOT_LOCK, k) && c->snap.lock_entries)
			c->snap.lock_entries--; /* in use after this read */
		c->locktab.lstate[i].slot = -1;
		bpf_map_delete_elem(wfd, k);
		/* A PID that comes back may use the same address: its
		 * entry starts from zero, and so must what it is diffed
		 * against (the histograms wrap rather than restart). */
		memset(&c->locktab.lstate[i].raw, 0,
		       sizeof(c->locktab.lstate[i].raw));
		if (!c->locktab.lstate[i].dead_at) {
			c->locktab.lstate[i].dead_at = lt_mono_ns();
			c->retire.n_dead++;
		}
	}
	/* Their locks' stacks, which the read of the stacks collected. */
	for (i = 0; i < c->exits.n_gone_stacks; i++)
		bpf_map_delete_elem(bpf_map__fd(c->obj.futex->maps.lock_stacks),
				    &c->exits.gone_stacks[i]);
	c->exits.n_gone_stacks = 0;
	for (i = 0; i < c->callsites.n_sites;) {
		if (is_gone(c->exits.gone, n, c->callsites.site_keys[i].tgid)) {
			bpf_map_delete_elem(
				bpf_map__fd(c->obj.futex->maps.sites),
				&c->callsites.site_keys[i]);
			c->callsites.site_keys[i] =
				c->callsites.site_keys[--c->callsites.n_sites];
		} else {
			i++;
		}
	}
	for (i = 0; c->obj.spin && i < c->sampler.n_spin_keys;) {
		if (is_gone(c->exits.gone, n, c->sampler.spin_keys[i].tgid)) {
			bpf_map_delete_elem(
				bpf_map__fd(c->obj.spin->maps.spin_sites),
				&c->sampler.spin_keys[i]);
			bpf_map_delete_elem(
				bpf_map__fd(c->obj.spin->maps.spin_pending),
				&c->sampler.spin_keys[i]);
			c->sampler.spin_keys[i] =
				c->sampler.spin_keys[--c->sampler.n_spin_keys];
		} else {
			i++;
		}
	}
	/* Their I/O figures and mappings; a PID that comes back starts
	 * from zero. */
	for (i = 0; i < n; i++) {
		struct proc_state key = { .tgid = c->exits.gone[i] };
		ssize_t k = lt_index_find(&c->proctab.proc_ix, &key,
					  c->proctab.pstate);

		lt_vma_cache_drop(&c->naming.vmas, (pid_t)c->exits.gone[i]);

		bpf_map_delete_elem(bpf_map__fd(c->obj.fileio->maps.proc_io),
				    &c->exits.gone[i]);
		if (k < 0)
			continue;
		memset(&c->proctab.pstate[k].io, 0,
		       sizeof(c->proctab.pstate[k].io));
		if (!c->proctab.pstate[k].dead_at) {
			c->proctab.pstate[k].dead_at = lt_mono_ns();
			c->retire.n_dead_procs++;
		}
	}
	for (i = 0; i < c->parties.n_side; i++) {
		if (c->parties.side[i].dead_at ||
		    !is_gone(c->exits.gone, n, c->parties.side[i].key.pid))
			continue;
		c->parties.side[i].dead_at = lt_mono_ns();
		c->retire.n_dead_sides++;
	}
}

/*
 * The same of ended processes, then their parties and the holder parties
 * of threads that ended in processes that go on, which are named by TID:
 * a PID or TID that comes back starts anew.
 */
void exits_forget(struct lt_collector *c)
{
	size_t i, n = c->exits.n_gone;

	forget_processes(c);
	for (i = 0; i < c->parties.n_party && (n || c->exits.n_gone_tids);
	     i++) {
		const struct lt_party_key *pk = &c->parties.party[i].key;
		bool gone = pk->role == LT_ROLE_HOLDER &&
			    tids_ended_tgid(c->exits.gone_tids,
					    c->exits.n_gone_tids, pk->tgid);

		if (!gone && n)
			gone = is_gone(c->exits.gone, n,
				       pk->role == LT_ROLE_HOLDER ?
					       (__u32)tids_tgid_of(c,
								   pk->tgid) :
					       pk->tgid) ||
			       exits_private_gone(c, &pk->lock);
		if (gone) {
			reclaim_free_slot(c, SLOT_PARTY, pk);
			/* The same key again is a new party: a reused TID
			 * may belong to another process. */
			c->parties.party[i].count = c->parties.party[i].ns = 0;
			c->parties.party[i].slot = -1;
			if (c->parties.party[i].linked)
				c->retire.n_unlinked++;
			c->parties.party[i].linked = false;
		}
	}
	forget_tids(c);
}
