// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pmdalocktop: the locktop collector as a Performance Co-Pilot agent.
 *
 * The main thread waits on pmcd's pipe, a signalfd, the read deadline
 * and the loader's eventfd: a PDU is answered at once from the latest
 * snapshot, and the collector is read once per interval, so a fetch
 * never waits for BPF. Loading the probes takes a second or so and runs
 * in a loader thread; meanwhile a request for values is answered with
 * PM_ERR_PMDANOTREADY, so pmcd answers clients itself until the agent
 * sends PM_ERR_PMDAREADY. pmcd starts the agent "notready" (pmcd.conf)
 * for the first load.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <pcp/pmapi.h>
#include <pcp/pmda.h>
#include "collector.h"
#include "domain.h"
#include "metrics.h"
#include "model.h"

#define MAX_PIDS 64
#define INTERVAL_MIN_MS 100
#define INTERVAL_MAX_MS 60000
#define RETIRE_MAX_S (31 * 86400)
#define RETRY_MS 10000 /* after the probes failed to load */
#define PURGE_S 3600 /* forget instances not seen for this long */

static pmdaInstid kind_insts[LT_KIND_NR];
static pmdaInstid hist_insts[LT_HIST_BUCKETS];
static char hist_names[LT_HIST_BUCKETS][48];

static pmdaIndom indomtab[N_INDOMS] = {
	[LOCK_INDOM] = { LOCK_INDOM, 0, NULL },
	[KIND_INDOM] = { KIND_INDOM, LT_KIND_NR, kind_insts },
	[PROC_INDOM] = { PROC_INDOM, 0, NULL },
	[FILE_INDOM] = { FILE_INDOM, 0, NULL },
	[PROBE_INDOM] = { PROBE_INDOM, 0, NULL },
	[HIST_INDOM] = { HIST_INDOM, LT_HIST_BUCKETS, hist_insts },
};

/* The metric table's rows as pmda wants them, in PMID order. */
static pmdaMetric metrictab[LTPM_N_METRICS];

static int metric_cmp(const void *x, const void *y)
{
	pmID p = ((const pmdaMetric *)x)->m_desc.pmid;
	pmID q = ((const pmdaMetric *)y)->m_desc.pmid;

	return (p > q) - (p < q);
}

static void init_metrictab(void)
{
	size_t i;

	for (i = 0; i < LTPM_N_METRICS; i++) {
		const struct ltpm_metric *m = &ltpm_metrics[i];

		metrictab[i].m_user = NULL;
		metrictab[i].m_desc = (pmDesc){
			.pmid = PMDA_PMID(m->cluster, m->item),
			.type = m->type,
			.indom = m->indom,
			.sem = m->sem,
			.units = m->units,
		};
	}
	qsort(metrictab, LTPM_N_METRICS, sizeof(metrictab[0]), metric_cmp);
}

/* An instance of a cached domain and what it stands for this round. */
struct inst_ref {
	int inst;
	const void *ptr;
};

struct inst_refs {
	struct inst_ref *v;
	size_t n, cap;
};

static struct {
	pmdaInterface dispatch;
	struct lt_collector *collector;
	const struct lt_snapshot *snap; /* NULL until the first read */
	struct ltpm_model model;
	struct inst_refs locks, procs, files, probes;
	struct lt_lock *merged; /* locks of one instance, summed */
	size_t cap_merged;
	int other_inst;

	/* What the collector is opened with; stores change them. */
	bool stacks;
	pid_t pids[MAX_PIDS];
	size_t n_pids;
	unsigned int interval_ms;
	unsigned int retire_s; /* see lt_options; a store applies it at once */
	bool reopen; /* asked for by a store, done after the reply */

	/* The settings before a store, to go back to if they fail. */
	bool prev_stacks;
	pid_t prev_pids[MAX_PIDS];
	size_t prev_n_pids;
	bool reverting; /* the load running is of a store's settings */
	char control_error[512];

