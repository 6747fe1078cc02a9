// SPDX-License-Identifier: GPL-2.0-or-later
/* Recordings: the metrics and figures they hold, and the writer behind
 * `locktop record` (record_load.c reads them back). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <json-c/json.h>
#include "proc_cpu.h"
#include "record.h"

/* ---- metrics ---- */

/* The metrics: figures.def's DIFF column, and the p99 wait. */
struct metric {
	const char *name; /* in --fail-if and JSON */
	const char *label; /* for people */
	bool time; /* a duration in ns */
};

static const struct metric metrics[REC_METRIC_NR] = {
#define LT_DIFF(NAME, UNIT, PART, ID, METRIC, LABEL, EVENTS, ONE, MANY) \
	[REC_##ID] = { METRIC, LABEL, UNIT == LT_UNIT_NS },
#include "figures.def"
	[REC_P99] = { "p99", "p99 wait", true },
};

/* Their names in the order of enum rec_metric, which is made the same way. */
#define REC_NAME_MAIN(METRIC) METRIC ", "
#define REC_NAME_USED(METRIC)
#define LT_DIFF(NAME, UNIT, PART, ID, METRIC, LABEL, EVENTS, ONE, MANY) \
	REC_NAME_##PART(METRIC)
const char rec_metric_list[] =
#include "figures.def"
	"p99"
#undef REC_NAME_MAIN
#undef REC_NAME_USED
#define REC_NAME_MAIN(METRIC)
#define REC_NAME_USED(METRIC) ", " METRIC
#define LT_DIFF(NAME, UNIT, PART, ID, METRIC, LABEL, EVENTS, ONE, MANY) \
	REC_NAME_##PART(METRIC)
#include "figures.def"
	;
#undef REC_NAME_MAIN
#undef REC_NAME_USED

const char *rec_metric_name(enum rec_metric m)
{
	return (unsigned int)m < REC_METRIC_NR ? metrics[m].name : "?";
}

const char *rec_metric_label(enum rec_metric m)
{
	return (unsigned int)m < REC_METRIC_NR ? metrics[m].label : "?";
}

int rec_metric_parse(const char *name)
{
	int m;

	for (m = 0; m < REC_METRIC_NR; m++)
		if (!strcmp(name, metrics[m].name))
			return m;
	return -1;
}

bool rec_metric_is_time(enum rec_metric m)
{
	return (unsigned int)m < REC_METRIC_NR && metrics[m].time;
}

void rec_fig_add(struct rec_fig *a, const struct rec_fig *b)
{
	size_t i;

	/* Sums wrap rather than trap: a file may hold anything. */
#define REC_ADD(NAME, PART) a->NAME += b->NAME;
#define REC_MAX(NAME, PART) a->NAME = b->NAME > a->NAME ? b->NAME : a->NAME;
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) REC_KEPT(RECORD, REC_ADD, NAME)
#define LT_DERIVED(NAME, JSON, PCP, RECORD) REC_KEPT(RECORD, REC_ADD, NAME)
#define LT_MAXIMUM(NAME, JSON, RECORD) REC_KEPT(RECORD, REC_MAX, NAME)
#include "figures.def"
#undef REC_ADD
#undef REC_MAX
	/* Without histograms the best a merge can say is the worse p99. */
	if (b->p99_wait_ns > a->p99_wait_ns)
		a->p99_wait_ns = b->p99_wait_ns;
	if (b->has_hist) {
		a->has_hist = true;
		for (i = 0; i < LT_HIST_BUCKETS; i++)
			a->wait_hist[i] += b->wait_hist[i];
	}
}

uint64_t rec_fig_metric(const struct rec_fig *f, enum rec_metric m)
{
	switch (m) {
#define LT_DIFF(NAME, UNIT, PART, ID, METRIC, LABEL, EVENTS, ONE, MANY) \
	case REC_##ID:                                                  \
		return f->NAME;
#include "figures.def"
	case REC_P99:
		if (f->has_hist)
			return lt_hist_quantile(f->wait_hist, LT_HIST_BUCKETS,
						0.99);
		return f->p99_wait_ns;
	default:
		return 0;
	}
}

