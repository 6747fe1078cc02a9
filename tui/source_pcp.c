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
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <pcp/pmapi.h>
#include "metrics.h"
#include "source.h"

/* Which table a metric's instances belong to. */
enum group { G_LOCK, G_KIND, G_PROC, G_FILE, G_PROG, G_HIST, G_ONE, G_NR };

/* Number slots of an instance; strings have their own. */
enum slot {
	S_WAITS,
	S_WAIT_NS,
	S_WAIT_MAX,
	S_HOLD_NS,
	S_HOLD_MAX,
	S_ACQUIRES,
	S_CONTENDED,
	S_TRYLOCK,
	S_IO_UNDER,
	S_WAKES,
	S_TIMEOUTS,
	S_INTERRUPTED,
	S_VALUE_CHANGED,
	S_OWNER_DIED,
	S_WAITERS,
	S_HOLDER,
	S_ID,
	S_ADDRESS,
	S_DEV,
	S_INO,
	S_START,
	S_END,
	S_PID,
	S_HOLDS_EST,
	S_NSLOTS,
	/* the same slots, other meanings in other groups */
	S_IO_COUNT = S_HOLD_NS,
	S_IO_NS = S_HOLD_MAX,
	S_TOP_LOCK = S_ACQUIRES,
	S_IO_BYTES = S_ACQUIRES,
	S_READS = S_CONTENDED,
	S_WRITES = S_TRYLOCK,
	S_READ_BYTES = S_WAKES,
	S_WRITE_BYTES = S_TIMEOUTS,
	S_EVENTS = S_WAITS,
	S_DROPS = S_WAIT_NS,
	S_NS_PER_EVENT = S_WAIT_MAX, /* a double, stored as its bits */
	S_CPU = S_HOLD_NS,
	S_DEADLOCKS = S_ACQUIRES,
	S_LOCK_ENTRIES = S_CONTENDED,
	S_LOCK_CAPACITY = S_TRYLOCK,
	S_FILE_ENTRIES = S_IO_UNDER,
	S_FILE_CAPACITY = S_WAKES,
	S_PARTY_ENTRIES = S_TIMEOUTS,
	S_PARTY_CAPACITY = S_INTERRUPTED,
	S_FOLDING = S_VALUE_CHANGED,
	S_RUNS = S_WAITS,
	S_RUN_NS = S_WAIT_NS,
	S_COUNT = S_WAITS,
};

enum str_slot {
	T_KIND,
	T_HOLDER_COMM,
	T_KEY,
	T_COMM,
	T_PIDS,
	T_HOLDERS,
	T_WAITERS,
	T_STACK,
	T_CYCLES,
	T_NSTRS,
};

/* A metric of pmdalocktop's table, and where its values go. */
struct metric {
	enum ltpm_metric_id id; /* its row in ltpm_metrics[] */
	enum group group;
	int slot; /* a number slot, or a string slot when string */
	bool string;
	bool required; /* its absence means there is no agent */
};

