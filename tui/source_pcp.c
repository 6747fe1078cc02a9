// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The PCP source: pmdalocktop's metrics from a pmcd (--host) or from a
 * pmlogger archive (--archive), turned back into snapshots, so that the
 * same screen and the same batch output show them.
 *
 * Counters become deltas between two fetches and totals since the first
 * one; instants are taken as they are. Metrics beyond the contract's
 * names are used when the agent offers them and left at 0 when not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <pcp/pmapi.h>
#include "metrics.h"
#include "pcp_snapshot.h"
#include "source.h"

/* A metric of pmdalocktop's table, and where its values go. */
struct metric {
	enum ltpm_metric_id id; /* its row in ltpm_metrics[] */
	enum group group;
	int slot; /* a number slot, or a string slot when string */
	bool string;
	bool required; /* its absence means there is no agent */
};

_Static_assert(LT_TOP_PARTIES == LTPM_PARTY_RANKS,
	       "the agent exports every holder and waiter a lock keeps");

static const struct metric metrics[] = {
/* The agent has at least a lock's waits. */
#define LT_FIGURE_ROW(NAME, PCP)                   \
	{ LTPM_##PCP, G_LOCK, S_FIG_##NAME, false, \
	  LTPM_##PCP == LTPM_L_WAIT_COUNT || LTPM_##PCP == LTPM_L_WAIT_TIME },
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) LT_FIGURE_ROW(NAME, PCP)
#define LT_DERIVED(NAME, JSON, PCP, RECORD) LT_FIGURE_ROW(NAME, PCP)
#include "figures.def"
#undef LT_FIGURE_ROW
	{ LTPM_L_WAIT_MAX, G_LOCK, S_WAIT_MAX, false, false },
	{ LTPM_L_HOLD_MAX, G_LOCK, S_HOLD_MAX, false, false },
	{ LTPM_L_WAITERS, G_LOCK, S_WAITERS, false, false },
	{ LTPM_L_SPINNING, G_LOCK, S_SPINNING, false, false },
	{ LTPM_L_HOLDER, G_LOCK, S_HOLDER, false, false },
	{ LTPM_L_HOLDER_TID, G_LOCK, S_HOLDER_TID, false, false },
	{ LTPM_L_ID, G_LOCK, S_ID, false, false },
	{ LTPM_L_ADDRESS, G_LOCK, S_ADDRESS, false, false },
	{ LTPM_L_DEV, G_LOCK, S_DEV, false, false },
	{ LTPM_L_INO, G_LOCK, S_INO, false, false },
	{ LTPM_L_START, G_LOCK, S_START, false, false },
	{ LTPM_L_END, G_LOCK, S_END, false, false },
	{ LTPM_L_PID, G_LOCK, S_PID, false, false },
	{ LTPM_L_SITE_PROCS, G_LOCK, S_SITE_PROCS, false, false },
	{ LTPM_L_KIND, G_LOCK, T_KIND, true, false },
	{ LTPM_L_HOLDER_COMM, G_LOCK, T_HOLDER_COMM, true, false },
	{ LTPM_L_HOLDER_THREAD, G_LOCK, T_HOLDER_THREAD, true, false },
	{ LTPM_L_KEY, G_LOCK, T_KEY, true, false },
	{ LTPM_L_COMM, G_LOCK, T_COMM, true, false },
	{ LTPM_L_PIDS, G_LOCK, T_PIDS, true, false },
	{ LTPM_L_HOLDERS, G_LOCK, T_HOLDERS, true, false },
	{ LTPM_L_WAITED_BY, G_LOCK, T_WAITERS, true, false },
	{ LTPM_L_STACK, G_LOCK, T_STACK, true, false },
	{ LTPM_L_KERNEL_TYPE, G_LOCK, T_KERNEL_TYPE, true, false },
	{ LTPM_L_CALLER, G_LOCK, T_CALLER, true, false },
	{ LTPM_PA_NHOLDERS, G_LOCK, S_NHOLDERS, false, false },
	{ LTPM_PA_NWAITERS, G_LOCK, S_NWAITERS, false, false },
	{ LTPM_PA_H1_PID, G_LOCK, PARTY_SLOT(0, 0, P_PID), false, false },
	{ LTPM_PA_H1_COMM, G_LOCK, PARTY_COMM(0, 0), true, false },
	{ LTPM_PA_H1_COUNT, G_LOCK, PARTY_SLOT(0, 0, P_COUNT), false, false },
	{ LTPM_PA_H1_TIME, G_LOCK, PARTY_SLOT(0, 0, P_NS), false, false },
	{ LTPM_PA_H1_TID, G_LOCK, HOLDER_TID(0), false, false },
	{ LTPM_PA_H1_THREAD, G_LOCK, HOLDER_THREAD(0), true, false },
	{ LTPM_PA_H2_PID, G_LOCK, PARTY_SLOT(0, 1, P_PID), false, false },
	{ LTPM_PA_H2_COMM, G_LOCK, PARTY_COMM(0, 1), true, false },
	{ LTPM_PA_H2_COUNT, G_LOCK, PARTY_SLOT(0, 1, P_COUNT), false, false },
	{ LTPM_PA_H2_TIME, G_LOCK, PARTY_SLOT(0, 1, P_NS), false, false },
	{ LTPM_PA_H2_TID, G_LOCK, HOLDER_TID(1), false, false },
	{ LTPM_PA_H2_THREAD, G_LOCK, HOLDER_THREAD(1), true, false },
	{ LTPM_PA_H3_PID, G_LOCK, PARTY_SLOT(0, 2, P_PID), false, false },
	{ LTPM_PA_H3_COMM, G_LOCK, PARTY_COMM(0, 2), true, false },
	{ LTPM_PA_H3_COUNT, G_LOCK, PARTY_SLOT(0, 2, P_COUNT), false, false },
	{ LTPM_PA_H3_TIME, G_LOCK, PARTY_SLOT(0, 2, P_NS), false, false },
	{ LTPM_PA_H3_TID, G_LOCK, HOLDER_TID(2), false, false },
	{ LTPM_PA_H3_THREAD, G_LOCK, HOLDER_THREAD(2), true, false },
	{ LTPM_PA_H4_PID, G_LOCK, PARTY_SLOT(0, 3, P_PID), false, false },
	{ LTPM_PA_H4_COMM, G_LOCK, PARTY_COMM(0, 3), true, false },
	{ LTPM_PA_H4_COUNT, G_LOCK, PARTY_SLOT(0, 3, P_COUNT), false, false },
	{ LTPM_PA_H4_TIME, G_LOCK, PARTY_SLOT(0, 3, P_NS), false, false },
	{ LTPM_PA_H4_TID, G_LOCK, HOLDER_TID(3), false, false },
	{ LTPM_PA_H4_THREAD, G_LOCK, HOLDER_THREAD(3), true, false },
	{ LTPM_PA_W1_PID, G_LOCK, PARTY_SLOT(1, 0, P_PID), false, false },
	{ LTPM_PA_W1_COMM, G_LOCK, PARTY_COMM(1, 0), true, false },
	{ LTPM_PA_W1_COUNT, G_LOCK, PARTY_SLOT(1, 0, P_COUNT), false, false },
	{ LTPM_PA_W1_TIME, G_LOCK, PARTY_SLOT(1, 0, P_NS), false, false },
	{ LTPM_PA_W2_PID, G_LOCK, PARTY_SLOT(1, 1, P_PID), false, false },
	{ LTPM_PA_W2_COMM, G_LOCK, PARTY_COMM(1, 1), true, false },
	{ LTPM_PA_W2_COUNT, G_LOCK, PARTY_SLOT(1, 1, P_COUNT), false, false },
	{ LTPM_PA_W2_TIME, G_LOCK, PARTY_SLOT(1, 1, P_NS), false, false },
	{ LTPM_PA_W3_PID, G_LOCK, PARTY_SLOT(1, 2, P_PID), false, false },
	{ LTPM_PA_W3_COMM, G_LOCK, PARTY_COMM(1, 2), true, false },
	{ LTPM_PA_W3_COUNT, G_LOCK, PARTY_SLOT(1, 2, P_COUNT), false, false },
	{ LTPM_PA_W3_TIME, G_LOCK, PARTY_SLOT(1, 2, P_NS), false, false },
	{ LTPM_PA_W4_PID, G_LOCK, PARTY_SLOT(1, 3, P_PID), false, false },
	{ LTPM_PA_W4_COMM, G_LOCK, PARTY_COMM(1, 3), true, false },
	{ LTPM_PA_W4_COUNT, G_LOCK, PARTY_SLOT(1, 3, P_COUNT), false, false },
	{ LTPM_PA_W4_TIME, G_LOCK, PARTY_SLOT(1, 3, P_NS), false, false },
	{ LTPM_K_WAIT_COUNT, G_KIND, S_FIG_waits, false, false },
	{ LTPM_K_WAIT_TIME, G_KIND, S_FIG_wait_ns, false, false },
	{ LTPM_P_WAIT_COUNT, G_PROC, S_FIG_waits, false, false },
	{ LTPM_P_WAIT_TIME, G_PROC, S_FIG_wait_ns, false, false },
	{ LTPM_P_IO_COUNT, G_PROC, S_IO_COUNT, false, false },
	{ LTPM_P_IO_TIME, G_PROC, S_IO_NS, false, false },
	{ LTPM_P_TOP_LOCK, G_PROC, S_TOP_LOCK, false, false },
	{ LTPM_F_IO_COUNT, G_FILE, S_IO_COUNT, false, false },
	{ LTPM_F_IO_BYTES, G_FILE, S_IO_BYTES, false, false },
	{ LTPM_F_IO_TIME, G_FILE, S_IO_NS, false, false },
	{ LTPM_F_IO_UNDER_LOCK, G_FILE, S_FIG_io_under_lock_ns, false, false },
	{ LTPM_F_READS, G_FILE, S_READS, false, false },
	{ LTPM_F_WRITES, G_FILE, S_WRITES, false, false },
	{ LTPM_F_READ_BYTES, G_FILE, S_READ_BYTES, false, false },
	{ LTPM_F_WRITE_BYTES, G_FILE, S_WRITE_BYTES, false, false },
	{ LTPM_F_DEV, G_FILE, S_DEV, false, false },
	{ LTPM_F_INO, G_FILE, S_INO, false, false },
	{ LTPM_PR_EVENTS, G_AGENT, S_EVENTS, false, false },
	{ LTPM_PR_DROPS, G_AGENT, S_DROPS, false, false },
	{ LTPM_PR_NS_PER_EVENT, G_AGENT, S_NS_PER_EVENT, false, false },
	{ LTPM_PR_CPU, G_AGENT, S_CPU, false, false },
	{ LTPM_A_DEADLOCKS, G_AGENT, S_DEADLOCKS, false, false },
	{ LTPM_PR_LOCK_ENTRIES, G_AGENT, S_LOCK_ENTRIES, false, false },
	{ LTPM_PR_LOCK_CAPACITY, G_AGENT, S_LOCK_CAPACITY, false, false },
	{ LTPM_PR_FILE_ENTRIES, G_AGENT, S_FILE_ENTRIES, false, false },
	{ LTPM_PR_FILE_CAPACITY, G_AGENT, S_FILE_CAPACITY, false, false },
	{ LTPM_PR_PARTY_ENTRIES, G_AGENT, S_PARTY_ENTRIES, false, false },
	{ LTPM_PR_PARTY_CAPACITY, G_AGENT, S_PARTY_CAPACITY, false, false },
	{ LTPM_PR_FOLDING, G_AGENT, S_FOLDING, false, false },
	{ LTPM_C_IO, G_AGENT, S_IO_TRACED, false, false },
	{ LTPM_A_CYCLES, G_AGENT, T_CYCLES, true, false },
	{ LTPM_PR_PROG_RUNS, G_PROG, S_RUNS, false, false },
	{ LTPM_PR_PROG_TIME, G_PROG, S_RUN_NS, false, false },
	{ LTPM_H_IO, G_HIST, S_COUNT, false, false },
};

