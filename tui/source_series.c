// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The series source: a fleet's history from pmproxy's series REST API
 * (locktop --series HOST[:PORT] --window SECS). pmlogger on each host
 * records pmdalocktop's metrics, pmproxy loads them into its key server,
 * and this source asks it for every host's series of
 * locktop.lock.wait.time and locktop.lock.wait.count over the window.
 *
 * Each lock instance of each host is one row, by its instance name: its
 * host, name and kind from the instance's labels (hostname, which pmcd
 * adds, lock_name and lock_kind, which the agent adds), else from the
 * metric series' labels (hostname), the instance name itself and
 * locktop.lock.kind's value where it was logged (pmlogger writes an
 * instance's labels only when it first logs its instance domain's;
 * a lock seen later has none), else futex; its figures the counters'
 * growth over the window (a counter that went back was reset: it counts from
 * zero). The window is one interval: the snapshot's deltas and totals
 * are the same, over the time the samples span.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "series_http.h"
#include "source.h"

#define SERIES_PORT "44322"
#define SERIES_BATCH 40 /* instance ids per labels request */
#define KIND_SERIES 2 /* load_metric()'s which for locktop.lock.kind */

/* What is read, by load_metric()'s which: two counters and the kind. */
static const char *const metrics[] = {
	"locktop.lock.wait.time",
	"locktop.lock.wait.count",
	"locktop.lock.kind",
};

/* One lock instance of one host. */
struct sinst {
	char host[LT_HOST_LEN];
	char name[LT_NAME_LEN]; /* the instance's */
	char label[LT_NAME_LEN]; /* lock_name's, "" without it */
	int kind; /* -1: unknown */
	uint64_t grew[2]; /* wait.time, wait.count over the window */
	double first_ts, last_ts; /* ms */
};

/* An instance series of the metric being read, and where it goes. */
struct iref {
	char id[48];
	char name[LT_NAME_LEN];
	long to; /* index of its sinst, -1: none */
	double first_ts, first_v, last_ts, last_v;
	bool have;
};

struct source {
	char host[256], port[16];
	unsigned int window_s;
	struct sinst *v;
	size_t n, cap;
	struct iref *refs;
	size_t n_refs, cap_refs;
	struct lt_lock *locks;
	struct lt_host *hosts;
	size_t cap_locks, cap_hosts;
	struct lt_snapshot out;
	bool read;
};

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static json_object *get(struct source *s, const char *what, const char *key,
			const char *value, char *err, size_t err_len)
{
	char enc[4096], path[4600];

	http_encode(value, enc, sizeof(enc));
	snprintf(path, sizeof(path), "/series/%s?%s=%s", what, key, enc);
	return http_get_json(s->host, s->port, path, err, err_len);
}

/* The index of the lock of host and name, made on first sight; -1. */
static long sinst_of(struct source *s, const char *host, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].host, host) && !strcmp(s->v[i].name, name))
			return (long)i;
	if (lt_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -1;
	snprintf(s->v[s->n].host, sizeof(s->v[s->n].host), "%s", host);
	snprintf(s->v[s->n].name, sizeof(s->v[s->n].name), "%s", name);
	s->v[s->n].kind = -1;
	return (long)s->n++;
}

/* One instance's labels: its host, its lock's name and kind. */
static void label_ref(struct source *s, struct iref *r, json_object *l,
		      const char *host)
{
	const char *h = jstr(l, "hostname"), *kind = jstr(l, "lock_kind");
	const char *name = jstr(l, "lock_name");
	struct sinst *si;

	/* The instance's name, as both counters have it. */
	r->to = sinst_of(s, h ? h : host, r->name);
	if (r->to < 0)
		return;
	si = &s->v[r->to];
	if (kind && si->kind < 0)
		si->kind = lt_kind_parse(kind);
	if (name && !si->label[0])
		snprintf(si->label, sizeof(si->label), "%s", name);
}

/*
 * The labels of refs[from, to): each instance's host, name and kind; an
 * instance without labels is host's, named by its instance.
 */