/*
 * What record_normalize_key() replaces in a key, so that a name that
 * differs from run to run matches: a literal prefix, then `random`
 * letters or digits, then a literal suffix, becomes `with`. The rules are
 * tried in this order at each character of the key, and the first that
 * matches wins; one marked at_name matches only where a name starts, at
 * the key's start or after a '/' or ':' of the key as given.
 */
struct key_rule {
	const char *prefix;
	unsigned int random; /* letters or digits after the prefix */
	const char *suffix; /* after them; NULL: none */
	const char *with;
	bool at_name;
};

static const struct key_rule key_rules[] = {
	/* A file removed before the read. */
	{ .prefix = " (deleted)", .with = "" },
	/* lockbench's table: mkstemp's six characters, then ".tdb". */
	{ .prefix = "lockbench-",
	  .random = 6,
	  .suffix = ".tdb",
	  .with = "lockbench-*.tdb",
	  .at_name = true },
};

static bool key_random_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* How many characters of key, from i on, rule r matches; 0: none. */
static size_t key_rule_match(const struct key_rule *r, const char *key,
			     size_t i)
{
	const char *p = key + i;
	size_t n = strlen(r->prefix), end;

	if (r->at_name && i > 0 && key[i - 1] != '/' && key[i - 1] != ':')
		return 0;
	if (strncmp(p, r->prefix, n))
		return 0;
	for (end = n + r->random; n < end; n++)
		if (!key_random_char(p[n]))
			return 0;
	if (r->suffix) {
		if (strncmp(p + n, r->suffix, strlen(r->suffix)))
			return 0;
		n += strlen(r->suffix);
	}
	return n;
}

/* The first rule that matches key from i on, and in *n how much; or NULL. */
static const struct key_rule *key_rule_find(const char *key, size_t i,
					    size_t *n)
{
	size_t k;

	for (k = 0; k < sizeof(key_rules) / sizeof(key_rules[0]); k++) {
		*n = key_rule_match(&key_rules[k], key, i);
		if (*n)
			return &key_rules[k];
	}
	return NULL;
}

void record_normalize_key(const char *full, char *out, size_t len)
{
	const char *colon = strchr(full, ':'), *slash = strrchr(full, '/');
	const struct key_rule *r;
	char key[2 * LT_NAME_LEN];
	size_t o = 0, i = 0, n, m;
	int w;

	if (!len)
		return;
	/*
	 * "kind:/dir/file..." becomes "kind:file...": the collector names a
	 * file by its full path only while a process still has it open, by
	 * its base name after, so one file would get two keys.
	 */
	if (colon && colon[1] == '/' && slash > colon)
		snprintf(key, sizeof(key), "%.*s%s", (int)(colon - full + 1),
			 full, slash + 1);
	else
		snprintf(key, sizeof(key), "%s", full);
	n = strlen(key);
	while (i < n && o + 1 < len) {
		r = key_rule_find(key, i, &m);
		if (!r) {
			out[o++] = key[i++];
			continue;
		}
		/* A replacement cut short by the end of out ends it. */
		w = snprintf(out + o, len - o, "%s", r->with);
		if (w < 0 || (size_t)w >= len - o) {
			o = len - 1;
			break;
		}
		o += (size_t)w;
		i += m;
	}
	out[o] = '\0';
}

/* ---- writing ---- */

/* Compact, and paths stay readable ("/tmp", not "\/tmp"). */
#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct recorder {
	FILE *f;
	char *path;
	char *tmp;
	size_t n_intervals;
	struct proc_cpu *cpu; /* --pid's trees; NULL: none */
	bool has_ops;
	uint64_t ops;
};