#define N_METRICS (sizeof(metrics) / sizeof(*metrics))

struct source {
	int ctx;
	bool archive;
	char what[256];
	pmID pmids[N_METRICS];
	pmDesc descs[N_METRICS];
	int fetch_idx[N_METRICS]; /* metric of each fetched pmid */
	pmID fetch_ids[N_METRICS];
	int n_fetch;
	struct table tables[G_NR];
	unsigned int gen;
	double first_ts, last_ts;
	unsigned int delta_ms;
	struct pcp_snap out;
};

/* ---- tables ---- */

static size_t hash_int(int v, size_t cap)
{
	return ((uint32_t)v * 2654435761u) & (cap - 1);
}

static int table_rehash(struct table *t)
{
	size_t cap = t->hash_cap ? t->hash_cap * 2 : 256, i, h;
	int *hash = calloc(cap, sizeof(*hash));

	if (!hash)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		for (h = hash_int(t->ents[i].inst, cap); hash[h];
		     h = (h + 1) & (cap - 1))
			;
		hash[h] = (int)i + 1;
	}
	free(t->hash);
	t->hash = hash;
	t->hash_cap = cap;
	return 0;
}

/* The entity of an instance, made on first sight; NULL without memory. */
static struct ent *table_get(struct table *t, int inst, bool *fresh)
{
	size_t h;
	struct ent *e;