static const struct metric metrics[] = {
	{ LTPM_L_WAIT_COUNT, G_LOCK, S_WAITS, false, true },
	{ LTPM_L_WAIT_TIME, G_LOCK, S_WAIT_NS, false, true },
	{ LTPM_L_WAIT_MAX, G_LOCK, S_WAIT_MAX, false, false },
	{ LTPM_L_HOLD_TIME, G_LOCK, S_HOLD_NS, false, false },
	{ LTPM_L_HOLD_MAX, G_LOCK, S_HOLD_MAX, false, false },
	{ LTPM_L_HOLD_ESTIMATED, G_LOCK, S_HOLDS_EST, false, false },
	{ LTPM_L_ACQUIRES, G_LOCK, S_ACQUIRES, false, false },
	{ LTPM_L_CONTENDED, G_LOCK, S_CONTENDED, false, false },
	{ LTPM_L_TRYLOCK_FAILURES, G_LOCK, S_TRYLOCK, false, false },
	{ LTPM_L_IO_UNDER_LOCK, G_LOCK, S_IO_UNDER, false, false },
	{ LTPM_L_WAKES, G_LOCK, S_WAKES, false, false },
	{ LTPM_L_TIMEOUTS, G_LOCK, S_TIMEOUTS, false, false },
	{ LTPM_L_INTERRUPTED, G_LOCK, S_INTERRUPTED, false, false },
	{ LTPM_L_VALUE_CHANGED, G_LOCK, S_VALUE_CHANGED, false, false },
	{ LTPM_L_OWNER_DIED, G_LOCK, S_OWNER_DIED, false, false },
	{ LTPM_L_WAITERS, G_LOCK, S_WAITERS, false, false },
	{ LTPM_L_HOLDER, G_LOCK, S_HOLDER, false, false },
	{ LTPM_L_ID, G_LOCK, S_ID, false, false },
	{ LTPM_L_ADDRESS, G_LOCK, S_ADDRESS, false, false },
	{ LTPM_L_DEV, G_LOCK, S_DEV, false, false },
	{ LTPM_L_INO, G_LOCK, S_INO, false, false },
	{ LTPM_L_START, G_LOCK, S_START, false, false },
	{ LTPM_L_END, G_LOCK, S_END, false, false },
	{ LTPM_L_PID, G_LOCK, S_PID, false, false },
	{ LTPM_L_KIND, G_LOCK, T_KIND, true, false },
	{ LTPM_L_HOLDER_COMM, G_LOCK, T_HOLDER_COMM, true, false },
	{ LTPM_L_KEY, G_LOCK, T_KEY, true, false },
	{ LTPM_L_COMM, G_LOCK, T_COMM, true, false },
	{ LTPM_L_PIDS, G_LOCK, T_PIDS, true, false },
	{ LTPM_L_HOLDERS, G_LOCK, T_HOLDERS, true, false },
	{ LTPM_L_WAITED_BY, G_LOCK, T_WAITERS, true, false },
	{ LTPM_L_STACK, G_LOCK, T_STACK, true, false },
	{ LTPM_K_WAIT_COUNT, G_KIND, S_WAITS, false, false },
	{ LTPM_K_WAIT_TIME, G_KIND, S_WAIT_NS, false, false },
	{ LTPM_P_WAIT_COUNT, G_PROC, S_WAITS, false, false },
	{ LTPM_P_WAIT_TIME, G_PROC, S_WAIT_NS, false, false },
	{ LTPM_P_IO_COUNT, G_PROC, S_IO_COUNT, false, false },
	{ LTPM_P_IO_TIME, G_PROC, S_IO_NS, false, false },
	{ LTPM_P_TOP_LOCK, G_PROC, S_TOP_LOCK, false, false },
	{ LTPM_F_IO_COUNT, G_FILE, S_IO_COUNT, false, false },
	{ LTPM_F_IO_BYTES, G_FILE, S_IO_BYTES, false, false },
	{ LTPM_F_IO_TIME, G_FILE, S_IO_NS, false, false },
	{ LTPM_F_IO_UNDER_LOCK, G_FILE, S_IO_UNDER, false, false },
	{ LTPM_F_READS, G_FILE, S_READS, false, false },
	{ LTPM_F_WRITES, G_FILE, S_WRITES, false, false },
	{ LTPM_F_READ_BYTES, G_FILE, S_READ_BYTES, false, false },
	{ LTPM_F_WRITE_BYTES, G_FILE, S_WRITE_BYTES, false, false },
	{ LTPM_F_DEV, G_FILE, S_DEV, false, false },
	{ LTPM_F_INO, G_FILE, S_INO, false, false },
	{ LTPM_PR_EVENTS, G_ONE, S_EVENTS, false, false },
	{ LTPM_PR_DROPS, G_ONE, S_DROPS, false, false },
	{ LTPM_PR_NS_PER_EVENT, G_ONE, S_NS_PER_EVENT, false, false },
	{ LTPM_PR_CPU, G_ONE, S_CPU, false, false },
	{ LTPM_A_DEADLOCKS, G_ONE, S_DEADLOCKS, false, false },
	{ LTPM_PR_LOCK_ENTRIES, G_ONE, S_LOCK_ENTRIES, false, false },
	{ LTPM_PR_LOCK_CAPACITY, G_ONE, S_LOCK_CAPACITY, false, false },
	{ LTPM_PR_FILE_ENTRIES, G_ONE, S_FILE_ENTRIES, false, false },
	{ LTPM_PR_FILE_CAPACITY, G_ONE, S_FILE_CAPACITY, false, false },
	{ LTPM_PR_PARTY_ENTRIES, G_ONE, S_PARTY_ENTRIES, false, false },
	{ LTPM_PR_PARTY_CAPACITY, G_ONE, S_PARTY_CAPACITY, false, false },
	{ LTPM_PR_FOLDING, G_ONE, S_FOLDING, false, false },
	{ LTPM_A_CYCLES, G_ONE, T_CYCLES, true, false },
	{ LTPM_PR_PROG_RUNS, G_PROG, S_RUNS, false, false },
	{ LTPM_PR_PROG_TIME, G_PROG, S_RUN_NS, false, false },
	{ LTPM_H_IO, G_HIST, S_COUNT, false, false },
};

