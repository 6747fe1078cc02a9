// SPDX-License-Identifier: LGPL-2.1-or-later
/* Threads' processes, by TID: from /proc once, or from the threads' exits. */
#include <stdlib.h>
#include "state.h"

int tids_order(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a >> 32, y = *(const __u64 *)b >> 32;

	return x < y ? -1 : x > y;
}

pid_t tids_ended_tgid(const __u64 *set, size_t n, __u32 tid)
{
	__u64 key = (__u64)tid << 32;
	const __u64 *e;

	if (!n)
		return 0;
	e = bsearch(&key, set, n, sizeof(*set), tids_order);
	return e ? (pid_t)(__u32)*e : 0;
}

pid_t tids_tgid_of(struct lt_collector *c, __u32 tid)
{
	struct tid_entry key = { .tid = tid };
	ssize_t i;
	pid_t tgid;

	i = lt_index_find(&c->tidtab.tid_ix, &key, c->tidtab.tids);
	if (i >= 0)
		return c->tidtab.tids[i].tgid;
	tgid = lt_proc_tgid((pid_t)tid);
	if (tgid <= 0) {
		/* A thread that ended lately is known by its exit. */
		tgid = tids_ended_tgid(c->exits.gone_tids, c->exits.n_gone_tids,
				       tid);
		if (!tgid)
			tgid = tids_ended_tgid(c->exits.stale_tids,
					       c->exits.n_stale_tids, tid);
		return tgid ? tgid :
			      (pid_t)tid; /* else a pid: the best guess */
	}
	if (!lt_grow((void **)&c->tidtab.tids, &c->tidtab.cap_tids,
		     c->tidtab.n_tids + 1, sizeof(*c->tidtab.tids))) {
		c->tidtab.tids[c->tidtab.n_tids].tid = tid;
		c->tidtab.tids[c->tidtab.n_tids].tgid = tgid;
		if (!lt_index_add(&c->tidtab.tid_ix, c->tidtab.n_tids,
				  c->tidtab.tids))
			c->tidtab.n_tids++;
	}
	return tgid;
}