	*fresh = false;
	if (t->hash_cap) {
		for (h = hash_int(inst, t->hash_cap); t->hash[h];
		     h = (h + 1) & (t->hash_cap - 1))
			if (t->ents[t->hash[h] - 1].inst == inst)
				return &t->ents[t->hash[h] - 1];
	}
	if (lt_grow((void **)&t->ents, &t->cap, t->n + 1, sizeof(*t->ents)))
		return NULL;
	if ((t->n + 1) * 2 > t->hash_cap && table_rehash(t))
		return NULL;
	e = &t->ents[t->n];
	memset(e, 0, sizeof(*e));
	e->inst = inst;
	for (h = hash_int(inst, t->hash_cap); t->hash[h];
	     h = (h + 1) & (t->hash_cap - 1))
		;
	t->hash[h] = (int)++t->n;
	*fresh = true;
	return e;
}

static void table_free(struct table *t)
{
	size_t i;
	int k;

	for (i = 0; i < t->n; i++) {
		for (k = 0; k < T_NSTRS; k++)
			free(t->ents[i].str[k]);
		free(t->ents[i].pids);
	}
	free(t->ents);
	free(t->hash);
}

/* ---- fetching ---- */

static const char *inst_name(struct source *s, pmInDom indom, int inst,
			     char *buf, size_t len)
{
	char *name = NULL;
	int ret;

	ret = s->archive ? pmNameInDomArchive(indom, inst, &name) :
			   pmNameInDom(indom, inst, &name);
	if (ret < 0 || !name)
		snprintf(buf, len, "%d", inst);
	else
		snprintf(buf, len, "%s", name);
	free(name);
	return buf;
}