	/* The loader thread and what it hands back. */
	bool loading;
	bool notready_said; /* pmcd thinks we are not ready */
	pthread_t loader;
	int loaded_fd; /* eventfd the loader signals when done */
	struct lt_options load_opts;
	pid_t load_pids[MAX_PIDS];
	struct lt_collector *loaded;
	int load_ret;
	char load_err[512];

	struct timespec next_read, next_purge;
	char status[256];
	uint64_t reads, opens;

	/* uid of each client context, from pmcd's attributes; -1: unknown */
	int *ctx_uid;
	int n_ctx;
} a = {
	.other_inst = -1,
	.interval_ms = 1000,
	.retire_s = LT_RETIRE_S,
	.loaded_fd = -1,
	/* pmcd starts the agent "notready" (the Install's ipc_prot). */
	.notready_said = true,
};

static int ms_until(const struct timespec *t)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (t->tv_sec - now.tv_sec) * 1000LL +
	     (t->tv_nsec - now.tv_nsec) / 1000000;
	if (ms < 0)
		return 0;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void after_ms(struct timespec *t, unsigned int ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static int refs_push(struct inst_refs *r, int inst, const void *ptr)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct inst_ref *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
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

static const void *refs_find(const struct inst_refs *r, unsigned int inst)
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

/*
 * Makes the instance for key active and returns its number. An entity
 * seen before gets its old name and number back; a new one gets the
 * first of base and base[tag] that no other instance uses.
 */
static int activate(int serial, const char *base, const void *key, int keylen,
		    const char *const *tags, size_t n_tags)
{
	pmInDom indom = indom_of(serial);
	char name[LT_NAME_LEN + 64];
	char *oname = NULL;
	int inst, sts;
	size_t t;

	sts = pmdaCacheLookupKey(indom, NULL, keylen, key, &oname, &inst, NULL);
	if (sts == PMDA_CACHE_ACTIVE)
		return inst;
	if (sts == PMDA_CACHE_INACTIVE && oname) {
		/* With the key again: a plain store would drop it. */
		snprintf(name, sizeof(name), "%s", oname);
		return pmdaCacheStoreKey(indom, PMDA_CACHE_ADD, name, keylen,
					 key, NULL);
	}

	for (t = 0; t <= n_tags; t++) {
		if (t == 0)
			snprintf(name, sizeof(name), "%s", base);
		else
			ltpm_unique_name(base, tags[t - 1], name, sizeof(name));
		if (pmdaCacheLookupName(indom, name, NULL, NULL) >= 0)
			continue;
		sts = pmdaCacheStoreKey(indom, PMDA_CACHE_ADD, name, keylen,
					key, NULL);
		if (sts >= 0)
			return sts;
	}
	return PM_ERR_INST;
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
	const struct ltpm_model *m = &a.model;
	char key[LT_NAME_LEN + 16], pidtag[32], idtag[32];
	const char *tags[] = { pidtag, idtag };
	struct inst_ref *seen;
	struct lt_lock *sum;
	size_t i, n_merged = 0;
	int inst;

	pmdaCacheOp(indom_of(LOCK_INDOM), PMDA_CACHE_INACTIVE);
	a.locks.n = 0;
	/* Room for every sum up front: the refs point into it. */
	if (m->n_locks > a.cap_merged) {
		sum = realloc(a.merged, m->n_locks * sizeof(*sum));
		if (sum) {
			a.merged = sum;
			a.cap_merged = m->n_locks;
		}
	}
	a.other_inst = activate(LOCK_INDOM, "other", "\001other", 6, NULL, 0);
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
		seen = refs_lookup(&a.locks, a.locks.n, inst);
		if (seen && seen->ptr >= (const void *)a.merged &&
		    seen->ptr < (const void *)(a.merged + n_merged)) {
			ltpm_lock_add((struct lt_lock *)seen->ptr, l);
			continue;
		}
		if (seen && n_merged < a.cap_merged) {
			sum = &a.merged[n_merged++];
			*sum = *(const struct lt_lock *)seen->ptr;
			ltpm_lock_add(sum, l);
			seen->ptr = sum;
			continue;
		}
		if (seen)
			continue; /* no room to sum: the first one stands */
		if (refs_push(&a.locks, inst, l))
			break;
	}
	refs_sort(&a.locks);
}