static int label_refs(struct source *s, size_t from, size_t to,
		      const char *host, char *err, size_t err_len)
{
	char ids[SERIES_BATCH * 48] = "";
	json_object *a;
	size_t i, k;

	for (i = from; i < to; i++)
		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%s",
			 i > from ? "," : "", s->refs[i].id);
	a = get(s, "labels", "series", ids, err, err_len);
	if (!a)
		return -EIO;
	for (k = 0; k < json_object_array_length(a); k++) {
		json_object *e = json_object_array_get_idx(a, k), *l = NULL;
		const char *id = jstr(e, "series");

		json_object_object_get_ex(e, "labels", &l);
		for (i = from; id && i < to; i++)
			if (!strcmp(s->refs[i].id, id))
				label_ref(s, &s->refs[i], l, host);
	}
	json_object_put(a);
	for (i = from; i < to; i++)
		if (s->refs[i].to < 0)
			label_ref(s, &s->refs[i], NULL, host);
	return 0;
}

/* The ref of instance series iid, NULL if none. */
static struct iref *ref_of(struct source *s, const char *iid)
{
	size_t i;

	for (i = 0; i < s->n_refs; i++)
		if (!strcmp(s->refs[i].id, iid))
			return &s->refs[i];
	return NULL;
}

/* The host of source src: the first of its names not a path, else "?". */
static int source_host(struct source *s, const char *src, char *host,
		       size_t len, char *err, size_t err_len)
{
	json_object *a = get(s, "sources", "source", src, err, err_len);
	const char *h = NULL;
	size_t k;

	if (!a)
		return -EIO;
	for (k = 0; k < json_object_array_length(a) && !h; k++) {
		h = jstr(json_object_array_get_idx(a, k), "name");
		if (h && strchr(h, '/'))
			h = NULL;
	}
	snprintf(host, len, "%s", h ? h : "?");
	json_object_put(a);
	return 0;
}

/*
 * The instances of metric series id not seen yet, with their ids and
 * names, labelled. An instance's id is its metric's and host's, the
 * same in each metric of the agent's lock instances: pmproxy may list
 * an instance under one metric and not under another whose values it
 * has, so the instances of every metric are known before any values.
 */
static int load_instances(struct source *s, const char *id, char *err,
			  size_t err_len)
{
	json_object *a = get(s, "instances", "series", id, err, err_len);
	char host[LT_HOST_LEN] = "?";
	size_t k, from = s->n_refs, to;

	if (!a)
		return -EIO;
	for (k = 0; k < json_object_array_length(a); k++) {
		json_object *e = json_object_array_get_idx(a, k);
		const char *iid = jstr(e, "instance"), *name = jstr(e, "name");
		const char *src = jstr(e, "source");
		struct iref *r;

		if (!iid || ref_of(s, iid) ||
		    lt_grow((void **)&s->refs, &s->cap_refs, s->n_refs + 1,
			    sizeof(*s->refs)))
			continue;
		if (src && !strcmp(host, "?") &&
		    source_host(s, src, host, sizeof(host), err, err_len))
			goto fail;
		r = &s->refs[s->n_refs++];
		memset(r, 0, sizeof(*r));
		r->to = -1;
		snprintf(r->id, sizeof(r->id), "%s", iid);
		snprintf(r->name, sizeof(r->name), "%s", name ? name : iid);
	}
	json_object_put(a);
	for (; from < s->n_refs; from = to) {
		to = from + SERIES_BATCH < s->n_refs ? from + SERIES_BATCH :
						       s->n_refs;
		if (label_refs(s, from, to, host, err, err_len))
			return -EIO;
	}
	return 0;
fail:
	json_object_put(a);
	return -EIO;
}

/* A string value as pmproxy gives it, JSON-quoted, without its quotes. */
static void unquote(const char *v, char *out, size_t len)
{
	size_t n = strlen(v);

	if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
		snprintf(out, len, "%.*s", (int)(n - 2), v + 1);
	else
		snprintf(out, len, "%s", v);
}