static int fetch(struct source *s, double *ts, char *err, size_t err_len)
{
	pmResult *res;
	int ret, i, j;

	/* A fleet view has one context per host: this source's first. */
	ret = pmUseContext(s->ctx);
	if (ret >= 0)
		ret = pmFetch(s->n_fetch, s->fetch_ids, &res);
	if (ret < 0) {
		if (ret == PM_ERR_EOL)
			return 1;
		snprintf(err, err_len, "fetching from %s: %s", s->what,
			 pmErrStr(ret));
		return -EIO;
	}
	s->gen++;
	*ts = (double)res->timestamp.tv_sec +
	      (double)res->timestamp.tv_usec / 1e6;
	for (i = 0; i < res->numpmid; i++) {
		const pmValueSet *vs = res->vset[i];
		const struct metric *m = &metrics[s->fetch_idx[i]];
		const pmDesc *d = &s->descs[s->fetch_idx[i]];
		struct table *t = &s->tables[m->group];

		for (j = 0; j < vs->numval; j++) {
			const pmValue *v = &vs->vlist[j];
			int inst = d->indom == PM_INDOM_NULL ? 0 : v->inst;
			pmAtomValue atom;
			struct ent *e;
			bool fresh;

			e = table_get(t, inst, &fresh);
			if (!e) {
				pmFreeResult(res);
				snprintf(err, err_len, "out of memory");
				return -ENOMEM;
			}
			if (fresh) {
				if (d->indom == PM_INDOM_NULL)
					snprintf(e->name, sizeof(e->name),
						 "all");
				else
					inst_name(s, d->indom, inst, e->name,
						  sizeof(e->name));
			}
			if (e->seen != s->gen) {
				/* First value this fetch: roll the counters. */
				memcpy(e->prev, e->cur, sizeof(e->prev));
				e->seen = s->gen;
			}
			if (m->string) {
				if (pmExtractValue(vs->valfmt, v,
						   PM_TYPE_STRING, &atom,
						   PM_TYPE_STRING) < 0)
					continue;
				free(e->str[m->slot]);
				e->str[m->slot] = atom.cp;
				continue;
			}
			if (d->type == PM_TYPE_DOUBLE ||
			    d->type == PM_TYPE_FLOAT) {
				if (pmExtractValue(vs->valfmt, v, d->type,
						   &atom, PM_TYPE_DOUBLE) < 0)
					continue;
				memcpy(&e->cur[m->slot], &atom.d,
				       sizeof(atom.d));
				continue;
			}
			if (pmExtractValue(vs->valfmt, v, d->type, &atom,
					   PM_TYPE_U64) < 0)
				continue;
			e->cur[m->slot] = atom.ull;
			e->counter[m->slot] = d->sem == PM_SEM_COUNTER;
			if (!e->have[m->slot]) {
				/*
				 * At the first fetch, the base; a figure that
				 * comes later counted from zero.
				 */
				e->have[m->slot] = true;
				e->base[m->slot] = s->gen == 1 ? atom.ull : 0;
				e->prev[m->slot] = e->base[m->slot];
			}
		}
	}
	pmFreeResult(res);
	return 0;
}

