// SPDX-License-Identifier: GPL-2.0-or-later
/* pmdalocktop's instance domains and what their instances stand for. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent.h"
#include "instname.h"

static pmdaInstid kind_insts[LT_KIND_NR];
static pmdaInstid hist_insts[LT_HIST_BUCKETS];
static pmdaInstid drop_insts[LT_DROP_REASONS];
static char hist_names[LT_HIST_BUCKETS][48];

pmdaIndom indomtab[N_INDOMS] = {
	[LOCK_INDOM] = { LOCK_INDOM, 0, NULL },
	[KIND_INDOM] = { KIND_INDOM, LT_KIND_NR, kind_insts },
	[PROC_INDOM] = { PROC_INDOM, 0, NULL },
	[FILE_INDOM] = { FILE_INDOM, 0, NULL },
	[PROBE_INDOM] = { PROBE_INDOM, 0, NULL },
	[HIST_INDOM] = { HIST_INDOM, LT_HIST_BUCKETS, hist_insts },
	[DROP_INDOM] = { DROP_INDOM, LT_DROP_REASONS, drop_insts },
};

void init_indoms(void)
{
	int i;

	for (i = 0; i < LT_KIND_NR; i++) {
		kind_insts[i].i_inst = i;
		kind_insts[i].i_name = (char *)lt_kind_name(i);
	}
	for (i = 0; i < LT_HIST_BUCKETS; i++) {
		ltpm_bucket_name(i, hist_names[i], sizeof(hist_names[i]));
		hist_insts[i].i_inst = i;
		hist_insts[i].i_name = hist_names[i];
	}
	for (i = 0; i < LT_DROP_REASONS; i++) {
		drop_insts[i].i_inst = i;
		drop_insts[i].i_name = (char *)lt_drop_name(i);
	}
}

static int refs_push(struct inst_refs *r, int inst, const void *ptr)
{
	if (lt_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
		return -ENOMEM;
	r->v[r->n].inst = inst;
	r->v[r->n].ptr = ptr;
	r->n++;
	return 0;
}

static int ref_cmp(const void *x, const void *y)
{
	const struct inst_ref *p = x, *q = y;

	return (p->inst > q->inst) - (p->inst < q->inst);
}

static void refs_sort(struct inst_refs *r)
{
	if (r->n) /* v may still be NULL, which qsort() must not get */
		qsort(r->v, r->n, sizeof(*r->v), ref_cmp);
}

const void *refs_find(const struct inst_refs *r, unsigned int inst)
{
	struct inst_ref key = { .inst = (int)inst };
	const struct inst_ref *hit;

	if (!r->n)
		return NULL;
	hit = bsearch(&key, r->v, r->n, sizeof(*r->v), ref_cmp);
	return hit ? hit->ptr : NULL;
}

static pmInDom indom_of(int serial)
{
	return indomtab[serial].it_indom;
}

/* The instances each refresh made active, per domain: the others are
 * hidden after it (see ltpm_hide_stale()). */
static int *live[N_INDOMS];
static size_t n_live[N_INDOMS], cap_live[N_INDOMS];

static int activate(int serial, const char *base, const void *key, int keylen,
		    const char *const *tags, size_t n_tags)
{
	int inst = ltpm_activate(indom_of(serial), base, key, keylen, tags,
				 n_tags);

	if (inst >= 0 && !lt_grow((void **)&live[serial], &cap_live[serial],
				  n_live[serial] + 1, sizeof(int)))
		live[serial][n_live[serial]++] = inst;
	return inst;
}

/* The entry of inst among the first n of r, or NULL. */
static struct inst_ref *refs_lookup(struct inst_refs *r, size_t n, int inst)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r->v[i].inst == inst)
			return &r->v[i];
	return NULL;
}

static void refresh_locks(void)
{
	const struct ltpm_model *m = &agent.model;
	char key[LT_NAME_LEN + 16], pidtag[32], idtag[32];
	const char *tags[] = { pidtag, idtag };
	struct inst_ref *seen;
	struct lt_lock *sum;
	size_t i, n_merged = 0;
	int inst;

	agent.locks.n = 0;
	/* Room for every sum up front: the refs point into it. */
	lt_grow((void **)&agent.merged, &agent.cap_merged, m->n_locks,
		sizeof(*agent.merged));
	agent.other_inst =
		activate(LOCK_INDOM, "other", "\001other", 6, NULL, 0);
	for (i = 0; i < m->n_locks; i++) {
		const struct lt_lock *l = m->locks[i];
		int klen;

		/* The kind is part of the identity: a futex word can be both. */
		klen = snprintf(key, sizeof(key), "%s|%s",
				lt_kind_name(l->kind),
				l->key[0] ? l->key : l->name);
		if (klen >= (int)sizeof(key))
			klen = sizeof(key) - 1;
		snprintf(pidtag, sizeof(pidtag), "pid:%d",
			 l->n_pids ? (int)l->pids[0] : 0);
		snprintf(idtag, sizeof(idtag), "id:%llu",
			 (unsigned long long)l->id);
		inst = activate(LOCK_INDOM, l->name[0] ? l->name : "?", key,
				klen, tags, 2);
		if (inst < 0) {
			pmNotifyErr(LOG_WARNING, "no instance for lock %s: %s",
				    l->name, pmErrStr(inst));
			continue;
		}
		/* A lock of the same kind and name: one instance, summed. */
		seen = refs_lookup(&agent.locks, agent.locks.n, inst);
		if (seen && seen->ptr >= (const void *)agent.merged &&
		    seen->ptr < (const void *)(agent.merged + n_merged)) {
			ltpm_lock_add((struct lt_lock *)seen->ptr, l);
			continue;
		}
		if (seen && n_merged < agent.cap_merged) {
			sum = &agent.merged[n_merged++];
			*sum = *(const struct lt_lock *)seen->ptr;
			ltpm_lock_add(sum, l);
			seen->ptr = sum;
			continue;
		}
		if (seen)
			continue; /* no room to sum: the first one stands */
		if (refs_push(&agent.locks, inst, l))
			break;
	}
	refs_sort(&agent.locks);
}