static json_object *j_u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static void fig_from_lt(struct rec_fig *r, const struct lt_figures *f)
{
	memset(r, 0, sizeof(*r));
#define REC_COPY(NAME, PART) r->NAME = f->NAME;
#define LT_FIGURE(NAME, JSON, RECORD) REC_KEPT(RECORD, REC_COPY, NAME)
#include "figures.def"
#undef REC_COPY
	r->has_hist = true;
	memcpy(r->wait_hist, f->wait_hist, sizeof(r->wait_hist));
	r->p99_wait_ns = rec_fig_metric(r, REC_P99);
}

/* The figures of one part of a recording's figures object. */
static void fig_part_json(json_object *o, const struct rec_fig *f,
			  enum rec_fig_part part)
{
#define REC_JSON(NAME, PART) \
	if (PART == part)    \
		json_object_object_add(o, #NAME, j_u64(f->NAME));
#define LT_FIGURE(NAME, JSON, RECORD) REC_KEPT(RECORD, REC_JSON, NAME)
#include "figures.def"
#undef REC_JSON
}

static void fig_json(json_object *o, const struct rec_fig *f)
{
	json_object *h = json_object_new_array();
	size_t n = LT_HIST_BUCKETS, i;

	fig_part_json(o, f, REC_PART_WAIT);
	json_object_object_add(o, "p99_wait_ns",
			       j_u64(rec_fig_metric(f, REC_P99)));
	fig_part_json(o, f, REC_PART_HOLD);
	fig_part_json(o, f, REC_PART_REST);
	/* Trailing empty buckets say nothing: leave them out. */
	while (n && !f->wait_hist[n - 1])
		n--;
	for (i = 0; i < n; i++)
		json_object_array_add(h, j_u64(f->wait_hist[i]));
	json_object_object_add(o, "wait_hist", h);
}

bool record_keeps(const struct lt_lock *l, bool totals)
{
	/* Every kind: locktop diff leaves event waits out unless asked. */
	struct lt_view v = { .totals = totals, .all_kinds = true };

	return (unsigned int)l->kind < LT_KIND_NR && lt_lock_shown(l, &v);
}

json_object *record_releases_json(const struct lt_lock *l)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < l->n_releases; i++) {
		json_object *r = json_object_new_object();

		json_object_object_add(
			r, "stack",
			json_object_new_string(l->releases[i].stack));
		json_object_object_add(r, "count", j_u64(l->releases[i].count));
		json_object_object_add(r, "ns", j_u64(l->releases[i].ns));
		json_object_array_add(a, r);
	}
	return a;
}

/* One interval (deltas) or the totals, as a JSON object. */
static json_object *set_json(const struct lt_snapshot *s, bool totals)
{
	json_object *o = json_object_new_object();
	json_object *locks = json_object_new_array();
	json_object *kinds = json_object_new_object();
	struct lt_figures kf[LT_KIND_NR];
	struct rec_fig rf;
	size_t i;
	int k;

	memset(kf, 0, sizeof(kf));
	/* A lock site's row, not its members': one row per site. */
	for (i = 0; i < lt_snapshot_rows(s); i++) {
		const struct lt_lock *l = lt_snapshot_row(s, i);
		const struct lt_figures *f = lt_lock_figures(l, totals);
		json_object *lo;

		if (!record_keeps(l, totals))
			continue;
		lt_figures_add(&kf[l->kind], f);
		fig_from_lt(&rf, f);
		lo = json_object_new_object();
		json_object_object_add(lo, "key",
				       json_object_new_string(l->key));
		json_object_object_add(lo, "name",
				       json_object_new_string(l->name));
		json_object_object_add(
			lo, "kind",
			json_object_new_string(lt_kind_name(l->kind)));
		if (l->kernel_type[0])
			json_object_object_add(
				lo, "kernel_type",
				json_object_new_string(l->kernel_type));
		if (l->caller[0])
			json_object_object_add(
				lo, "caller",
				json_object_new_string(l->caller));
		if (l->procs > 1)
			json_object_object_add(lo, "procs",
					       json_object_new_int64(l->procs));
		fig_json(lo, &rf);
		/* Where it was held: totals over the run, so in the totals. */
		if (totals && l->n_releases)
			json_object_object_add(lo, "release_stacks",
					       record_releases_json(l));
		json_object_array_add(locks, lo);
	}
	/* A kind that did anything: the sum of its locks' figures. */
	for (k = 0; k < LT_KIND_NR; k++) {
		json_object *ko;

		if (!lt_figures_active(&kf[k]))
			continue;
		fig_from_lt(&rf, &kf[k]);
		ko = json_object_new_object();
		fig_json(ko, &rf);
		json_object_object_add(kinds, lt_kind_name(k), ko);
	}
	json_object_object_add(o, "time", json_object_new_double(s->time));
	json_object_object_add(o, "interval_s",
			       json_object_new_double(totals ? s->elapsed_s :
							       s->interval_s));
	json_object_object_add(o, "elapsed_s",
			       json_object_new_double(s->elapsed_s));
	json_object_object_add(o, "drops",
			       j_u64(totals ? s->drops_total : s->drops_delta));
	if (!totals) {
		/* How full the kernel's maps were at the read. */
		json_object_object_add(o, "lock_entries",
				       j_u64(s->lock_entries));
		json_object_object_add(o, "lock_capacity",
				       j_u64(s->lock_capacity));
		json_object_object_add(o, "party_entries",
				       j_u64(s->party_entries));
		json_object_object_add(o, "party_capacity",
				       j_u64(s->party_capacity));
		json_object_object_add(o, "folding",
				       json_object_new_boolean(s->folding));
	}
	json_object_object_add(o, "kinds", kinds);
	json_object_object_add(o, "locks", locks);
	return o;
}