/* ---- operations ---- */

static void pcp_close(struct source *s)
{
	int g;

	if (!s)
		return;
	if (s->ctx >= 0)
		pmDestroyContext(s->ctx);
	for (g = 0; g < G_NR; g++)
		table_free(&s->tables[g]);
	pcp_snap_free(&s->out);
	free(s);
}

/* The agent's metrics by name, and which of them to fetch. */
static int lookup_metrics(struct source *s, char *err, size_t err_len)
{
	const char *names[N_METRICS];
	size_t i;
	int ret;

	for (i = 0; i < N_METRICS; i++)
		names[i] = ltpm_metrics[metrics[i].id].name;
	ret = pmLookupName((int)N_METRICS, names, s->pmids);
	for (i = 0; i < N_METRICS; i++) {
		if (ret >= 0 && s->pmids[i] != PM_ID_NULL)
			continue;
		if (ret < 0 || metrics[i].required) {
			snprintf(err, err_len, "%s has no locktop metrics: %s",
				 s->what,
				 s->archive ? "it was recorded without "
					      "pmdalocktop" :
					      "install pmdalocktop");
			return -ENOENT;
		}
	}
	for (i = 0; i < N_METRICS; i++) {
		if (s->pmids[i] == PM_ID_NULL)
			continue;
		ret = pmLookupDesc(s->pmids[i], &s->descs[i]);
		if (ret < 0 && metrics[i].required) {
			/* The names are known but the agent does not answer. */
			snprintf(err, err_len,
				 "%s has no locktop metrics: %s (%s)", s->what,
				 s->archive ? "it was recorded without "
					      "pmdalocktop" :
					      "install pmdalocktop",
				 pmErrStr(ret));
			return -ENOENT;
		}
		if (ret < 0)
			continue;
		s->fetch_idx[s->n_fetch] = (int)i;
		s->fetch_ids[s->n_fetch++] = s->pmids[i];
	}
	return 0;
}

