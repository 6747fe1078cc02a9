// SPDX-License-Identifier: GPL-2.0-or-later
/* The PCP source's snapshot, made of its instances' fetched values. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pcp_snapshot.h"

/* ---- parsing of the agent's strings ---- */

static uint64_t parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (!strncmp(end, "ns", 2))
		return (uint64_t)v;
	if (!strncmp(end, "us", 2))
		return (uint64_t)(v * 1e3);
	if (!strncmp(end, "ms", 2))
		return (uint64_t)(v * 1e6);
	if (*end == 's')
		return (uint64_t)(v * 1e9);
	return (uint64_t)v;
}

/*
 * "comm/pid count time, comm/pid count time": the holders and waiters of
 * an agent or archive without their numbers (locktop.lock.party), to
 * the precision of the text.
 */
static size_t parse_parties(const char *s, struct lt_party *out)
{
	size_t n = 0;

	while (s && *s && n < LT_TOP_PARTIES) {
		const char *end = strchr(s, ','), *slash;
		char item[LT_COMM_SIZE + 64], time[32] = "";
		unsigned long long count = 0;
		size_t len = end ? (size_t)(end - s) : strlen(s);
		int pid = 0;

		while (len && isspace((unsigned char)*s)) {
			s++;
			len--;
		}
		if (len >= sizeof(item))
			len = sizeof(item) - 1;
		memcpy(item, s, len);
		item[len] = 0;
		slash = strrchr(item, '/');
		if (slash && sscanf(slash + 1, "%d %llu %31s", &pid, &count,
				    time) >= 1) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].pid = pid;
			snprintf(out[n].comm, sizeof(out[n].comm), "%.*s",
				 (int)(slash - item), item);
			out[n].count = count;
			out[n].ns = parse_duration(time);
			n++;
		}
		s = end ? end + 1 : NULL;
	}
	return n;
}

static void parse_pids(struct ent *e)
{
	const char *s = e->str[T_PIDS];
	size_t n = 0;
	char *end;
	long v;

	e->n_pids = 0;
	while (s && *s) {
		v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (lt_grow((void **)&e->pids, &e->cap_pids, n + 1,
			    sizeof(*e->pids)))
			break;
		e->pids[n++] = (pid_t)v;
		s = end;
	}
	if (!n && e->cur[S_PID] &&
	    !lt_grow((void **)&e->pids, &e->cap_pids, 1, sizeof(*e->pids)))
		e->pids[n++] = (pid_t)e->cur[S_PID];
	e->n_pids = n;
}

/* ---- figures ---- */

/*
 * A lock's top holders or waiters, from their numbers where there are;
 * a holder's thread too, where the agent or archive has it.
 */
static size_t lock_parties(const struct ent *e, int waiter,
			   struct lt_party *out)
{
	int n_slot = waiter ? S_NWAITERS : S_NHOLDERS;
	const char *comm, *thread;
	size_t i, n;

	if (!e->have[n_slot])
		return parse_parties(e->str[waiter ? T_WAITERS : T_HOLDERS],
				     out);
	n = e->cur[n_slot] < LT_TOP_PARTIES ? (size_t)e->cur[n_slot] :
					      LT_TOP_PARTIES;
	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].pid = (pid_t)e->cur[PARTY_SLOT(waiter, i, P_PID)];
		comm = e->str[PARTY_COMM(waiter, i)];
		snprintf(out[i].comm, sizeof(out[i].comm), "%s",
			 comm ? comm : "");
		out[i].count = e->cur[PARTY_SLOT(waiter, i, P_COUNT)];
		out[i].ns = e->cur[PARTY_SLOT(waiter, i, P_NS)];
		if (waiter)
			continue;
		out[i].tid = (pid_t)e->cur[HOLDER_TID(i)];
		thread = e->str[HOLDER_THREAD(i)];
		snprintf(out[i].thread, sizeof(out[i].thread), "%s",
			 thread ? thread : "");
	}
	return n;
}

static uint64_t delta_of(const struct ent *e, int slot)
{
	if (!e->counter[slot])
		return e->cur[slot];
	/* A counter that went back was reset: count from zero. */
	return e->cur[slot] >= e->prev[slot] ? e->cur[slot] - e->prev[slot] :
					       e->cur[slot];
}

static uint64_t total_of(const struct ent *e, int slot)
{
	if (!e->counter[slot])
		return e->cur[slot];
	return e->cur[slot] >= e->base[slot] ? e->cur[slot] - e->base[slot] :
					       e->cur[slot];
}