/* Writes "name":value, then frees value. */
static void put_member(FILE *f, const char *name, json_object *v)
{
	json_object *key = json_object_new_string(name);

	fprintf(f, "%s:%s", json_object_to_json_string_ext(key, JSON_FLAGS),
		json_object_to_json_string_ext(v, JSON_FLAGS));
	json_object_put(key);
	json_object_put(v);
}

/* A command line as a shell would need it typed. */
static void append_quoted(char *buf, size_t len, const char *arg)
{
	size_t o = strlen(buf);
	bool plain = *arg != '\0';
	const char *p;

	for (p = arg; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789-_./=:,+@%",
			    *p))
			plain = false;
	if (o && o + 1 < len)
		buf[o++] = ' ';
	buf[o] = '\0';
	if (plain) {
		snprintf(buf + o, len - o, "%s", arg);
		return;
	}
	if (o + 1 < len)
		buf[o++] = '\'';
	for (p = arg; *p && o + 5 < len; p++) {
		if (*p == '\'') {
			memcpy(buf + o, "'\\''", 4);
			o += 4;
		} else {
			buf[o++] = *p;
		}
	}
	if (o + 1 < len)
		buf[o++] = '\'';
	buf[o < len ? o : len - 1] = '\0';
}

static void iso_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&s, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}

/* The record's members before its intervals: where, what and when. */
static void put_header(FILE *f, const struct record_meta *m, double start)
{
	char host[256] = "", kernel[1024], release[128], cmdline[4096] = "";
	char when[64];
	struct utsname u;
	json_object *a;
	int i;

	gethostname(host, sizeof(host) - 1);
	if (uname(&u)) {
		snprintf(kernel, sizeof(kernel), "?");
		snprintf(release, sizeof(release), "?");
	} else {
		snprintf(kernel, sizeof(kernel), "%s %s %s %s", u.sysname,
			 u.release, u.version, u.machine);
		snprintf(release, sizeof(release), "%s", u.release);
	}
	for (i = 0; i < m->argc; i++)
		append_quoted(cmdline, sizeof(cmdline), m->argv[i]);
	iso_time(start, when, sizeof(when));

	fprintf(f, "{");
	put_member(f, "format", json_object_new_string(RECORD_FORMAT));
	fputc(',', f);
	put_member(f, "version", json_object_new_int(RECORD_VERSION));
	fprintf(f, ",\n");
	put_member(f, "host", json_object_new_string(host));
	fputc(',', f);
	put_member(f, "kernel", json_object_new_string(kernel));
	fputc(',', f);
	put_member(f, "release", json_object_new_string(release));
	fprintf(f, ",\n");
	put_member(f, "cmdline", json_object_new_string(cmdline));
	fputc(',', f);
	a = NULL;
	if (m->command) {
		a = json_object_new_array();
		for (i = 0; m->command[i]; i++)
			json_object_array_add(
				a, json_object_new_string(m->command[i]));
	}
	put_member(f, "command", a);
	fputc(',', f);
	a = json_object_new_array();
	for (size_t p = 0; p < m->n_pids; p++)
		json_object_array_add(a, json_object_new_int(m->pids[p]));
	put_member(f, "pids", a);
	fprintf(f, ",\n");
	put_member(f, "start_time", json_object_new_double(start));
	fputc(',', f);
	put_member(f, "start", json_object_new_string(when));
	fputc(',', f);
	put_member(f, "interval_s", json_object_new_double(m->interval_s));
	fputc(',', f);
	put_member(f, "duration_s",
		   m->duration_s > 0 ? json_object_new_double(m->duration_s) :
				       NULL);
}