/* One sample of an instance: the counter's growth since the one before. */
static void add_sample(struct source *s, int which, json_object *e)
{
	const char *iid = jstr(e, "instance"), *val = jstr(e, "value");
	json_object *t = NULL;
	struct iref *r;
	struct sinst *si;
	char kind[32];
	double ts, v;

	if (!iid || !val || !json_object_object_get_ex(e, "timestamp", &t))
		return;
	r = ref_of(s, iid);
	if (!r || r->to < 0)
		return;
	si = &s->v[r->to];
	if (which == KIND_SERIES) {
		/* locktop.lock.kind: where pmlogger has no kind label */
		unquote(val, kind, sizeof(kind));
		if (si->kind < 0)
			si->kind = lt_kind_parse(kind);
		return;
	}
	ts = json_object_get_double(t);
	v = strtod(val, NULL);
	if (r->have && ts <= r->last_ts)
		return;
	if (r->have)
		si->grew[which] +=
			(uint64_t)(v >= r->last_v ? v - r->last_v : v);
	if (!si->first_ts || ts < si->first_ts)
		si->first_ts = ts;
	if (ts > si->last_ts)
		si->last_ts = ts;
	if (!r->have) {
		r->first_ts = ts;
		r->first_v = v;
	}
	r->have = true;
	r->last_ts = ts;
	r->last_v = v;
}

/*
 * An instance first seen after its metric's first sample in the window
 * came to be in the window: its counter grew from zero, and its first
 * value is growth too (the agent counts a new lock from zero).
 */
static void born_in_window(struct source *s, int which)
{
	double first = 0;
	size_t i;

	for (i = 0; i < s->n_refs; i++)
		if (s->refs[i].have && (!first || s->refs[i].first_ts < first))
			first = s->refs[i].first_ts;
	for (i = 0; i < s->n_refs; i++) {
		const struct iref *r = &s->refs[i];

		if (r->have && r->to >= 0 && r->first_ts > first + 1)
			s->v[r->to].grew[which] += (uint64_t)r->first_v;
	}
}

/* The series of metric, one per host: a JSON array, or NULL. */
static json_object *query(struct source *s, const char *metric, char *err,
			  size_t err_len)
{
	return get(s, "query", "expr", metric, err, err_len);
}

/* The instances of every host's series of metric. */
static int load_names(struct source *s, const char *metric, char *err,
		      size_t err_len)
{
	json_object *ids = query(s, metric, err, err_len);
	size_t i;
	int ret = 0;

	if (!ids)
		return -EIO;
	for (i = 0; !ret && i < json_object_array_length(ids); i++) {
		const char *id = json_object_get_string(
			json_object_array_get_idx(ids, i));

		if (id)
			ret = load_instances(s, id, err, err_len);
	}
	json_object_put(ids);
	return ret;
}

/* Every host's series of one metric: a counter's growth over the window. */
static int load_metric(struct source *s, const char *metric, int which,
		       char *err, size_t err_len)
{
	json_object *ids, *vals;
	char start[32];
	size_t i, k;

	ids = query(s, metric, err, err_len);
	if (!ids)
		return -EIO;
	snprintf(start, sizeof(start), "-%usec", s->window_s);
	for (i = 0; i < json_object_array_length(ids); i++) {
		const char *id = json_object_get_string(
			json_object_array_get_idx(ids, i));
		char enc[64], path[256];

		if (!id)
			continue;
		http_encode(id, enc, sizeof(enc));
		snprintf(path, sizeof(path),
			 "/series/values?series=%s&start=%s", enc, start);
		vals = http_get_json(s->host, s->port, path, err, err_len);
		if (!vals)
			goto fail;
		/* This series' samples only: each host's counters apart. */
		for (k = 0; k < s->n_refs; k++)
			s->refs[k].have = false;
		for (k = 0; k < json_object_array_length(vals); k++)
			add_sample(s, which,
				   json_object_array_get_idx(vals, k));
		json_object_put(vals);
		if (which != KIND_SERIES)
			born_in_window(s, which);
	}
	json_object_put(ids);
	return 0;
fail:
	json_object_put(ids);
	return -EIO;
}

static struct lt_host *host_of(struct source *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->out.n_hosts; i++)
		if (!strcmp(s->hosts[i].name, name))
			return &s->hosts[i];
	if (lt_grow((void **)&s->hosts, &s->cap_hosts, s->out.n_hosts + 1,
		    sizeof(*s->hosts)))
		return NULL;
	i = s->out.n_hosts++;
	memset(&s->hosts[i], 0, sizeof(s->hosts[i]));
	snprintf(s->hosts[i].name, sizeof(s->hosts[i].name), "%s", name);
	s->hosts[i].up = true;
	return &s->hosts[i];
}

