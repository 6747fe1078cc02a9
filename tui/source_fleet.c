// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A fleet: one or several pmcd, each with its pmdalocktop, read as one
 * source (locktop --host A, locktop --host A,B,C). Every host is a PCP
 * host source with its own context; a read reads them all and merges
 * their snapshots into one. Every lock, process, file and deadlock keeps
 * its host, lock ids are made unique across hosts (the host's index in
 * the top bits), with several hosts a lock's key ends in "@HOST" so that
 * records of the same fleet compare lock by lock (one host's keep their
 * keys, so that records of two hosts compare), the header's figures are
 * the hosts' sums, and snapshot.hosts says what each host added and
 * whether it answered.
 *
 * A host that stops answering is marked down, with the error and the
 * time; the others go on. Its context is connected again
 * (pmReconnectContext()) at most every FLEET_RETRY_S seconds, and a host
 * that did not answer at the start is opened again as often. A down
 * host's figures of the interval are missing, not zero: its locks keep
 * their totals until its loss, for the run's summary, and leave the
 * interval's rows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "source.h"

#define FLEET_MAX_HOSTS 64
#define FLEET_RETRY_S 2.0
#define FLEET_ID_SHIFT 48 /* a lock id's host bits start here */

struct member {
	struct source *src; /* NULL: never opened yet */
	const struct lt_snapshot *last; /* the latest good one, or NULL */
	bool live; /* read in this round */
	bool lost; /* its context failed: connect again before reading */
	double next_try; /* monotonic seconds */
};

struct source {
	size_t n;
	struct member m[FLEET_MAX_HOSTS];
	struct lt_host hosts[FLEET_MAX_HOSTS];
	unsigned int delta_ms;
	double first_ts;
	struct lt_snapshot out;
	struct lt_lock *locks;
	struct lt_proc *procs;
	struct lt_file *files;
	struct lt_probe_cost *probes;
	struct lt_deadlock *deadlocks;
	size_t cap_locks, cap_procs, cap_files, cap_probes, cap_deadlocks;
};

static double mono_s(void)
{
	return (double)lt_mono_ns() / 1e9;
}

static void mark_down(struct source *s, size_t i, const char *why)
{
	struct lt_host *h = &s->hosts[i];

	if (h->up || !h->down_since)
		h->down_since = (double)lt_wall_ns() / 1e9;
	h->up = false;
	snprintf(h->why, sizeof(h->why), "%s", why);
	s->m[i].live = false;
	s->m[i].next_try = mono_s() + FLEET_RETRY_S;
}

/* Opens host i's context; its first fetch is the base of its figures. */
static int open_member(struct source *s, size_t i)
{
	struct source_params p = { 0 };
	char err[256];

	p.host = s->hosts[i].name;
	p.collector.interval_ms = s->delta_ms;
	if (source_pcp_host.open(&p, &s->m[i].src, err, sizeof(err))) {
		mark_down(s, i, err);
		return -1;
	}
	s->hosts[i].up = true;
	s->hosts[i].why[0] = 0;
	return 0;
}

static void fleet_close(struct source *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		source_pcp_host.close(s->m[i].src);
	free(s->locks);
	free(s->procs);
	free(s->files);
	free(s->probes);
	free(s->deadlocks);
	free(s);
}