int recorder_open(const struct record_meta *m, struct recorder **out, char *err,
		  size_t err_len)
{
	struct recorder *r = calloc(1, sizeof(*r));
	double start = lt_wall_ns() / 1e9;
	const char *slash;
	size_t dir_len;
	int fd;

	*out = NULL;
	if (!r)
		goto nomem;
	r->path = strdup(m->path);
	/* In the target's directory, so that the rename is atomic. */
	slash = strrchr(m->path, '/');
	dir_len = slash ? (size_t)(slash - m->path) + 1 : 0;
	if (!r->path || asprintf(&r->tmp, "%.*s.%s.XXXXXX", (int)dir_len,
				 m->path, slash ? slash + 1 : m->path) < 0) {
		r->tmp = NULL;
		goto nomem;
	}
	fd = mkostemp(r->tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_len, "cannot write '%s': %s", m->path,
			 strerror(errno));
		free(r->tmp);
		r->tmp = NULL;
		recorder_abort(r);
		return -errno;
	}
	r->f = fdopen(fd, "w");
	if (!r->f) {
		close(fd);
		goto nomem;
	}

	if (proc_cpu_open(m->cpu_pids, m->n_cpu_pids, &r->cpu))
		goto nomem;
	put_header(r->f, m, start);
	fprintf(r->f, ",\n\"intervals\":[");
	if (ferror(r->f)) {
		snprintf(err, err_len, "cannot write '%s': %s", r->tmp,
			 strerror(errno));
		recorder_abort(r);
		return -EIO;
	}
	*out = r;
	return 0;
nomem:
	snprintf(err, err_len, "out of memory");
	recorder_abort(r);
	return -ENOMEM;
}

int recorder_started(struct recorder *r)
{
	return proc_cpu_start(r->cpu);
}

void recorder_set_ops(struct recorder *r, uint64_t ops)
{
	r->has_ops = true;
	r->ops = ops;
}