/* The window as one snapshot: a lock per instance that waited in it. */
static int build(struct source *s)
{
	struct lt_snapshot *o = &s->out;
	double first = 0, last = 0;
	size_t i;

	if (lt_grow((void **)&s->locks, &s->cap_locks, s->n + 1,
		    sizeof(*s->locks)))
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		const struct sinst *si = &s->v[i];
		struct lt_lock *l = &s->locks[o->n_locks];
		struct lt_host *h = host_of(s, si->host);

		if (!h)
			return -ENOMEM;
		if (si->first_ts && (!first || si->first_ts < first))
			first = si->first_ts;
		if (si->last_ts > last)
			last = si->last_ts;
		if (!si->grew[0] && !si->grew[1])
			continue;
		memset(l, 0, sizeof(*l));
		l->id = i + 1;
		snprintf(l->name, sizeof(l->name), "%s",
			 si->label[0] ? si->label : si->name);
		snprintf(l->key, sizeof(l->key), "%.*s@%s",
			 (int)(sizeof(l->key) - sizeof(si->host) - 1), si->name,
			 si->host);
		l->kind = si->kind >= 0 ? (enum lt_kind)si->kind :
					  LT_KIND_FUTEX;
		l->host = h->name;
		l->total.wait_ns = l->delta.wait_ns = si->grew[0];
		l->total.waits = l->delta.waits = si->grew[1];
		lt_kind_figures_add(&o->kind_total[l->kind], &l->total);
		lt_kind_figures_add(&o->kind_delta[l->kind], &l->delta);
		if (lt_kind_is_lock(l->kind)) {
			h->n_locks++;
			h->n_locks_total++;
			lt_kind_figures_add(&h->delta, &l->delta);
			lt_kind_figures_add(&h->total, &l->total);
		}
		o->n_locks++;
	}
	o->time = last / 1000;
	o->interval_s = o->elapsed_s = last > first ? (last - first) / 1000 :
						      s->window_s;
	o->locks = s->locks;
	o->hosts = s->hosts;
	o->spin_sampler = "off";
	o->kernel_spins = LT_KSPINS_OFF;
	return 0;
}

static void series_close(struct source *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->refs);
	free(s->locks);
	free(s->hosts);
	free(s);
}

static int series_open(const struct source_params *p, struct source **out,
		       char *err, size_t err_len)
{
	struct source *s = calloc(1, sizeof(*s));
	char *colon;
	size_t i;

	*out = NULL;
	if (!s) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	snprintf(s->host, sizeof(s->host), "%s", p->series);
	snprintf(s->port, sizeof(s->port), "%s", SERIES_PORT);
	colon = strrchr(s->host, ':');
	if (colon && !strchr(colon + 1, ']')) {
		*colon = 0;
		snprintf(s->port, sizeof(s->port), "%s", colon + 1);
	}
	s->window_s = p->window_s ? p->window_s : 600;
	for (i = 0; i < sizeof(metrics) / sizeof(*metrics); i++)
		if (load_names(s, metrics[i], err, err_len)) {
			series_close(s);
			return -EIO;
		}
	for (i = 0; i < sizeof(metrics) / sizeof(*metrics); i++)
		if (load_metric(s, metrics[i], (int)i, err, err_len)) {
			series_close(s);
			return -EIO;
		}
	if (build(s)) {
		snprintf(err, err_len, "out of memory");
		series_close(s);
		return -ENOMEM;
	}
	if (!s->n) {
		snprintf(err, err_len,
			 "pmproxy on %s:%s has no series of "
			 "locktop.lock.wait.time in the last %u s: is "
			 "pmlogger recording pmdalocktop's metrics?",
			 s->host, s->port, s->window_s);
		series_close(s);
		return -ENODATA;
	}
	*out = s;
	return 0;
}

static const struct lt_snapshot *series_read(struct source *s, bool *end,
					     char *err, size_t err_len)
{
	(void)err;
	(void)err_len;
	*end = s->read;
	if (s->read)
		return NULL;
	s->read = true;
	return &s->out;
}

static void series_set_interval(struct source *s, unsigned int ms)
{
	(void)s;
	(void)ms; /* the window is one interval */
}

const struct source_ops source_series = {
	.name = "series",
	.open = series_open,
	.read = series_read,
	.set_interval = series_set_interval,
	.close = series_close,
	.recorded = true,
	.local = false,
};