static double double_of(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* ---- the snapshot, group by group ---- */

/* What a lock is: its names, identity, processes, holders, waiters. */
static void lock_identity(struct lt_lock *l, struct ent *e)
{
	int k;

	l->id = e->cur[S_ID] ? e->cur[S_ID] : (uint64_t)e->inst + 1;
	snprintf(l->name, sizeof(l->name), "%s", e->name);
	snprintf(l->key, sizeof(l->key), "%s",
		 e->str[T_KEY] ? e->str[T_KEY] : e->name);
	k = e->str[T_KIND] ? lt_kind_parse(e->str[T_KIND]) : -1;
	l->kind = k >= 0 ? (enum lt_kind)k : LT_KIND_FUTEX;
	l->address = e->cur[S_ADDRESS];
	l->dev = e->cur[S_DEV];
	l->ino = e->cur[S_INO];
	l->start = e->cur[S_START];
	l->end = e->cur[S_END];
	parse_pids(e);
	l->pids = e->pids;
	l->n_pids = e->n_pids;
	snprintf(l->comm, sizeof(l->comm), "%s",
		 e->str[T_COMM] ? e->str[T_COMM] : "");
	/* A lock site adds up its processes' copies; 0 from an agent or an
	 * archive without the figure. */
	l->procs = (unsigned int)e->cur[S_SITE_PROCS];
	l->waiters_now = (unsigned int)e->cur[S_WAITERS];
	l->spinning_now = (unsigned int)e->cur[S_SPINNING];
	l->holder = (pid_t)e->cur[S_HOLDER];
	snprintf(l->holder_comm, sizeof(l->holder_comm), "%s",
		 e->str[T_HOLDER_COMM] ? e->str[T_HOLDER_COMM] : "");
	l->holder_tid = (pid_t)e->cur[S_HOLDER_TID];
	snprintf(l->holder_thread, sizeof(l->holder_thread), "%s",
		 e->str[T_HOLDER_THREAD] ? e->str[T_HOLDER_THREAD] : "");
	l->n_holders = lock_parties(e, 0, l->holders);
	l->n_waiters = lock_parties(e, 1, l->waiters);
	l->stack = e->str[T_STACK] && *e->str[T_STACK] ? e->str[T_STACK] : NULL;
	snprintf(l->kernel_type, sizeof(l->kernel_type), "%s",
		 e->str[T_KERNEL_TYPE] ? e->str[T_KERNEL_TYPE] : "");
	snprintf(l->caller, sizeof(l->caller), "%s",
		 e->str[T_CALLER] ? e->str[T_CALLER] : "");
}

/* A lock's figures: deltas, totals, and maxima of intervals and of all. */
static void lock_figures(struct lt_lock *l, struct ent *e)
{
	struct lt_figures *f[2] = { &l->delta, &l->total };
	int w;

	for (w = 0; w < 2; w++) {
		uint64_t (*get)(const struct ent *, int) = w ? total_of :
							       delta_of;

#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) \
	f[w]->NAME = get(e, S_FIG_##NAME);
#define LT_DERIVED(NAME, JSON, PCP, RECORD) f[w]->NAME = get(e, S_FIG_##NAME);
#include "figures.def"
	}
	/* The agent's maximum covers its own interval. */
	l->delta.max_wait_ns = e->cur[S_WAIT_MAX];
	l->delta.max_hold_ns = e->cur[S_HOLD_MAX];
	if (e->cur[S_WAIT_MAX] > e->base[S_WAIT_MAX])
		e->base[S_WAIT_MAX] = e->cur[S_WAIT_MAX];
	if (e->cur[S_HOLD_MAX] > e->base[S_HOLD_MAX])
		e->base[S_HOLD_MAX] = e->cur[S_HOLD_MAX];
	l->total.max_wait_ns = e->base[S_WAIT_MAX];
	l->total.max_hold_ns = e->base[S_HOLD_MAX];
}

static int build_locks(struct pcp_snap *ps, struct table *t, unsigned int gen)
{
	size_t i, n;

	if (lt_grow((void **)&ps->locks, &ps->cap_locks, t->n ? t->n : 1,
		    sizeof(*ps->locks)))
		return -ENOMEM;
	for (i = 0, n = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];
		struct lt_lock *l = &ps->locks[n];

		if (e->seen != gen)
			continue;
		memset(l, 0, sizeof(*l));
		lock_identity(l, e);
		lock_figures(l, e);
		n++;
	}
	ps->snap.locks = ps->locks;
	ps->snap.n_locks = n;
	return 0;
}

static void build_kinds(struct pcp_snap *ps, struct table *t, unsigned int gen)
{
	size_t i;
	int k;

	memset(ps->snap.kind_delta, 0, sizeof(ps->snap.kind_delta));
	memset(ps->snap.kind_total, 0, sizeof(ps->snap.kind_total));
	for (i = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];

		k = lt_kind_parse(e->name);
		if (e->seen != gen || k < 0)
			continue;
		ps->snap.kind_delta[k].waits = delta_of(e, S_FIG_waits);
		ps->snap.kind_delta[k].wait_ns = delta_of(e, S_FIG_wait_ns);
		ps->snap.kind_total[k].waits = total_of(e, S_FIG_waits);
		ps->snap.kind_total[k].wait_ns = total_of(e, S_FIG_wait_ns);
	}
}