int record_read_ops(const char *path, uint64_t *ops, char *err, size_t err_len)
{
	char buf[64], *end;
	unsigned long long v;
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		snprintf(err, err_len, "cannot read '%s': %s", path,
			 strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (errno || end == buf || *end || strchr(buf, '-') ||
	    n == sizeof(buf) - 1) {
		snprintf(err, err_len, "'%s' does not hold one whole number",
			 path);
		return -1;
	}
	*ops = v;
	return 0;
}

int recorder_add(struct recorder *r, const struct lt_snapshot *s)
{
	json_object *o = set_json(s, false);

	/* New descendants join, and ended ones keep what they spent. */
	proc_cpu_sample(r->cpu);
	fprintf(r->f, "%s\n%s", r->n_intervals ? "," : "",
		json_object_to_json_string_ext(o, JSON_FLAGS));
	json_object_put(o);
	r->n_intervals++;
	/* Each interval reaches the temporary file as it ends. */
	return fflush(r->f) || ferror(r->f) ? -EIO : 0;
}

static json_object *j_seconds(const struct timeval *tv)
{
	return json_object_new_double((double)tv->tv_sec +
				      (double)tv->tv_usec / 1e6);
}

/* The command's CPU time, or null when there is no command to know it. */
static void put_cpu(FILE *f, int exit_status)
{
	struct rusage ru;
	bool known = exit_status >= 0 && !getrusage(RUSAGE_CHILDREN, &ru);

	put_member(f, "cpu_user_s", known ? j_seconds(&ru.ru_utime) : NULL);
	fputc(',', f);
	put_member(f, "cpu_sys_s", known ? j_seconds(&ru.ru_stime) : NULL);
}

/* --pid's processes' CPU time, and the operation count, when known. */
static void put_pids_cpu_ops(struct recorder *r)
{
	double user, sys;
	size_t lost;
	bool known;

	proc_cpu_sample(r->cpu);
	known = proc_cpu_total(r->cpu, &user, &sys, &lost);
	put_member(r->f, "pids_cpu_user_s",
		   known ? json_object_new_double(user) : NULL);
	fputc(',', r->f);
	put_member(r->f, "pids_cpu_sys_s",
		   known ? json_object_new_double(sys) : NULL);
	fputc(',', r->f);
	put_member(r->f, "pids_unwaited", known ? j_u64(lost) : NULL);
	fputc(',', r->f);
	put_member(r->f, "ops", r->has_ops ? j_u64(r->ops) : NULL);
}

int recorder_finish(struct recorder *r, const struct lt_snapshot *last,
		    int exit_status, const char *ended_by, char *err,
		    size_t err_len)
{
	char *dir, *slash;
	int fd, ret = 0;
	mode_t mask;

	fprintf(r->f, "\n],\n");
	put_member(r->f, "final", last ? set_json(last, true) : NULL);
	fprintf(r->f, ",\n");
	put_member(r->f, "exit_status",
		   exit_status >= 0 ? json_object_new_int(exit_status) : NULL);
	fputc(',', r->f);
	put_cpu(r->f, exit_status);
	fputc(',', r->f);
	put_pids_cpu_ops(r);
	fputc(',', r->f);
	put_member(r->f, "ended_by", json_object_new_string(ended_by));
	fputc(',', r->f);
	put_member(r->f, "end_time",
		   json_object_new_double(lt_wall_ns() / 1e9));
	fprintf(r->f, "}\n");

	/* mkstemp made it 0600; a record is as readable as any output. */
	mask = umask(0);
	umask(mask);
	if (fflush(r->f) || ferror(r->f) ||
	    fchmod(fileno(r->f), 0666 & ~mask) || fsync(fileno(r->f))) {
		ret = -errno;
		snprintf(err, err_len, "cannot write '%s': %s", r->path,
			 strerror(errno));
		recorder_abort(r);
		return ret ? ret : -EIO;
	}
	if (fclose(r->f)) {
		r->f = NULL;
		ret = -errno;
		snprintf(err, err_len, "cannot write '%s': %s", r->path,
			 strerror(errno));
		recorder_abort(r);
		return ret;
	}
	r->f = NULL;
	if (rename(r->tmp, r->path)) {
		ret = -errno;
		snprintf(err, err_len, "cannot rename '%s' to '%s': %s", r->tmp,
			 r->path, strerror(errno));
		recorder_abort(r);
		return ret;
	}
	/* The rename itself must survive a crash too. */
	dir = strdup(r->path);
	if (dir) {
		slash = strrchr(dir, '/');
		if (slash)
			slash[1] = '\0';
		fd = open(slash ? dir : ".",
			  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			fsync(fd);
			close(fd);
		}
		free(dir);
	}
	proc_cpu_free(r->cpu);
	free(r->tmp);
	free(r->path);
	free(r);
	return 0;
}

void recorder_abort(struct recorder *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	if (r->tmp)
		unlink(r->tmp);
	proc_cpu_free(r->cpu);
	free(r->tmp);
	free(r->path);
	free(r);
}