/* An archive replays from its start, one step per interval. */
static int start_replay(struct source *s, char *err, size_t err_len)
{
	pmLogLabel label;
	int ret;

	ret = pmGetArchiveLabel(&label);
	if (ret < 0) {
		snprintf(err, err_len, "reading %s: %s", s->what,
			 pmErrStr(ret));
		return -EIO;
	}
	ret = pmSetMode(PM_MODE_INTERP, &label.ll_start, (int)s->delta_ms);
	if (ret < 0) {
		snprintf(err, err_len, "replaying %s: %s", s->what,
			 pmErrStr(ret));
		return -EIO;
	}
	return 0;
}

static int pcp_open(const struct source_params *p, struct source **out,
		    char *err, size_t err_len)
{
	struct source *s;
	double ts;
	int ret;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	s->archive = p->archive != NULL;
	s->delta_ms = p->collector.interval_ms ? p->collector.interval_ms :
						 1000;
	snprintf(s->what, sizeof(s->what), "%s %s",
		 s->archive ? "archive" : "host",
		 s->archive ? p->archive : p->host);
	s->ctx = pmNewContext(s->archive ? PM_CONTEXT_ARCHIVE : PM_CONTEXT_HOST,
			      s->archive ? p->archive : p->host);
	if (s->ctx < 0) {
		snprintf(err, err_len, "cannot open %s: %s%s", s->what,
			 pmErrStr(s->ctx),
			 s->archive ? "" : " (is pmcd running there?)");
		ret = -EIO;
		goto fail;
	}
	ret = lookup_metrics(s, err, err_len);
	if (!ret && s->archive)
		ret = start_replay(s, err, err_len);
	if (ret)
		goto fail;
	/* The first fetch is the base that rates and totals start from. */
	ret = fetch(s, &ts, err, err_len);
	if (ret < 0)
		goto fail;
	if (ret > 0) {
		snprintf(err, err_len, "%s holds no data", s->what);
		ret = -ENODATA;
		goto fail;
	}
	s->first_ts = s->last_ts = ts;
	*out = s;
	return 0;
fail:
	pcp_close(s);
	return ret;
}

static const struct lt_snapshot *pcp_read(struct source *s, bool *end,
					  char *err, size_t err_len)
{
	double ts;
	int ret;

	*end = false;
	ret = fetch(s, &ts, err, err_len);
	if (ret > 0) {
		*end = true;
		return NULL;
	}
	if (ret < 0)
		return NULL;
	if (pcp_snap_build(&s->out, s->tables, s->gen)) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	s->out.snap.time = ts;
	s->out.snap.interval_s = ts - s->last_ts;
	s->out.snap.elapsed_s = ts - s->first_ts;
	s->last_ts = ts;
	return &s->out.snap;
}

static void pcp_set_interval(struct source *s, unsigned int ms)
{
	struct timeval tv;

	s->delta_ms = ms ? ms : 1000;
	if (!s->archive || pmUseContext(s->ctx) < 0)
		return;
	/* Replay on from where we are, at the new step. */
	tv.tv_sec = (time_t)s->last_ts;
	tv.tv_usec = (suseconds_t)((s->last_ts - (double)tv.tv_sec) * 1e6);
	pmSetMode(PM_MODE_INTERP, &tv, (int)s->delta_ms);
}

/* A host whose pmcd stopped answering: its context, connected again. */
static int pcp_reconnect(struct source *s, char *err, size_t err_len)
{
	int ret = pmReconnectContext(s->ctx);

	if (ret < 0) {
		snprintf(err, err_len, "%s: %s", s->what, pmErrStr(ret));
		return -EIO;
	}
	return 0;
}

const struct source_ops source_pcp_host = {
	.name = "pcp",
	.open = pcp_open,
	.read = pcp_read,
	.set_interval = pcp_set_interval,
	.reconnect = pcp_reconnect,
	.close = pcp_close,
	.recorded = false,
	.local = false,
};

const struct source_ops source_pcp_archive = {
	.name = "archive",
	.open = pcp_open,
	.read = pcp_read,
	.set_interval = pcp_set_interval,
	.close = pcp_close,
	.recorded = true,
	.local = false,
};