/* Processes: instances are named "PID comm" */
static int build_procs(struct pcp_snap *ps, struct table *t, unsigned int gen)
{
	size_t i, n;

	if (lt_grow((void **)&ps->procs, &ps->cap_procs, t->n ? t->n : 1,
		    sizeof(*ps->procs)))
		return -ENOMEM;
	for (i = 0, n = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];
		struct lt_proc *p = &ps->procs[n];
		char *sp;

		if (e->seen != gen)
			continue;
		memset(p, 0, sizeof(*p));
		p->pid = (pid_t)strtol(e->name, &sp, 10);
		while (*sp == ' ')
			sp++;
		snprintf(p->comm, sizeof(p->comm), "%s", sp);
		p->top_lock = e->cur[S_TOP_LOCK];
		p->delta.waits = delta_of(e, S_FIG_waits);
		p->delta.wait_ns = delta_of(e, S_FIG_wait_ns);
		p->delta.io_count = delta_of(e, S_IO_COUNT);
		p->delta.io_ns = delta_of(e, S_IO_NS);
		p->total.waits = total_of(e, S_FIG_waits);
		p->total.wait_ns = total_of(e, S_FIG_wait_ns);
		p->total.io_count = total_of(e, S_IO_COUNT);
		p->total.io_ns = total_of(e, S_IO_NS);
		n++;
	}
	ps->snap.procs = ps->procs;
	ps->snap.n_procs = n;
	return 0;
}

static void file_figures(struct lt_file *fl, const struct ent *e)
{
	struct lt_file_figures *f[2] = { &fl->delta, &fl->total };
	int w;

	for (w = 0; w < 2; w++) {
		uint64_t (*get)(const struct ent *, int) = w ? total_of :
							       delta_of;

		f[w]->reads = get(e, S_READS);
		f[w]->writes = get(e, S_WRITES);
		/* Only the contract's sums: count them as reads. */
		if (!f[w]->reads && !f[w]->writes)
			f[w]->reads = get(e, S_IO_COUNT);
		f[w]->read_bytes = get(e, S_READ_BYTES);
		f[w]->write_bytes = get(e, S_WRITE_BYTES);
		if (!f[w]->read_bytes && !f[w]->write_bytes)
			f[w]->read_bytes = get(e, S_IO_BYTES);
		f[w]->io_ns = get(e, S_IO_NS);
		f[w]->io_under_lock_ns = get(e, S_FIG_io_under_lock_ns);
	}
}

static int build_files(struct pcp_snap *ps, struct table *t, unsigned int gen)
{
	size_t i, n;

	if (lt_grow((void **)&ps->files, &ps->cap_files, t->n ? t->n : 1,
		    sizeof(*ps->files)))
		return -ENOMEM;
	for (i = 0, n = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];
		struct lt_file *fl = &ps->files[n];

		if (e->seen != gen)
			continue;
		memset(fl, 0, sizeof(*fl));
		snprintf(fl->name, sizeof(fl->name), "%s", e->name);
		fl->dev = e->cur[S_DEV];
		fl->ino = e->cur[S_INO];
		file_figures(fl, e);
		n++;
	}
	ps->snap.files = ps->files;
	ps->snap.n_files = n;
	return 0;
}

/* Probe programs */
static int build_probes(struct pcp_snap *ps, struct table *t, unsigned int gen)
{
	size_t i, n;

	if (lt_grow((void **)&ps->probes, &ps->cap_probes, t->n ? t->n : 1,
		    sizeof(*ps->probes)))
		return -ENOMEM;
	for (i = 0, n = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];
		struct lt_probe_cost *p = &ps->probes[n];

		if (e->seen != gen)
			continue;
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%.*s",
			 (int)sizeof(p->name) - 1, e->name);
		p->run_cnt = total_of(e, S_RUNS);
		p->run_ns = total_of(e, S_RUN_NS);
		p->delta_cnt = delta_of(e, S_RUNS);
		p->delta_ns = delta_of(e, S_RUN_NS);
		n++;
	}
	ps->snap.probes = ps->probes;
	ps->snap.n_probes = n;
	return 0;
}