#define N_METRICS (sizeof(metrics) / sizeof(*metrics))

/* One instance of one group: a lock, a process, a file... */
struct ent {
	int inst;
	unsigned int seen; /* the fetch that last had it */
	char name[LT_NAME_LEN];
	uint64_t cur[S_NSLOTS], prev[S_NSLOTS], base[S_NSLOTS];
	bool counter[S_NSLOTS];
	bool have[S_NSLOTS];
	char *str[T_NSTRS];
	pid_t *pids;
	size_t n_pids;
};

struct table {
	struct ent *ents;
	size_t n, cap;
	int *hash; /* index + 1 by instance; open addressing */
	size_t hash_cap;
};

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
	struct lt_snapshot snap;
	struct lt_lock *locks;
	struct lt_proc *procs;
	struct lt_file *files;
	struct lt_probe_cost *probes;
	struct lt_deadlock *deadlocks;
	size_t cap_locks, cap_procs, cap_files, cap_probes, cap_deadlocks;
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
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;

		e = realloc(t->ents, cap * sizeof(*e));
		if (!e)
			return NULL;
		t->ents = e;
		t->cap = cap;
	}
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

/* "comm/pid count time, comm/pid count time" */
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
	size_t n = 0, cap = 0;
	char *end;
	long v;

	e->n_pids = 0;
	while (s && *s) {
		v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 8;
			pid_t *p = realloc(e->pids, c * sizeof(*p));

			if (!p)
				break;
			e->pids = p;
			cap = c;
		}
		e->pids[n++] = (pid_t)v;
		s = end;
	}
	if (!n && e->cur[S_PID]) {
		pid_t *p = realloc(e->pids, sizeof(*p));

		if (p) {
			e->pids = p;
			p[n++] = (pid_t)e->cur[S_PID];
		}
	}
	e->n_pids = n;
}

/* ---- figures ---- */

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

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n <= *cap)
		return p;
	q = realloc(p, n * size);
	if (!q)
		return NULL;
	*cap = n;
	return q;
}

