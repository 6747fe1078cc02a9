// SPDX-License-Identifier: GPL-2.0-or-later
/* pmdalocktop's fetch callbacks: each metric's value, from the snapshot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent.h"

static int fetch(int numpmid, pmID pmidlist[], pmResult **resp, pmdaExt *pmda)
{
	if (agent.loading)
		return not_ready();
	return pmdaFetch(numpmid, pmidlist, resp, pmda);
}

static int instance(pmInDom indom, int inst, char *name, pmInResult **result,
		    pmdaExt *pmda)
{
	if (agent.loading)
		return not_ready();
	return pmdaInstance(indom, inst, name, result, pmda);
}

/* "comm/pid" of each party, most first, into a new string. */
static char *parties(const struct lt_party *p, size_t n)
{
	char buf[LT_TOP_PARTIES * (LT_COMM_SIZE + 48)] = "";
	size_t i, len = 0;

	for (i = 0; i < n && i < LT_TOP_PARTIES; i++) {
		char ns[32];

		len += snprintf(buf + len, sizeof(buf) - len, "%s%s/%d %llu %s",
				i ? ", " : "", p[i].comm, (int)p[i].pid,
				(unsigned long long)p[i].count,
				lt_format_ns(p[i].ns, ns, sizeof(ns)));
		if (len >= sizeof(buf))
			break;
	}
	return strdup(buf);
}

static char *pid_list(const pid_t *pids, size_t n)
{
	size_t i, len = 0, cap = n * 12 + 1;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, cap - len, "%s%d", i ? " " : "",
				(int)pids[i]);
	return buf;
}

static char *cycles(const struct lt_snapshot *s)
{
	char buf[4096] = "";
	size_t i, j, len = 0;

	for (i = 0; s && i < s->n_deadlocks && len < sizeof(buf); i++) {
		const struct lt_deadlock *d = &s->deadlocks[i];

		for (j = 0; j < d->n && j < LT_CYCLE_MAX && len < sizeof(buf);
		     j++)
			len += snprintf(buf + len, sizeof(buf) - len,
					"%s%.*s/%d",
					j ? " -> " : (i ? "; " : ""),
					LT_COMM_SIZE, d->comms[j],
					(int)d->pids[j]);
	}
	return strdup(buf);
}

static int give_string(pmAtomValue *atom, char *s)
{
	if (!s)
		return -ENOMEM;
	atom->cp = s;
	return PMDA_FETCH_DYNAMIC;
}

/* A figure every lock instance has, "other" too; false for other items. */
static bool lock_figure(const struct lt_lock *l, bool other, unsigned int item,
			pmAtomValue *atom)
{
	const struct lt_figures *t = &l->total, *d = &l->delta;

	switch (item) {
#define LT_FETCH_ROW(NAME, PCP)      \
	case PCP:                    \
		atom->ull = t->NAME; \
		break;
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) LT_FETCH_ROW(NAME, PCP)
#define LT_DERIVED(NAME, JSON, PCP, RECORD) LT_FETCH_ROW(NAME, PCP)
#include "figures.def"
#undef LT_FETCH_ROW
	case L_WAIT_MAX:
		atom->ull = d->max_wait_ns;
		break;
	case L_WAIT_PEAK:
		atom->ull = t->max_wait_ns;
		break;
	case L_HOLD_MAX:
		atom->ull = d->max_hold_ns;
		break;
	case L_HOLD_PEAK:
		atom->ull = t->max_hold_ns;
		break;
	case L_WAITERS:
		atom->ul = l->waiters_now;
		break;
	case L_SPINNING:
		atom->ul = l->spinning_now;
		break;
	case L_NAME:
		atom->cp = (char *)l->name;
		break;
	case L_KIND:
		atom->cp = other ? "other" : (char *)lt_kind_name(l->kind);
		break;
	default:
		return false;
	}
	return true;
}