/* The I/O latency histogram: instance i is bucket i */
static void build_hist(struct pcp_snap *ps, struct table *t, unsigned int gen)
{
	size_t i;

	memset(ps->snap.io_hist_delta, 0, sizeof(ps->snap.io_hist_delta));
	for (i = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];

		if (e->seen == gen && e->inst >= 0 && e->inst < LT_HIST_BUCKETS)
			ps->snap.io_hist_delta[e->inst] = delta_of(e, S_COUNT);
	}
}

/* "comm/pid -> comm/pid; comm/pid -> ..." */
static int parse_cycles(struct pcp_snap *ps, const char *c)
{
	size_t n = 0;

	while (c && *c) {
		struct lt_deadlock *d;
		const char *end = strchr(c, ';');
		size_t len = end ? (size_t)(end - c) : strlen(c);
		char cyc[1024], *tok, *save = NULL;

		if (lt_grow((void **)&ps->deadlocks, &ps->cap_deadlocks, n + 1,
			    sizeof(*ps->deadlocks)))
			return -ENOMEM;
		d = &ps->deadlocks[n];
		memset(d, 0, sizeof(*d));
		snprintf(cyc, sizeof(cyc), "%.*s", (int)len, c);
		for (tok = strtok_r(cyc, " ", &save);
		     tok && d->n < LT_CYCLE_MAX;
		     tok = strtok_r(NULL, " ", &save)) {
			char *slash = strrchr(tok, '/');

			if (!slash)
				continue;
			*slash = 0;
			d->pids[d->n] = (pid_t)atoi(slash + 1);
			snprintf(d->comms[d->n], LT_COMM_SIZE, "%s", tok);
			d->n++;
		}
		if (d->n)
			n++;
		c = end ? end + 1 : NULL;
	}
	ps->snap.deadlocks = ps->deadlocks;
	ps->snap.n_deadlocks = n;
	return 0;
}

/* Whole-agent figures */
static int build_agent(struct pcp_snap *ps, struct table *t, unsigned int gen)
{
	struct ent *e;

	ps->snap.events_delta = ps->snap.events_total = 0;
	ps->snap.drops_delta = ps->snap.drops_total = 0;
	ps->snap.cpu_percent = 0;
	ps->snap.n_deadlocks = 0;
	ps->snap.io_off = false;
	if (!t->n || t->ents[0].seen != gen)
		return 0;
	e = &t->ents[0];
	ps->snap.events_delta = delta_of(e, S_EVENTS);
	ps->snap.events_total = total_of(e, S_EVENTS);
	ps->snap.drops_delta = delta_of(e, S_DROPS);
	ps->snap.drops_total = total_of(e, S_DROPS);
	ps->snap.cpu_percent = double_of(e->cur[S_CPU]);
	/* Older agents and archives have no map figures: 0. */
	ps->snap.lock_entries = e->cur[S_LOCK_ENTRIES];
	ps->snap.lock_capacity = e->cur[S_LOCK_CAPACITY];
	ps->snap.file_entries = e->cur[S_FILE_ENTRIES];
	ps->snap.file_capacity = e->cur[S_FILE_CAPACITY];
	ps->snap.party_entries = e->cur[S_PARTY_ENTRIES];
	ps->snap.party_capacity = e->cur[S_PARTY_CAPACITY];
	ps->snap.folding = e->cur[S_FOLDING] != 0;
	/* An older agent or archive has no locktop.control.io: traced. */
	ps->snap.io_off = e->have[S_IO_TRACED] && !e->cur[S_IO_TRACED];
	return parse_cycles(ps, e->str[T_CYCLES]);
}

int pcp_snap_build(struct pcp_snap *ps, struct table tables[G_NR],
		   unsigned int gen)
{
	if (build_locks(ps, &tables[G_LOCK], gen))
		return -ENOMEM;
	build_kinds(ps, &tables[G_KIND], gen);
	if (build_procs(ps, &tables[G_PROC], gen) ||
	    build_files(ps, &tables[G_FILE], gen) ||
	    build_probes(ps, &tables[G_PROG], gen))
		return -ENOMEM;
	build_hist(ps, &tables[G_HIST], gen);
	return build_agent(ps, &tables[G_AGENT], gen);
}

void pcp_snap_free(struct pcp_snap *ps)
{
	free(ps->locks);
	free(ps->procs);
	free(ps->files);
	free(ps->probes);
	free(ps->deadlocks);
}