static int build_snapshot(struct source *s)
{
	struct table *t;
	size_t i, n;
	int k;

	/* Locks */
	t = &s->tables[G_LOCK];
	s->locks = grow(s->locks, &s->cap_locks, t->n ? t->n : 1,
			sizeof(*s->locks));
	if (!s->locks)
		return -ENOMEM;
	for (i = 0, n = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];
		struct lt_lock *l = &s->locks[n];
		struct lt_figures *f[2] = { &l->delta, &l->total };
		int w;

		if (e->seen != s->gen)
			continue;
		memset(l, 0, sizeof(*l));
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
		l->waiters_now = (unsigned int)e->cur[S_WAITERS];
		l->holder = (pid_t)e->cur[S_HOLDER];
		snprintf(l->holder_comm, sizeof(l->holder_comm), "%s",
			 e->str[T_HOLDER_COMM] ? e->str[T_HOLDER_COMM] : "");
		l->n_holders = parse_parties(e->str[T_HOLDERS], l->holders);
		l->n_waiters = parse_parties(e->str[T_WAITERS], l->waiters);
		l->stack = e->str[T_STACK] && *e->str[T_STACK] ?
				   e->str[T_STACK] :
				   NULL;
		for (w = 0; w < 2; w++) {
			uint64_t (*get)(const struct ent *, int) =
				w ? total_of : delta_of;

			f[w]->waits = get(e, S_WAITS);
			f[w]->wait_ns = get(e, S_WAIT_NS);
			f[w]->hold_ns = get(e, S_HOLD_NS);
			f[w]->holds_estimated = get(e, S_HOLDS_EST);
			f[w]->acquires = get(e, S_ACQUIRES);
			f[w]->contended = get(e, S_CONTENDED);
			f[w]->trylock_failures = get(e, S_TRYLOCK);
			f[w]->io_under_lock_ns = get(e, S_IO_UNDER);
			f[w]->wakes = get(e, S_WAKES);
			f[w]->timeouts = get(e, S_TIMEOUTS);
			f[w]->interrupted = get(e, S_INTERRUPTED);
			f[w]->value_changed = get(e, S_VALUE_CHANGED);
			f[w]->owner_died = get(e, S_OWNER_DIED);
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
		n++;
	}
	s->snap.locks = s->locks;
	s->snap.n_locks = n;

	/* Kinds */
	memset(s->snap.kind_delta, 0, sizeof(s->snap.kind_delta));
	memset(s->snap.kind_total, 0, sizeof(s->snap.kind_total));
	t = &s->tables[G_KIND];
	for (i = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];

		k = lt_kind_parse(e->name);
		if (e->seen != s->gen || k < 0)
			continue;
		s->snap.kind_delta[k].waits = delta_of(e, S_WAITS);
		s->snap.kind_delta[k].wait_ns = delta_of(e, S_WAIT_NS);
		s->snap.kind_total[k].waits = total_of(e, S_WAITS);
		s->snap.kind_total[k].wait_ns = total_of(e, S_WAIT_NS);
	}

	/* Processes: instances are named "PID comm" */
	t = &s->tables[G_PROC];
	s->procs = grow(s->procs, &s->cap_procs, t->n ? t->n : 1,
			sizeof(*s->procs));
	if (!s->procs)
		return -ENOMEM;
	for (i = 0, n = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];
		struct lt_proc *p = &s->procs[n];
		char *sp;

		if (e->seen != s->gen)
			continue;
		memset(p, 0, sizeof(*p));
		p->pid = (pid_t)strtol(e->name, &sp, 10);
		while (*sp == ' ')
			sp++;
		snprintf(p->comm, sizeof(p->comm), "%s", sp);
		p->top_lock = e->cur[S_TOP_LOCK];
		p->delta.waits = delta_of(e, S_WAITS);
		p->delta.wait_ns = delta_of(e, S_WAIT_NS);
		p->delta.io_count = delta_of(e, S_IO_COUNT);
		p->delta.io_ns = delta_of(e, S_IO_NS);
		p->total.waits = total_of(e, S_WAITS);
		p->total.wait_ns = total_of(e, S_WAIT_NS);
		p->total.io_count = total_of(e, S_IO_COUNT);
		p->total.io_ns = total_of(e, S_IO_NS);
		n++;
	}
	s->snap.procs = s->procs;
	s->snap.n_procs = n;

	/* Files */
	t = &s->tables[G_FILE];
	s->files = grow(s->files, &s->cap_files, t->n ? t->n : 1,
			sizeof(*s->files));
	if (!s->files)
		return -ENOMEM;
	for (i = 0, n = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];
		struct lt_file *fl = &s->files[n];
		struct lt_file_figures *f[2] = { &fl->delta, &fl->total };
		int w;

		if (e->seen != s->gen)
			continue;
		memset(fl, 0, sizeof(*fl));
		snprintf(fl->name, sizeof(fl->name), "%s", e->name);
		fl->dev = e->cur[S_DEV];
		fl->ino = e->cur[S_INO];
		for (w = 0; w < 2; w++) {
			uint64_t (*get)(const struct ent *, int) =
				w ? total_of : delta_of;

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
			f[w]->io_under_lock_ns = get(e, S_IO_UNDER);
		}
		n++;
	}
	s->snap.files = s->files;
	s->snap.n_files = n;

	/* Probe programs */
	t = &s->tables[G_PROG];
	s->probes = grow(s->probes, &s->cap_probes, t->n ? t->n : 1,
			 sizeof(*s->probes));
	if (!s->probes)
		return -ENOMEM;
	for (i = 0, n = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];
		struct lt_probe_cost *p = &s->probes[n];

		if (e->seen != s->gen)
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
	s->snap.probes = s->probes;
	s->snap.n_probes = n;

	/* The I/O latency histogram: instance i is bucket i */
	memset(s->snap.io_hist_delta, 0, sizeof(s->snap.io_hist_delta));
	t = &s->tables[G_HIST];
	for (i = 0; i < t->n; i++) {
		struct ent *e = &t->ents[i];

		if (e->seen == s->gen && e->inst >= 0 &&
		    e->inst < LT_HIST_BUCKETS)
			s->snap.io_hist_delta[e->inst] = delta_of(e, S_COUNT);
	}

	/* Whole-agent figures */
	t = &s->tables[G_ONE];
	s->snap.events_delta = s->snap.events_total = 0;
	s->snap.drops_delta = s->snap.drops_total = 0;
	s->snap.cpu_percent = 0;
	s->snap.n_deadlocks = 0;
	if (t->n && t->ents[0].seen == s->gen) {
		struct ent *e = &t->ents[0];
		const char *c = e->str[T_CYCLES];

		s->snap.events_delta = delta_of(e, S_EVENTS);
		s->snap.events_total = total_of(e, S_EVENTS);
		s->snap.drops_delta = delta_of(e, S_DROPS);
		s->snap.drops_total = total_of(e, S_DROPS);
		s->snap.cpu_percent = double_of(e->cur[S_CPU]);
		/* Older agents and archives have no map figures: 0. */
		s->snap.lock_entries = e->cur[S_LOCK_ENTRIES];
		s->snap.lock_capacity = e->cur[S_LOCK_CAPACITY];
		s->snap.file_entries = e->cur[S_FILE_ENTRIES];
		s->snap.file_capacity = e->cur[S_FILE_CAPACITY];
		s->snap.party_entries = e->cur[S_PARTY_ENTRIES];
		s->snap.party_capacity = e->cur[S_PARTY_CAPACITY];
		s->snap.folding = e->cur[S_FOLDING] != 0;
		/* "comm/pid -> comm/pid; comm/pid -> ..." */
		n = 0;
		while (c && *c) {
			struct lt_deadlock *d;
			const char *end = strchr(c, ';');
			size_t len = end ? (size_t)(end - c) : strlen(c);
			char cyc[1024], *tok, *save = NULL;

			s->deadlocks = grow(s->deadlocks, &s->cap_deadlocks,
					    n + 1, sizeof(*s->deadlocks));
			if (!s->deadlocks)
				return -ENOMEM;
			d = &s->deadlocks[n];
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
				snprintf(d->comms[d->n], LT_COMM_SIZE, "%s",
					 tok);
				d->n++;
			}
			if (d->n)
				n++;
			c = end ? end + 1 : NULL;
		}
		s->snap.deadlocks = s->deadlocks;
		s->snap.n_deadlocks = n;
	}
	return 0;
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
	free(s->locks);
	free(s->procs);
	free(s->files);
	free(s->probes);
	free(s->deadlocks);
	free(s);
}