static int fleet_open(const struct source_params *p, struct source **out,
		      char *err, size_t err_len)
{
	struct source *s;
	size_t i, up = 0;

	*out = NULL;
	if (p->n_hosts > FLEET_MAX_HOSTS) {
		snprintf(err, err_len, "at most %d hosts", FLEET_MAX_HOSTS);
		return -E2BIG;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	/* A host that does not answer must not hold the others for long. */
	setenv("PMCD_CONNECT_TIMEOUT", "3", 0);
	setenv("PMCD_REQUEST_TIMEOUT", "5", 0);
	s->n = p->n_hosts ? p->n_hosts : 1;
	s->delta_ms = p->collector.interval_ms ? p->collector.interval_ms :
						 1000;
	s->first_ts = (double)lt_wall_ns() / 1e9;
	for (i = 0; i < s->n; i++)
		snprintf(s->hosts[i].name, sizeof(s->hosts[i].name), "%s",
			 p->n_hosts ? p->hosts[i] : p->host);
	for (i = 0; i < s->n; i++)
		if (!open_member(s, i))
			up++;
	if (!up) {
		/* Not one answers: that is a wrong command line. */
		if (s->n == 1)
			snprintf(err, err_len, "%s", s->hosts[0].why);
		else
			snprintf(err, err_len, "no host answers; %s: %s",
				 s->hosts[0].name, s->hosts[0].why);
		fleet_close(s);
		return -EIO;
	}
	*out = s;
	return 0;
}

/* Reads host i, connecting it again first when it was lost. */
static void read_member(struct source *s, size_t i)
{
	struct member *m = &s->m[i];
	const struct lt_snapshot *snap;
	char err[256];
	bool end;

	m->live = false;
	if (!m->src || m->lost) {
		if (mono_s() < m->next_try)
			return;
		if (!m->src) {
			/* Its first fetch is a base: figures from the next. */
			open_member(s, i);
			return;
		}
		if (source_pcp_host.reconnect(m->src, err, sizeof(err))) {
			mark_down(s, i, err);
			return;
		}
		m->lost = false;
	}
	snap = source_pcp_host.read(m->src, &end, err, sizeof(err));
	if (!snap) {
		m->lost = true;
		mark_down(s, i, err);
		return;
	}
	m->last = snap;
	m->live = true;
	s->hosts[i].up = true;
	s->hosts[i].why[0] = 0;
	s->hosts[i].down_since = 0;
}

static uint64_t fleet_id(size_t host, uint64_t id)
{
	return (uint64_t)host << FLEET_ID_SHIFT |
	       (id & ((1ULL << FLEET_ID_SHIFT) - 1));
}

/* Room in every array for the members' last snapshots. */
static int fleet_grow(struct source *s)
{
	size_t nl = 0, np = 0, nf = 0, nb = 0, nd = 0, i;

	for (i = 0; i < s->n; i++) {
		const struct lt_snapshot *l = s->m[i].last;

		if (!l)
			continue;
		nl += l->n_locks;
		np += l->n_procs;
		nf += l->n_files;
		nb += l->n_probes;
		nd += l->n_deadlocks;
	}
	if (lt_grow((void **)&s->locks, &s->cap_locks, nl + 1,
		    sizeof(*s->locks)) ||
	    lt_grow((void **)&s->procs, &s->cap_procs, np + 1,
		    sizeof(*s->procs)) ||
	    lt_grow((void **)&s->files, &s->cap_files, nf + 1,
		    sizeof(*s->files)) ||
	    lt_grow((void **)&s->probes, &s->cap_probes, nb + 1,
		    sizeof(*s->probes)) ||
	    lt_grow((void **)&s->deadlocks, &s->cap_deadlocks, nd + 1,
		    sizeof(*s->deadlocks)))
		return -ENOMEM;
	return 0;
}

static void add_locks(struct source *s, size_t h, const struct lt_snapshot *l,
		      bool live)
{
	struct lt_snapshot *o = &s->out;
	size_t i, n = 0, nt = 0;

	for (i = 0; i < l->n_locks; i++) {
		struct lt_lock *d = &s->locks[o->n_locks++];
		size_t len;

		*d = l->locks[i];
		d->host = s->hosts[h].name;
		d->id = fleet_id(h, d->id);
		len = strlen(d->key);
		if (s->n > 1)
			snprintf(d->key + len, sizeof(d->key) - len, "@%s",
				 s->hosts[h].name);
		if (!live) {
			memset(&d->delta, 0, sizeof(d->delta));
			d->waiters_now = d->spinning_now = 0;
		}
		if (!lt_kind_is_lock(d->kind))
			continue;
		n += lt_lock_worth_showing(d, false);
		nt += lt_lock_worth_showing(d, true);
	}
	s->hosts[h].n_locks = n;
	s->hosts[h].n_locks_total = nt;
}

static void add_procs_files(struct source *s, size_t h,
			    const struct lt_snapshot *l, bool live)
{
	struct lt_snapshot *o = &s->out;
	size_t i;

	for (i = 0; i < l->n_procs; i++) {
		struct lt_proc *d = &s->procs[o->n_procs++];

		*d = l->procs[i];
		d->host = s->hosts[h].name;
		if (d->top_lock)
			d->top_lock = fleet_id(h, d->top_lock);
		if (!live)
			memset(&d->delta, 0, sizeof(d->delta));
	}
	for (i = 0; i < l->n_files; i++) {
		struct lt_file *d = &s->files[o->n_files++];

		*d = l->files[i];
		d->host = s->hosts[h].name;
		if (!live)
			memset(&d->delta, 0, sizeof(d->delta));
	}
	for (i = 0; live && i < l->n_deadlocks; i++) {
		struct lt_deadlock *d = &s->deadlocks[o->n_deadlocks++];
		size_t k;

		*d = l->deadlocks[i];
		d->host = s->hosts[h].name;
		for (k = 0; k < d->n && k < LT_CYCLE_MAX; k++)
			if (d->locks[k])
				d->locks[k] = fleet_id(h, d->locks[k]);
	}
	s->hosts[h].n_deadlocks = live ? l->n_deadlocks : 0;
}

/* The probe objects of every host, one row per name. */
static void add_probes(struct source *s, const struct lt_snapshot *l, bool live)
{
	struct lt_snapshot *o = &s->out;
	size_t i, j;

	for (i = 0; i < l->n_probes; i++) {
		const struct lt_probe_cost *p = &l->probes[i];
		struct lt_probe_cost *d = NULL;

		for (j = 0; j < o->n_probes && !d; j++)
			if (!strcmp(s->probes[j].name, p->name))
				d = &s->probes[j];
		if (!d) {
			d = &s->probes[o->n_probes++];
			memset(d, 0, sizeof(*d));
			snprintf(d->name, sizeof(d->name), "%s", p->name);
		}
		d->run_cnt += p->run_cnt;
		d->run_ns += p->run_ns;
		d->sampled_cnt += p->sampled_cnt;
		d->sampled_ns += p->sampled_ns;
		if (live) {
			d->delta_cnt += p->delta_cnt;
			d->delta_ns += p->delta_ns;
		}
		d->ns_per_run =
			d->run_cnt ? (double)d->run_ns / (double)d->run_cnt : 0;
	}
}

/* The header's figures: the hosts' sums; a down host's interval adds none. */
static void add_sums(struct source *s, size_t h, const struct lt_snapshot *l,
		     bool live)
{
	struct lt_snapshot *o = &s->out;
	struct lt_kind_figures k[LT_KIND_NR];
	struct lt_host *hh = &s->hosts[h];
	unsigned int r;
	int i;

	memset(&hh->delta, 0, sizeof(hh->delta));
	memset(&hh->total, 0, sizeof(hh->total));
	lt_snapshot_kinds(l, true, k);
	for (i = 0; i < LT_KIND_NR; i++) {
		o->kind_total[i].waits += k[i].waits;
		o->kind_total[i].wait_ns += k[i].wait_ns;
		if (lt_kind_is_lock(i)) {
			hh->total.waits += k[i].waits;
			hh->total.wait_ns += k[i].wait_ns;
		}
	}
	o->events_total += l->events_total;
	o->drops_total += l->drops_total;
	for (r = 0; r < LT_DROP_REASONS; r++)
		o->drop_total[r] += l->drop_total[r];
	o->lock_entries += l->lock_entries;
	o->lock_capacity += l->lock_capacity;
	o->file_entries += l->file_entries;
	o->file_capacity += l->file_capacity;
	o->party_entries += l->party_entries;
	o->party_capacity += l->party_capacity;
	o->folding |= l->folding;
	hh->events_delta = hh->drops_delta = 0;
	hh->cpu_percent = 0;
	if (!live)
		return;
	lt_snapshot_kinds(l, false, k);
	for (i = 0; i < LT_KIND_NR; i++) {
		o->kind_delta[i].waits += k[i].waits;
		o->kind_delta[i].wait_ns += k[i].wait_ns;
		if (lt_kind_is_lock(i)) {
			hh->delta.waits += k[i].waits;
			hh->delta.wait_ns += k[i].wait_ns;
		}
	}
	o->events_delta += l->events_delta;
	o->drops_delta += l->drops_delta;
	for (r = 0; r < LT_DROP_REASONS; r++)
		o->drop_delta[r] += l->drop_delta[r];
	for (r = 0; r < LT_HIST_BUCKETS; r++)
		o->io_hist_delta[r] += l->io_hist_delta[r];
	o->cpu_percent += l->cpu_percent;
	hh->events_delta = l->events_delta;
	hh->drops_delta = l->drops_delta;
	hh->cpu_percent = l->cpu_percent;
	if (l->time > o->time)
		o->time = l->time;
	if (l->interval_s > o->interval_s)
		o->interval_s = l->interval_s;
}

static int merge(struct source *s)
{
	struct lt_snapshot *o = &s->out;
	size_t h, heard = 0, io_off = 0;

	if (fleet_grow(s))
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	for (h = 0; h < s->n; h++) {
		const struct lt_snapshot *l = s->m[h].last;
		bool live = s->m[h].live;

		s->hosts[h].n_locks = s->hosts[h].n_deadlocks = 0;
		s->hosts[h].n_locks_total = 0;
		if (!l)
			continue;
		heard++;
		io_off += l->io_off;
		add_locks(s, h, l, live);
		add_procs_files(s, h, l, live);
		add_probes(s, l, live);
		add_sums(s, h, l, live);
	}
	if (!o->time)
		o->time = (double)lt_wall_ns() / 1e9;
	if (!o->interval_s)
		o->interval_s = s->delta_ms / 1000.0;
	o->elapsed_s = o->time - s->first_ts;
	/* Off only where no host traces pread and pwrite (-I on each). */
	o->io_off = heard && io_off == heard;
	o->spin_sampler = "off";
	o->kernel_spins = LT_KSPINS_OFF;
	o->locks = s->locks;
	o->procs = s->procs;
	o->files = s->files;
	o->probes = s->probes;
	o->deadlocks = s->deadlocks;
	o->hosts = s->hosts;
	o->n_hosts = s->n;
	return 0;
}

static const struct lt_snapshot *fleet_read(struct source *s, bool *end,
					    char *err, size_t err_len)
{
	size_t i;

	*end = false;
	for (i = 0; i < s->n; i++)
		read_member(s, i);
	if (merge(s)) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	return &s->out;
}

static void fleet_set_interval(struct source *s, unsigned int ms)
{
	size_t i;

	s->delta_ms = ms ? ms : 1000;
	for (i = 0; i < s->n; i++)
		if (s->m[i].src)
			source_pcp_host.set_interval(s->m[i].src, ms);
}

const struct source_ops source_fleet = {
	.name = "fleet",
	.open = fleet_open,
	.read = fleet_read,
	.set_interval = fleet_set_interval,
	.close = fleet_close,
	.recorded = false,
	.local = false,
};