static void refresh_procs(void)
{
	const struct ltpm_model *m = &a.model;
	char name[LT_COMM_SIZE + 32];
	size_t i;
	int inst;

	pmdaCacheOp(indom_of(PROC_INDOM), PMDA_CACHE_INACTIVE);
	a.procs.n = 0;
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
		if (inst >= 0 && refs_push(&a.procs, inst, p))
			break;
	}
	refs_sort(&a.procs);
}

static void refresh_files(void)
{
	const struct ltpm_model *m = &a.model;
	char tag[48];
	const char *tags[] = { tag };
	size_t i;
	int inst;

	pmdaCacheOp(indom_of(FILE_INDOM), PMDA_CACHE_INACTIVE);
	a.files.n = 0;
	for (i = 0; i < m->n_files; i++) {
		const struct lt_file *f = m->files[i];
		uint64_t key[2] = { f->dev, f->ino };

		snprintf(tag, sizeof(tag), "ino:%llu",
			 (unsigned long long)f->ino);
		inst = activate(FILE_INDOM, f->name[0] ? f->name : "?", key,
				sizeof(key), tags, 1);
		if (inst >= 0 && refs_push(&a.files, inst, f))
			break;
	}
	refs_sort(&a.files);
}

static void refresh_probes(void)
{
	const struct lt_snapshot *s = a.snap;
	size_t i;
	int inst;

	pmdaCacheOp(indom_of(PROBE_INDOM), PMDA_CACHE_INACTIVE);
	a.probes.n = 0;
	for (i = 0; s && i < s->n_probes; i++) {
		const struct lt_probe_cost *p = &s->probes[i];
		char name[sizeof(p->name) + 1];

		snprintf(name, sizeof(name), "%.*s", (int)sizeof(p->name),
			 p->name);
		inst = activate(PROBE_INDOM, name[0] ? name : "?", name,
				(int)strlen(name), NULL, 0);
		if (inst >= 0 && refs_push(&a.probes, inst, p))
			break;
	}
	refs_sort(&a.probes);
}

static void refresh_all(void)
{
	refresh_locks();
	refresh_procs();
	refresh_files();
	refresh_probes();
}

static void set_status(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void set_status(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a.status, sizeof(a.status), fmt, ap);
	va_end(ap);
}

static void close_collector(void)
{
	lt_collector_close(a.collector);
	a.collector = NULL;
	a.snap = NULL;
	ltpm_model_forget(&a.model);
	refresh_all();
}