static int pcp_open(const struct source_params *p, struct source **out,
		    char *err, size_t err_len)
{
	const char *names[N_METRICS];
	struct source *s;
	double ts;
	size_t i;
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
			ret = -ENOENT;
			goto fail;
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
			ret = -ENOENT;
			goto fail;
		}
		if (ret < 0)
			continue;
		s->fetch_idx[s->n_fetch] = (int)i;
		s->fetch_ids[s->n_fetch++] = s->pmids[i];
	}
	if (s->archive) {
		pmLogLabel label;

		ret = pmGetArchiveLabel(&label);
		if (ret < 0) {
			snprintf(err, err_len, "reading %s: %s", s->what,
				 pmErrStr(ret));
			ret = -EIO;
			goto fail;
		}
		ret = pmSetMode(PM_MODE_INTERP, &label.ll_start,
				(int)s->delta_ms);
		if (ret < 0) {
			snprintf(err, err_len, "replaying %s: %s", s->what,
				 pmErrStr(ret));
			ret = -EIO;
			goto fail;
		}
	}
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
	if (build_snapshot(s)) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	s->snap.time = ts;
	s->snap.interval_s = ts - s->last_ts;
	s->snap.elapsed_s = ts - s->first_ts;
	s->last_ts = ts;
	return &s->snap;
}

static void pcp_set_interval(struct source *s, unsigned int ms)
{
	struct timeval tv;

	s->delta_ms = ms ? ms : 1000;
	if (!s->archive)
		return;
	/* Replay on from where we are, at the new step. */
	tv.tv_sec = (time_t)s->last_ts;
	tv.tv_usec = (suseconds_t)((s->last_ts - (double)tv.tv_sec) * 1e6);
	pmSetMode(PM_MODE_INTERP, &tv, (int)s->delta_ms);
}

const struct source_ops source_pcp_host = {
	.name = "pcp",
	.open = pcp_open,
	.read = pcp_read,
	.set_interval = pcp_set_interval,
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