static void refresh_procs(void)
{
	const struct ltpm_model *m = &agent.model;
	char name[LT_COMM_SIZE + 32];
	size_t i;
	int inst;

	agent.procs.n = 0;
	for (i = 0; i < m->n_procs; i++) {
		const struct lt_proc *p = m->procs[i];
		int32_t key = p->pid;

		/* "PID comm", as PCP's own process domains name them. */
		snprintf(name, sizeof(name), "%06d %s", (int)p->pid, p->comm);
		inst = activate(PROC_INDOM, name, &key, sizeof(key), NULL, 0);
		if (inst < 0) {
			/* A reused PID: the old process's entry gives way. */
			char *old = NULL;

			snprintf(name, sizeof(name), "%06d", (int)p->pid);
			if (pmdaCacheLookupName(indom_of(PROC_INDOM), name,
						NULL, NULL) >= 0 &&
			    pmdaCacheLookupName(indom_of(PROC_INDOM), name,
						&inst, NULL) >= 0 &&
			    pmdaCacheLookup(indom_of(PROC_INDOM), inst, &old,
					    NULL) >= 0 &&
			    old)
				pmdaCacheStore(indom_of(PROC_INDOM),
					       PMDA_CACHE_CULL, old, NULL);
			snprintf(name, sizeof(name), "%06d %s", (int)p->pid,
				 p->comm);
			inst = activate(PROC_INDOM, name, &key, sizeof(key),
					NULL, 0);
		}
		if (inst >= 0 && refs_push(&agent.procs, inst, p))
			break;
	}
	refs_sort(&agent.procs);
}

static void refresh_files(void)
{
	const struct ltpm_model *m = &agent.model;
	char tag[48];
	const char *tags[] = { tag };
	size_t i;
	int inst;

	agent.files.n = 0;
	for (i = 0; i < m->n_files; i++) {
		const struct lt_file *f = m->files[i];
		uint64_t key[2] = { f->dev, f->ino };

		snprintf(tag, sizeof(tag), "ino:%llu",
			 (unsigned long long)f->ino);
		inst = activate(FILE_INDOM, f->name[0] ? f->name : "?", key,
				sizeof(key), tags, 1);
		if (inst >= 0 && refs_push(&agent.files, inst, f))
			break;
	}
	refs_sort(&agent.files);
}

static void refresh_probes(void)
{
	const struct lt_snapshot *s = agent.snap;
	size_t i;
	int inst;

	agent.probes.n = 0;
	for (i = 0; s && i < s->n_probes; i++) {
		const struct lt_probe_cost *p = &s->probes[i];
		char name[sizeof(p->name) + 1];

		snprintf(name, sizeof(name), "%.*s", (int)sizeof(p->name),
			 p->name);
		inst = activate(PROBE_INDOM, name[0] ? name : "?", name,
				(int)strlen(name), NULL, 0);
		if (inst >= 0 && refs_push(&agent.probes, inst, p))
			break;
	}
	refs_sort(&agent.probes);
}

void refresh_all(void)
{
	static const int cached[] = { LOCK_INDOM, PROC_INDOM, FILE_INDOM,
				      PROBE_INDOM };
	size_t i;

	for (i = 0; i < sizeof(cached) / sizeof(cached[0]); i++)
		n_live[cached[i]] = 0;
	refresh_locks();
	refresh_procs();
	refresh_files();
	refresh_probes();
	for (i = 0; i < sizeof(cached) / sizeof(cached[0]); i++)
		ltpm_hide_stale(indom_of(cached[i]), live[cached[i]],
				n_live[cached[i]]);
}

void purge_old(void)
{
	if (ms_until(&agent.next_purge) > 0)
		return;
	after_ms(&agent.next_purge, PURGE_S * 1000 / 4);
	pmdaCachePurge(indom_of(LOCK_INDOM), PURGE_S);
	pmdaCachePurge(indom_of(PROC_INDOM), PURGE_S);
	pmdaCachePurge(indom_of(FILE_INDOM), PURGE_S);
}