static void *load_main(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	a.load_ret = lt_collector_open(&a.load_opts, &a.loaded, a.load_err,
				       sizeof(a.load_err));
	if (write(a.loaded_fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write cannot fail here */
	return NULL;
}

/* Starts loading the probes with the current settings. */
static void start_load(void)
{
	int err;

	memcpy(a.load_pids, a.pids, a.n_pids * sizeof(a.pids[0]));
	a.load_opts = (struct lt_options){
		.pids = a.load_pids,
		.n_pids = a.n_pids,
		.interval_ms = a.interval_ms,
		.stacks = a.stacks,
		/* A long-lived agent: the dead's private locks go. */
		.retire_s = a.retire_s,
	};
	a.loaded = NULL;
	a.load_err[0] = '\0';
	set_status("loading");
	err = pthread_create(&a.loader, NULL, load_main, NULL);
	if (err) {
		set_status("error: cannot start the loader: %s", strerror(err));
		pmNotifyErr(LOG_ERR, "%s", a.status);
		after_ms(&a.next_read, RETRY_MS);
		return;
	}
	a.loading = true;
}

/* The loader is done: take its collector, or say why there is none. */
static void finish_load(void)
{
	uint64_t n;

	if (read(a.loaded_fd, &n, sizeof(n)) != sizeof(n))
		return;
	pthread_join(a.loader, NULL);
	a.loading = false;
	if (!a.load_ret) {
		a.collector = a.loaded;
		a.opens++;
		a.reverting = false;
		set_status("ok");
		pmNotifyErr(LOG_INFO,
			    "probes loaded (stacks %s, %zu pids, top %zu)",
			    a.stacks ? "on" : "off", a.n_pids, a.model.top_n);
		after_ms(&a.next_read, a.interval_ms);
	} else if (a.reverting) {
		/* A store asked for what cannot be: back to what worked. */
		snprintf(a.control_error, sizeof(a.control_error), "%s",
			 a.load_err[0] ? a.load_err : strerror(-a.load_ret));
		pmNotifyErr(LOG_ERR,
			    "cannot load the probes as asked: %s; going back "
			    "to the previous settings",
			    a.control_error);
		a.reverting = false;
		a.stacks = a.prev_stacks;
		memcpy(a.pids, a.prev_pids, sizeof(a.pids));
		a.n_pids = a.prev_n_pids;
		start_load();
		return;
	} else {
		set_status("error: %s",
			   a.load_err[0] ? a.load_err : strerror(-a.load_ret));
		pmNotifyErr(LOG_ERR,
			    "cannot load the probes: %s; retrying in %ds",
			    a.status + 7, RETRY_MS / 1000);
		after_ms(&a.next_read, RETRY_MS);
	}
	refresh_all();
	if (a.notready_said) {
		pmdaSendError(&a.dispatch, PM_ERR_PMDAREADY);
		a.notready_said = false;
	}
}

static void read_collector(void)
{
	const struct lt_snapshot *s;
	int ret;

	if (!a.collector) {
		start_load();
		return;
	}
	after_ms(&a.next_read, a.interval_ms);
	ret = lt_collector_read(a.collector, &s);
	if (ret) {
		set_status("error: reading the probes: %s", strerror(-ret));
		pmNotifyErr(LOG_ERR, "%s", a.status);
		return;
	}
	a.reads++;
	a.snap = s;
	if (strcmp(a.status, "ok"))
		set_status("ok");
	ret = ltpm_model_update(&a.model, s);
	if (ret)
		pmNotifyErr(LOG_ERR, "cannot rank locks: %s", strerror(-ret));
	refresh_all();
}

/* Reloads with the settings a store has set, after its reply went out. */
static void reopen_collector(void)
{
	a.reopen = false;
	a.reverting = true;
	a.control_error[0] = '\0';
	close_collector();
	start_load();
}

/*
 * While the probes load, requests that need them are answered "not
 * ready" once; pmcd then answers clients itself and sends nothing more
 * until PM_ERR_PMDAREADY. A second NOTREADY would be a protocol error.
 */
static int not_ready(void)
{
	if (a.notready_said)
		return PM_ERR_AGAIN;
	a.notready_said = true;
	return PM_ERR_PMDANOTREADY;
}

static int fetch(int numpmid, pmID pmidlist[], pmResult **resp, pmdaExt *pmda)
{
	if (a.loading)
		return not_ready();
	return pmdaFetch(numpmid, pmidlist, resp, pmda);
}

static int instance(pmInDom indom, int inst, char *name, pmInResult **result,
		    pmdaExt *pmda)
{
	if (a.loading)
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

static int fetch_lock(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	const struct lt_lock *l;
	bool other = a.other_inst >= 0 && inst == (unsigned int)a.other_inst;
	const struct lt_figures *t, *d;

	l = other ? &a.model.other : refs_find(&a.locks, inst);
	if (!l)
		return PM_ERR_INST;
	t = &l->total;
	d = &l->delta;
	switch (item) {
	case L_WAIT_COUNT:
		atom->ull = t->waits;
		break;
	case L_WAIT_TIME:
		atom->ull = t->wait_ns;
		break;
	case L_WAIT_MAX:
		atom->ull = d->max_wait_ns;
		break;
	case L_WAIT_PEAK:
		atom->ull = t->max_wait_ns;
		break;
	case L_HOLD_TIME:
		atom->ull = t->hold_ns;
		break;
	case L_HOLD_MAX:
		atom->ull = d->max_hold_ns;
		break;
	case L_HOLD_PEAK:
		atom->ull = t->max_hold_ns;
		break;
	case L_HOLD_ESTIMATED:
		atom->ull = t->holds_estimated;
		break;
	case L_ACQUIRES:
		atom->ull = t->acquires;
		break;
	case L_CONTENDED:
		atom->ull = t->contended;
		break;
	case L_TRYLOCK_FAILURES:
		atom->ull = t->trylock_failures;
		break;
	case L_IO_UNDER_LOCK:
		atom->ull = t->io_under_lock_ns;
		break;
	case L_WAKES:
		atom->ull = t->wakes;
		break;
	case L_TIMEOUTS:
		atom->ull = t->timeouts;
		break;
	case L_INTERRUPTED:
		atom->ull = t->interrupted;
		break;
	case L_VALUE_CHANGED:
		atom->ull = t->value_changed;
		break;
	case L_OWNER_DIED:
		atom->ull = t->owner_died;
		break;
	case L_WAITERS:
		atom->ul = l->waiters_now;
		break;
	case L_NAME:
		atom->cp = (char *)l->name;
		break;
	case L_KIND:
		atom->cp = other ? "other" : (char *)lt_kind_name(l->kind);
		break;
	default:
		if (other)
			return PMDA_FETCH_NOVALUES; /* not one lock */
		switch (item) {
		case L_HOLDER:
			atom->ul = (uint32_t)l->holder;
			break;
		case L_HOLDER_COMM:
			atom->cp = (char *)l->holder_comm;
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
		case L_PIDS:
			return give_string(atom, pid_list(l->pids, l->n_pids));
		case L_HOLDERS:
			return give_string(atom,
					   parties(l->holders, l->n_holders));
		case L_WAITED_BY:
			return give_string(atom,
					   parties(l->waiters, l->n_waiters));
		case L_STACK:
			atom->cp = (char *)(l->stack ? l->stack : "");
			break;
		default:
			return PM_ERR_PMID;
		}
	}
	return PMDA_FETCH_STATIC;
}

static int fetch_proc(unsigned int item, unsigned int inst, pmAtomValue *atom)
{
	const struct lt_proc *p = refs_find(&a.procs, inst);

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
	const struct lt_file *f = refs_find(&a.files, inst);
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
	const struct lt_snapshot *s = a.snap;
	const struct lt_probe_cost *p;
	uint64_t cnt = 0, ns = 0;
	size_t i;

	if (item >= PR_PROG_RUNS && item <= PR_PROG_NS_PER_RUN) {
		p = refs_find(&a.probes, inst);
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

static int fetch_cb(pmdaMetric *mdesc, unsigned int inst, pmAtomValue *atom)
{
	unsigned int cluster = pmID_cluster(mdesc->m_desc.pmid);
	unsigned int item = pmID_item(mdesc->m_desc.pmid);
	const struct lt_snapshot *s = a.snap;
	static char pids_buf[MAX_PIDS * 12 + 1];

	switch (cluster) {
	case CL_LOCK:
		return fetch_lock(item, inst, atom);
	case CL_KIND:
		if (inst >= LT_KIND_NR)
			return PM_ERR_INST;
		if (!s)
			return PMDA_FETCH_NOVALUES;
		atom->ull = item == K_WAIT_COUNT ? s->kind_total[inst].waits :
						   s->kind_total[inst].wait_ns;
		return PMDA_FETCH_STATIC;
	case CL_PROC:
		return fetch_proc(item, inst, atom);
	case CL_FILE:
		return fetch_file(item, inst, atom);
	case CL_PROBE:
		return fetch_probe(item, inst, atom);
	case CL_HIST:
		if (inst >= LT_HIST_BUCKETS)
			return PM_ERR_INST;
		atom->ull = item == H_WAIT ? a.model.hist_wait[inst] :
			    item == H_HOLD ? a.model.hist_hold[inst] :
					     a.model.hist_io[inst];
		return PMDA_FETCH_STATIC;
	case CL_AGENT:
		switch (item) {
		case A_STATUS:
			atom->cp = a.status;
			return PMDA_FETCH_STATIC;
		case A_READS:
			atom->ull = a.reads;
			return PMDA_FETCH_STATIC;
		case A_OPENS:
			atom->ull = a.opens;
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
	case CL_CONTROL:
		switch (item) {
		case C_STACKS:
			atom->ul = a.stacks;
			break;
		case C_PIDS: {
			char *p = pid_list(a.pids, a.n_pids);

			snprintf(pids_buf, sizeof(pids_buf), "%s", p ? p : "");
			free(p);
			atom->cp = pids_buf;
			break;
		}
		case C_TOP:
			atom->ul = (uint32_t)a.model.top_n;
			break;
		case C_INTERVAL:
			atom->ul = a.interval_ms;
			break;
		case C_ERROR:
			atom->cp = a.control_error;
			break;
		case C_RETIRE:
			atom->ul = a.retire_s;
			break;
		default:
			return PM_ERR_PMID;
		}
		return PMDA_FETCH_STATIC;
	}
	return PM_ERR_PMID;
}

static void purge_old(void)
{
	if (ms_until(&a.next_purge) > 0)
		return;
	after_ms(&a.next_purge, PURGE_S * 1000 / 4);
	pmdaCachePurge(indom_of(LOCK_INDOM), PURGE_S);
	pmdaCachePurge(indom_of(PROC_INDOM), PURGE_S);
	pmdaCachePurge(indom_of(FILE_INDOM), PURGE_S);
}

static int ctx_uid(int ctx)
{
	return ctx >= 0 && ctx < a.n_ctx ? a.ctx_uid[ctx] : -1;
}

static int attribute(int ctx, int attr, const char *value, int length,
		     pmdaExt *pmda)
{
	if (attr == PMDA_ATTR_USERID && ctx >= 0 && value) {
		if (ctx >= a.n_ctx) {
			int n = ctx + 16, i;
			int *v = realloc(a.ctx_uid, n * sizeof(*v));

			if (!v)
				return -ENOMEM;
			for (i = a.n_ctx; i < n; i++)
				v[i] = -1;
			a.ctx_uid = v;
			a.n_ctx = n;
		}
		a.ctx_uid[ctx] = atoi(value);
	}
	return pmdaAttribute(ctx, attr, value, length, pmda);
}

static void end_context(int ctx)
{
	if (ctx >= 0 && ctx < a.n_ctx)
		a.ctx_uid[ctx] = -1;
}

static int store_one(pmValueSet *vs)
{
	unsigned int item = pmID_item(vs->pmid);
	pmAtomValue av;
	pid_t pids[MAX_PIDS];
	int n, sts;

	if (pmID_cluster(vs->pmid) != CL_CONTROL)
		return PM_ERR_PERMISSION; /* only controls are writable */
	if (vs->numval != 1)
		return PM_ERR_BADSTORE;
	switch (item) {
	case C_STACKS:
	case C_TOP:
	case C_INTERVAL:
	case C_RETIRE:
		sts = pmExtractValue(vs->valfmt, &vs->vlist[0], PM_TYPE_U32,
				     &av, PM_TYPE_U32);
		if (sts < 0)
			return sts;
		if (item == C_STACKS) {
			if (av.ul > 1)
				return PM_ERR_BADSTORE;
			if ((bool)av.ul != a.stacks) {
				a.stacks = av.ul;
				a.reopen = true;
			}
		} else if (item == C_TOP) {
			if (av.ul < 1 || av.ul > LTPM_TOP_MAX)
				return PM_ERR_BADSTORE;
			ltpm_model_set_top(&a.model, av.ul);
		} else if (item == C_RETIRE) {
			if (av.ul > RETIRE_MAX_S)
				return PM_ERR_BADSTORE;
			a.retire_s = av.ul;
			if (a.collector)
				lt_collector_set_retire(a.collector,
							a.retire_s);
		} else {
			if (av.ul < INTERVAL_MIN_MS || av.ul > INTERVAL_MAX_MS)
				return PM_ERR_BADSTORE;
			a.interval_ms = av.ul;
			if (a.collector)
				lt_collector_set_interval(a.collector,
							  a.interval_ms);
			after_ms(&a.next_read, a.interval_ms);
		}
		break;
	case C_PIDS:
		sts = pmExtractValue(vs->valfmt, &vs->vlist[0], PM_TYPE_STRING,
				     &av, PM_TYPE_STRING);
		if (sts < 0)
			return sts;
		n = ltpm_parse_pids(av.cp, pids, MAX_PIDS);
		free(av.cp);
		if (n < 0)
			return PM_ERR_BADSTORE;
		memcpy(a.pids, pids, n * sizeof(pids[0]));
		a.n_pids = n;
		a.reopen = true;
		break;
	default:
		return PM_ERR_PERMISSION;
	}
	return 0;
}

static int store(pmResult *result, pmdaExt *pmda)
{
	int ctx = pmdaGetContext();
	int i, sts;

	(void)pmda;
	if (a.loading)
		return not_ready();
	/*
	 * Only root may change what the probes trace: pmcd passes the
	 * client's uid for local connections; others have none.
	 */
	if (ctx_uid(ctx) != 0) {
		pmNotifyErr(
			LOG_WARNING,
			"store refused: client context %d (uid %d) is not root",
			ctx, ctx_uid(ctx));
		return PM_ERR_PERMISSION;
	}
	if (!a.reopen) {
		a.prev_stacks = a.stacks;
		memcpy(a.prev_pids, a.pids, sizeof(a.pids));
		a.prev_n_pids = a.n_pids;
	}
	for (i = 0; i < result->numpmid; i++) {
		sts = store_one(result->vset[i]);
		if (sts < 0)
			return sts;
	}
	pmNotifyErr(LOG_INFO,
		    "control changed: stacks %d, %zu pids, top %zu, "
		    "interval %ums%s",
		    a.stacks, a.n_pids, a.model.top_n, a.interval_ms,
		    a.reopen ? ", reopening the probes" : "");
	return 0;
}

static void init_indoms(void)
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
}

static void help_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	/* The help text lives beside the agent wherever it was installed. */
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash && (size_t)(slash - exe) + sizeof("/help") <= len) {
			memcpy(buf, exe, slash - exe);
			strcpy(buf + (slash - exe), "/help");
			return;
		}
	}
	snprintf(buf, len, "%s/locktop/help", pmGetConfig("PCP_PMDAS_DIR"));
}

static pmLongOptions longopts[] = {
	PMDA_OPTIONS_HEADER("Options"),
	PMOPT_DEBUG,
	PMDAOPT_DOMAIN,
	PMDAOPT_LOGFILE,
	{ "interval", 1, 't', "MSEC", "read the probes every MSEC ms [1000]" },
	{ "top", 1, 'N', "N", "export the N busiest locks [20]" },
	{ "stacks", 0, 's', NULL, "record the user stack of contended waits" },
	PMOPT_HELP,
	PMDA_OPTIONS_END
};

static pmdaOptions opts = {
	.short_options = "D:d:l:t:N:s?",
	.long_options = longopts,
};

#ifdef LOCKTOP_ASAN
/*
 * Sanitizer builds only: libpcp keeps process-lifetime allocations that
 * LeakSanitizer would report at every exit, into the agent's log.
 * Memory errors are still reported there.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

int main(int argc, char **argv)
{
	char helppath[PATH_MAX];
	struct pollfd pfd[3];
	sigset_t mask;
	int c, sig_fd, in_fd, sts = 0;
	long top = LTPM_TOP_DEFAULT;

	pmSetProgname(argv[0]);
	help_path(helppath, sizeof(helppath));
	pmdaDaemon(&a.dispatch, PMDA_INTERFACE_7, pmGetProgname(), LOCKTOP,
		   "locktop.log", helppath);

	while ((c = pmdaGetOptions(argc, argv, &opts, &a.dispatch)) != EOF) {
		switch (c) {
		case 't':
			a.interval_ms = (unsigned int)atoi(opts.optarg);
			if (a.interval_ms < INTERVAL_MIN_MS ||
			    a.interval_ms > INTERVAL_MAX_MS)
				opts.errors++;
			break;
		case 'N':
			top = atol(opts.optarg);
			if (top < 1 || top > LTPM_TOP_MAX)
				opts.errors++;
			break;
		case 's':
			a.stacks = true;
			break;
		}
	}
	if (opts.errors || opts.optind != argc) {
		pmdaUsageMessage(&opts);
		exit(1);
	}

	ltpm_model_init(&a.model, (size_t)top);
	init_indoms();
	set_status("loading");

	/* SIGTERM and friends end the loop, so the probes are detached. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);

	pmdaOpenLog(&a.dispatch);
	pmdaSetCommFlags(&a.dispatch, PMDA_FLAG_AUTHORIZE);
	a.dispatch.version.seven.store = store;
	a.dispatch.version.seven.attribute = attribute;
	pmdaSetFetchCallBack(&a.dispatch, fetch_cb);
	pmdaSetEndContextCallBack(&a.dispatch, end_context);
	a.dispatch.version.seven.fetch = fetch;
	a.dispatch.version.seven.instance = instance;
	init_metrictab();
	pmdaInit(&a.dispatch, indomtab, N_INDOMS, metrictab, LTPM_N_METRICS);
	if (a.dispatch.status) {
		pmNotifyErr(LOG_ERR, "pmdaInit: %s",
			    pmErrStr(a.dispatch.status));
		exit(1);
	}
	pmdaConnect(&a.dispatch);
	if (a.dispatch.status) {
		pmNotifyErr(LOG_ERR, "pmdaConnect: %s",
			    pmErrStr(a.dispatch.status));
		exit(1);
	}

	a.loaded_fd = eventfd(0, EFD_CLOEXEC);
	if (a.loaded_fd < 0) {
		pmNotifyErr(LOG_ERR, "eventfd: %s", strerror(errno));
		exit(1);
	}
	refresh_all();
	start_load();
	after_ms(&a.next_purge, PURGE_S * 1000 / 4);

	in_fd = __pmdaInFd(&a.dispatch);
	pfd[0].fd = in_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = sig_fd;
	pfd[1].events = POLLIN;
	pfd[2].fd = a.loaded_fd;
	pfd[2].events = POLLIN;
	for (;;) {
		int timeout = a.loading ? -1 : ms_until(&a.next_read);
		int ret;

		if (a.collector && !a.loading &&
		    (timeout < 0 || timeout > LT_TEND_MS))
			timeout = LT_TEND_MS;
		ret = poll(pfd, 3, timeout);
		if (a.collector && !a.loading)
			lt_collector_tend(a.collector);

		if (ret < 0 && errno != EINTR) {
			pmNotifyErr(LOG_ERR, "poll: %s", strerror(errno));
			sts = 1;
			break;
		}
		if (ret > 0 && (pfd[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) == sizeof(si))
				pmNotifyErr(LOG_INFO, "signal %u: exiting",
					    si.ssi_signo);
			break;
		}
		if (ret > 0 && (pfd[2].revents & POLLIN))
			finish_load();
		if (ret > 0 && pfd[0].revents) {
			/* EOF: pmcd is gone or has let us go. */
			if (__pmdaMainPDU(&a.dispatch) < 0)
				break;
			if (a.reopen && !a.loading)
				reopen_collector();
		}
		if (!a.loading && ms_until(&a.next_read) == 0) {
			read_collector();
			purge_old();
		}
	}
	if (a.loading) {
		pthread_join(a.loader, NULL);
		lt_collector_close(a.loaded);
	}
	lt_collector_close(a.collector);
	pmNotifyErr(LOG_INFO, "probes detached");
	ltpm_model_free(&a.model);
	free(a.locks.v);
	free(a.merged);
	free(a.procs.v);
	free(a.files.v);
	free(a.probes.v);
	free(a.ctx_uid);
	return sts;
}