/* What one lock has and the sum of the others has not. */
static int lock_detail(const struct lt_lock *l, unsigned int item,
		       pmAtomValue *atom)
{
	switch (item) {
	case L_HOLDER:
		atom->ul = (uint32_t)l->holder;
		break;
	case L_HOLDER_COMM:
		atom->cp = (char *)l->holder_comm;
		break;
	case L_HOLDER_TID:
		atom->ul = (uint32_t)l->holder_tid;
		break;
	case L_HOLDER_THREAD:
		atom->cp = (char *)l->holder_thread;
		break;
	case L_KEY:
		atom->cp = (char *)l->key;
		break;
	case L_ID:
		atom->ull = l->id;
		break;
	case L_ADDRESS:
		atom->ull = l->address;
		break;
	case L_DEV:
		atom->ull = l->dev;
		break;
	case L_INO:
		atom->ull = l->ino;
		break;
	case L_START:
		atom->ull = l->start;
		break;
	case L_END:
		atom->ull = l->end;
		break;
	case L_PID:
		atom->ul = l->n_pids ? (uint32_t)l->pids[0] : 0;
		break;
	case L_COMM:
		atom->cp = (char *)l->comm;
		break;
	case L_NPROCS:
		atom->ul = (uint32_t)l->n_pids;
		break;
	case L_SITE_PROCS:
		atom->ul = l->procs;
		break;
	case L_PIDS:
		return give_string(atom, pid_list(l->pids, l->n_pids));
	case L_HOLDERS:
		return give_string(atom, parties(l->holders, l->n_holders));
	case L_WAITED_BY:
		return give_string(atom, parties(l->waiters, l->n_waiters));
	case L_STACK:
		atom->cp = (char *)(l->stack ? l->stack : "");
		break;
	case L_KERNEL_TYPE:
		atom->cp = (char *)l->kernel_type;
		break;
	case L_CALLER:
		atom->cp = (char *)l->caller;
		break;
	default:
		return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_lock(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	const struct lt_lock *l;
	bool other = agent.other_inst >= 0 &&
		     inst == (unsigned int)agent.other_inst;

	l = other ? &agent.model.other : refs_find(&agent.locks, inst);
	if (!l)
		return PM_ERR_INST;
	if (lock_figure(l, other, item, atom))
		return PMDA_FETCH_STATIC;
	if (other)
		return PMDA_FETCH_NOVALUES; /* not one lock */
	return lock_detail(l, item, atom);
}

/* The fields of a party's items: a rank's, and a holder's thread's. */
enum party_field {
	F_PID = LTPM_PARTY_PID,
	F_COMM = LTPM_PARTY_COMM,
	F_COUNT = LTPM_PARTY_COUNT,
	F_TIME = LTPM_PARTY_TIME,
	F_TID = LTPM_PARTY_FIELDS + LTPM_HOLDER_TID,
	F_THREAD = LTPM_PARTY_FIELDS + LTPM_HOLDER_THREAD,
};

/* Which party and field a rank's item is: false for no such item. A
 * holder's thread (items from LTPM_HOLDER_ITEM0) is a holder's. */
static bool party_item(unsigned int item, unsigned int *waiter,
		       unsigned int *rank, enum party_field *field)
{
	if (item >= LTPM_HOLDER_ITEM0) {
		item -= LTPM_HOLDER_ITEM0;
		*waiter = 0;
		*rank = item / LTPM_HOLDER_FIELDS;
		*field = LTPM_PARTY_FIELDS + item % LTPM_HOLDER_FIELDS;
	} else {
		*waiter = item / LTPM_PARTY_ITEM(1, 0, 0);
		*rank = item % LTPM_PARTY_ITEM(1, 0, 0) / LTPM_PARTY_FIELDS;
		*field = item % LTPM_PARTY_FIELDS;
	}
	return *waiter <= 1 && *rank < LTPM_PARTY_RANKS;
}

/*
 * A lock's top holders and waiters, field by field; a rank the lock has
 * no party for is 0 or empty, so that no value of an earlier party
 * stays behind in a client's view. A holder's thread is 0 and "" where
 * a process holds the lock.
 */
static int fetch_party(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	const struct lt_lock *l;
	const struct lt_party *p = NULL;
	unsigned int waiter, rank;
	enum party_field field;
	size_t n;

	if (agent.other_inst >= 0 && inst == (unsigned int)agent.other_inst)
		return PMDA_FETCH_NOVALUES; /* not one lock */
	l = refs_find(&agent.locks, inst);
	if (!l)
		return PM_ERR_INST;
	switch (item) {
	case PA_NHOLDERS:
		atom->ul = (uint32_t)l->n_holders;
		return PMDA_FETCH_STATIC;
	case PA_NWAITERS:
		atom->ul = (uint32_t)l->n_waiters;
		return PMDA_FETCH_STATIC;
	}
	if (!party_item(item, &waiter, &rank, &field))
		return PM_ERR_PMID;
	n = waiter ? l->n_waiters : l->n_holders;
	if (rank < n && rank < LT_TOP_PARTIES)
		p = waiter ? &l->waiters[rank] : &l->holders[rank];
	switch (field) {
	case F_PID:
	case F_TID:
		atom->ul = !p ? 0 :
				(uint32_t)(field == F_PID ? p->pid : p->tid);
		break;
	case F_COMM:
	case F_THREAD:
		atom->cp = !p ? "" :
				(char *)(field == F_COMM ? p->comm : p->thread);
		break;
	case F_COUNT:
		atom->ull = p ? p->count : 0;
		break;
	case F_TIME:
		atom->ull = p ? p->ns : 0;
		break;
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_proc(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	const struct lt_proc *p = refs_find(&agent.procs, inst);

	if (!p)
		return PM_ERR_INST;
	switch (item) {
	case P_WAIT_COUNT:
		atom->ull = p->total.waits;
		break;
	case P_WAIT_TIME:
		atom->ull = p->total.wait_ns;
		break;
	case P_IO_COUNT:
		atom->ull = p->total.io_count;
		break;
	case P_IO_TIME:
		atom->ull = p->total.io_ns;
		break;
	case P_TOP_LOCK:
		atom->ull = p->top_lock;
		break;
	case P_COMM:
		atom->cp = (char *)p->comm;
		break;
	default:
		return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_file(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	const struct lt_file *f = refs_find(&agent.files, inst);
	const struct lt_file_figures *t;

	if (!f)
		return PM_ERR_INST;
	t = &f->total;
	switch (item) {
	case F_IO_COUNT:
		atom->ull = t->reads + t->writes;
		break;
	case F_IO_BYTES:
		atom->ull = t->read_bytes + t->write_bytes;
		break;
	case F_IO_TIME:
		atom->ull = t->io_ns;
		break;
	case F_IO_UNDER_LOCK:
		atom->ull = t->io_under_lock_ns;
		break;
	case F_READS:
		atom->ull = t->reads;
		break;
	case F_WRITES:
		atom->ull = t->writes;
		break;
	case F_READ_BYTES:
		atom->ull = t->read_bytes;
		break;
	case F_WRITE_BYTES:
		atom->ull = t->write_bytes;
		break;
	case F_DEV:
		atom->ull = f->dev;
		break;
	case F_INO:
		atom->ull = f->ino;
		break;
	default:
		return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_probe(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	const struct lt_snapshot *s = agent.snap;
	const struct lt_probe_cost *p;
	uint64_t cnt = 0, ns = 0;
	size_t i;

	if (item >= PR_PROG_RUNS && item <= PR_PROG_NS_PER_RUN) {
		p = refs_find(&agent.probes, inst);
		if (!p)
			return PM_ERR_INST;
		if (item == PR_PROG_RUNS)
			atom->ull = p->run_cnt;
		else if (item == PR_PROG_TIME)
			atom->ull = p->run_ns;
		else
			atom->d = p->delta_cnt ? (double)p->delta_ns /
							 (double)p->delta_cnt :
						 0;
		return PMDA_FETCH_STATIC;
	}
	if (!s)
		return PMDA_FETCH_NOVALUES;
	switch (item) {
	case PR_EVENTS:
		atom->ull = s->events_total;
		break;
	case PR_DROPS:
		atom->ull = s->drops_total;
		break;
	case PR_DROP_REASONS:
		if (inst >= LT_DROP_REASONS)
			return PM_ERR_INST;
		atom->ull = s->drop_total[inst];
		break;
	case PR_NS_PER_EVENT:
		for (i = 0; i < s->n_probes; i++) {
			cnt += s->probes[i].delta_cnt;
			ns += s->probes[i].delta_ns;
		}
		atom->d = cnt ? (double)ns / (double)cnt : 0;
		break;
	case PR_CPU:
		atom->d = s->cpu_percent;
		break;
	case PR_LOCK_ENTRIES:
		atom->ull = s->lock_entries;
		break;
	case PR_LOCK_CAPACITY:
		atom->ull = s->lock_capacity;
		break;
	case PR_FILE_ENTRIES:
		atom->ull = s->file_entries;
		break;
	case PR_FILE_CAPACITY:
		atom->ull = s->file_capacity;
		break;
	case PR_PARTY_ENTRIES:
		atom->ull = s->party_entries;
		break;
	case PR_PARTY_CAPACITY:
		atom->ull = s->party_capacity;
		break;
	case PR_FOLDING:
		atom->ul = s->folding;
		break;
	default:
		return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_kind(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	const struct lt_snapshot *s = agent.snap;

	if (inst >= LT_KIND_NR)
		return PM_ERR_INST;
	if (!s)
		return PMDA_FETCH_NOVALUES;
	atom->ull = item == K_WAIT_COUNT ? s->kind_total[inst].waits :
					   s->kind_total[inst].wait_ns;
	return PMDA_FETCH_STATIC;
}

static int fetch_hist(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	if (inst >= LT_HIST_BUCKETS)
		return PM_ERR_INST;
	atom->ull = item == H_WAIT ? agent.model.hist_wait[inst] :
		    item == H_HOLD ? agent.model.hist_hold[inst] :
				     agent.model.hist_io[inst];
	return PMDA_FETCH_STATIC;
}

static int fetch_agent(unsigned int item, pmAtomValue *atom)
{
	const struct lt_snapshot *s = agent.snap;

	switch (item) {
	case A_STATUS:
		atom->cp = agent.status;
		return PMDA_FETCH_STATIC;
	case A_READS:
		atom->ull = agent.reads;
		return PMDA_FETCH_STATIC;
	case A_OPENS:
		atom->ull = agent.opens;
		return PMDA_FETCH_STATIC;
	}
	if (!s)
		return PMDA_FETCH_NOVALUES;
	switch (item) {
	case A_LOCKS:
		atom->ul = (uint32_t)s->n_locks;
		break;
	case A_ELAPSED:
		atom->d = s->elapsed_s;
		break;
	case A_DEADLOCKS:
		atom->ul = (uint32_t)s->n_deadlocks;
		break;
	case A_CYCLES:
		return give_string(atom, cycles(s));
	default:
		return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_control(unsigned int item, pmAtomValue *atom)
{
	static char pids_buf[MAX_PIDS * 12 + 1];
	char *p;

	switch (item) {
	case C_STACKS:
		atom->ul = agent.stacks;
		break;
	case C_PIDS:
		p = pid_list(agent.pids, agent.n_pids);
		snprintf(pids_buf, sizeof(pids_buf), "%s", p ? p : "");
		free(p);
		atom->cp = pids_buf;
		break;
	case C_TOP:
		atom->ul = (uint32_t)agent.model.top_n;
		break;
	case C_INTERVAL:
		atom->ul = agent.interval_ms;
		break;
	case C_ERROR:
		atom->cp = agent.control_error;
		break;
	case C_RETIRE:
		atom->ul = agent.retire_s;
		break;
	case C_IO:
		atom->ul = !agent.no_io;
		break;
	default:
		return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_cb(pmdaMetric *mdesc, unsigned int inst, pmAtomValue *atom)
{
	unsigned int cluster = pmID_cluster(mdesc->m_desc.pmid);
	unsigned int item = pmID_item(mdesc->m_desc.pmid);

	switch (cluster) {
	case CL_LOCK:
		return fetch_lock(item, inst, atom);
	case CL_PARTY:
		return fetch_party(item, inst, atom);
	case CL_KIND:
		return fetch_kind(item, inst, atom);
	case CL_PROC:
		return fetch_proc(item, inst, atom);
	case CL_FILE:
		return fetch_file(item, inst, atom);
	case CL_PROBE:
		return fetch_probe(item, inst, atom);
	case CL_HIST:
		return fetch_hist(item, inst, atom);
	case CL_AGENT:
		return fetch_agent(item, atom);
	case CL_CONTROL:
		return fetch_control(item, atom);
	}
	return PM_ERR_PMID;
}

void fetch_callbacks(pmdaInterface *dispatch)
{
	pmdaSetFetchCallBack(dispatch, fetch_cb);
	dispatch->version.seven.fetch = fetch;
	dispatch->version.seven.instance = instance;
}
