// SPDX-License-Identifier: GPL-2.0-or-later
/* Recordings: the writer behind `locktop record`, the loader for diff. */
#include <errno.h>
#include <stdarg.h>
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
#include "record.h"

/* ---- metrics ---- */

static const char *const metric_names[REC_METRIC_NR] = {
	[REC_WAITS] = "waits",
	[REC_WAIT_TIME] = "wait_time",
	[REC_HOLD_TIME] = "hold_time",
	[REC_P99] = "p99",
	[REC_CONTENDED] = "contended",
	[REC_TRYLOCK_FAILURES] = "trylock_failures",
};

static const char *const metric_labels[REC_METRIC_NR] = {
	[REC_WAITS] = "waits",
	[REC_WAIT_TIME] = "wait time",
	[REC_HOLD_TIME] = "hold time",
	[REC_P99] = "p99 wait",
	[REC_CONTENDED] = "contended",
	[REC_TRYLOCK_FAILURES] = "trylock failures",
};

const char *rec_metric_name(enum rec_metric m)
{
	return (unsigned int)m < REC_METRIC_NR ? metric_names[m] : "?";
}

const char *rec_metric_label(enum rec_metric m)
{
	return (unsigned int)m < REC_METRIC_NR ? metric_labels[m] : "?";
}

int rec_metric_parse(const char *name)
{
	int m;

	for (m = 0; m < REC_METRIC_NR; m++)
		if (!strcmp(name, metric_names[m]))
			return m;
	return -1;
}

bool rec_metric_is_time(enum rec_metric m)
{
	return m == REC_WAIT_TIME || m == REC_HOLD_TIME || m == REC_P99;
}

void rec_fig_add(struct rec_fig *a, const struct rec_fig *b)
{
	size_t i;

	/* Sums wrap rather than trap: a file may hold anything. */
	a->waits += b->waits;
	a->wait_ns += b->wait_ns;
	if (b->max_wait_ns > a->max_wait_ns)
		a->max_wait_ns = b->max_wait_ns;
	a->hold_ns += b->hold_ns;
	a->acquires += b->acquires;
	a->contended += b->contended;
	a->trylock_failures += b->trylock_failures;
	a->io_under_lock_ns += b->io_under_lock_ns;
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
	case REC_WAITS:
		return f->waits;
	case REC_WAIT_TIME:
		return f->wait_ns;
	case REC_HOLD_TIME:
		return f->hold_ns;
	case REC_P99:
		if (f->has_hist)
			return lt_hist_quantile(f->wait_hist, LT_HIST_BUCKETS,
						0.99);
		return f->p99_wait_ns;
	case REC_CONTENDED:
		return f->contended;
	case REC_TRYLOCK_FAILURES:
		return f->trylock_failures;
	default:
		return 0;
	}
}

void record_normalize_key(const char *full, char *out, size_t len)
{
	static const char deleted[] = " (deleted)";
	static const char lb[] = "lockbench-";
	const char *colon = strchr(full, ':'), *slash = strrchr(full, '/');
	char key[2 * LT_NAME_LEN];
	size_t o = 0, i = 0, n, j;

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
		if (!strncmp(key + i, deleted, sizeof(deleted) - 1)) {
			i += sizeof(deleted) - 1;
			continue;
		}
		if (!strncmp(key + i, lb, sizeof(lb) - 1) &&
		    (i == 0 || key[i - 1] == '/' || key[i - 1] == ':')) {
			/* mkstemp's six characters, then ".tdb" */
			for (j = 0; j < 6; j++) {
				char c = key[i + sizeof(lb) - 1 + j];

				if (!((c >= 'a' && c <= 'z') ||
				      (c >= 'A' && c <= 'Z') ||
				      (c >= '0' && c <= '9')))
					break;
			}
			if (j == 6 &&
			    !strncmp(key + i + sizeof(lb) - 1 + 6, ".tdb", 4)) {
				int w = snprintf(out + o, len - o,
						 "lockbench-*.tdb");

				if (w < 0 || (size_t)w >= len - o) {
					o = len - 1;
					break;
				}
				o += (size_t)w;
				i += sizeof(lb) - 1 + 6 + 4;
				continue;
			}
		}
		out[o++] = key[i++];
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
};

static json_object *j_u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static void fig_from_lt(struct rec_fig *r, const struct lt_figures *f)
{
	memset(r, 0, sizeof(*r));
	r->waits = f->waits;
	r->wait_ns = f->wait_ns;
	r->max_wait_ns = f->max_wait_ns;
	r->hold_ns = f->hold_ns;
	r->acquires = f->acquires;
	r->contended = f->contended;
	r->trylock_failures = f->trylock_failures;
	r->io_under_lock_ns = f->io_under_lock_ns;
	r->has_hist = true;
	memcpy(r->wait_hist, f->wait_hist, sizeof(r->wait_hist));
	r->p99_wait_ns = rec_fig_metric(r, REC_P99);
}

static void fig_json(json_object *o, const struct rec_fig *f)
{
	json_object *h = json_object_new_array();
	size_t n = LT_HIST_BUCKETS, i;

	json_object_object_add(o, "waits", j_u64(f->waits));
	json_object_object_add(o, "wait_ns", j_u64(f->wait_ns));
	json_object_object_add(o, "max_wait_ns", j_u64(f->max_wait_ns));
	json_object_object_add(o, "p99_wait_ns",
			       j_u64(rec_fig_metric(f, REC_P99)));
	json_object_object_add(o, "hold_ns", j_u64(f->hold_ns));
	json_object_object_add(o, "acquires", j_u64(f->acquires));
	json_object_object_add(o, "contended", j_u64(f->contended));
	json_object_object_add(o, "trylock_failures",
			       j_u64(f->trylock_failures));
	json_object_object_add(o, "io_under_lock_ns",
			       j_u64(f->io_under_lock_ns));
	/* Trailing empty buckets say nothing: leave them out. */
	while (n && !f->wait_hist[n - 1])
		n--;
	for (i = 0; i < n; i++)
		json_object_array_add(h, j_u64(f->wait_hist[i]));
	json_object_object_add(o, "wait_hist", h);
}

static bool lt_fig_active(const struct lt_figures *f)
{
	return f->waits || f->wait_ns || f->acquires || f->contended ||
	       f->trylock_failures || f->hold_ns || f->io_under_lock_ns;
}

/* One interval (deltas) or the totals, as a JSON object. */
static json_object *set_json(const struct lt_snapshot *s, bool totals)
{
	json_object *o = json_object_new_object();
	json_object *locks = json_object_new_array();
	json_object *kinds = json_object_new_object();
	struct rec_fig kf[LT_KIND_NR], lf;
	bool active[LT_KIND_NR] = { false };
	size_t i;
	int k;

	memset(kf, 0, sizeof(kf));
	for (i = 0; i < s->n_locks; i++) {
		const struct lt_lock *l = &s->locks[i];
		const struct lt_figures *f = totals ? &l->total : &l->delta;
		json_object *lo;

		if (!lt_fig_active(f) || (unsigned int)l->kind >= LT_KIND_NR)
			continue;
		fig_from_lt(&lf, f);
		rec_fig_add(&kf[l->kind], &lf);
		active[l->kind] = true;
		lo = json_object_new_object();
		json_object_object_add(lo, "key",
				       json_object_new_string(l->key));
		json_object_object_add(lo, "name",
				       json_object_new_string(l->name));
		json_object_object_add(
			lo, "kind",
			json_object_new_string(lt_kind_name(l->kind)));
		fig_json(lo, &lf);
		json_object_array_add(locks, lo);
	}
	for (k = 0; k < LT_KIND_NR; k++) {
		json_object *ko;

		if (!active[k])
			continue;
		ko = json_object_new_object();
		fig_json(ko, &kf[k]);
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

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int recorder_open(const struct record_meta *m, struct recorder **out, char *err,
		  size_t err_len)
{
	struct recorder *r = calloc(1, sizeof(*r));
	char host[256] = "", kernel[1024], release[128], cmdline[4096] = "";
	char when[64];
	const char *slash;
	struct utsname u;
	json_object *a;
	double start = wall_now();
	size_t dir_len;
	int fd, i;

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

	fprintf(r->f, "{");
	put_member(r->f, "format", json_object_new_string(RECORD_FORMAT));
	fputc(',', r->f);
	put_member(r->f, "version", json_object_new_int(RECORD_VERSION));
	fprintf(r->f, ",\n");
	put_member(r->f, "host", json_object_new_string(host));
	fputc(',', r->f);
	put_member(r->f, "kernel", json_object_new_string(kernel));
	fputc(',', r->f);
	put_member(r->f, "release", json_object_new_string(release));
	fprintf(r->f, ",\n");
	put_member(r->f, "cmdline", json_object_new_string(cmdline));
	fputc(',', r->f);
	a = NULL;
	if (m->command) {
		a = json_object_new_array();
		for (i = 0; m->command[i]; i++)
			json_object_array_add(
				a, json_object_new_string(m->command[i]));
	}
	put_member(r->f, "command", a);
	fputc(',', r->f);
	a = json_object_new_array();
	for (size_t p = 0; p < m->n_pids; p++)
		json_object_array_add(a, json_object_new_int(m->pids[p]));
	put_member(r->f, "pids", a);
	fprintf(r->f, ",\n");
	put_member(r->f, "start_time", json_object_new_double(start));
	fputc(',', r->f);
	put_member(r->f, "start", json_object_new_string(when));
	fputc(',', r->f);
	put_member(r->f, "interval_s", json_object_new_double(m->interval_s));
	fputc(',', r->f);
	put_member(r->f, "duration_s",
		   m->duration_s > 0 ? json_object_new_double(m->duration_s) :
				       NULL);
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

int recorder_add(struct recorder *r, const struct lt_snapshot *s)
{
	json_object *o = set_json(s, false);

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
	put_member(r->f, "ended_by", json_object_new_string(ended_by));
	fputc(',', r->f);
	put_member(r->f, "end_time", json_object_new_double(wall_now()));
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
	free(r->tmp);
	free(r->path);
	free(r);
}

/* ---- reading ---- */

struct loader {
	char *err;
	size_t err_len;
};

static int bad(struct loader *ld, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(struct loader *ld, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ld->err, ld->err_len, fmt, ap);
	va_end(ap);
	return -1;
}

/* An unsigned count: absent is 0, anything but a whole number >= 0 is bad. */
static int get_u64(struct loader *ld, json_object *o, const char *name,
		   const char *where, uint64_t *v)
{
	json_object *m;

	*v = 0;
	if (!json_object_object_get_ex(o, name, &m) || !m)
		return 0;
	if (!json_object_is_type(m, json_type_int))
		return bad(ld, "%s: \"%s\" is not a whole number", where, name);
	if (json_object_get_int64(m) < 0 &&
	    json_object_get_uint64(m) <= (uint64_t)INT64_MAX)
		return bad(ld, "%s: \"%s\" is negative", where, name);
	*v = json_object_get_uint64(m);
	return 0;
}

static int get_double(struct loader *ld, json_object *o, const char *name,
		      const char *where, double *v)
{
	json_object *m;
	double d;

	*v = 0;
	if (!json_object_object_get_ex(o, name, &m) || !m)
		return 0;
	if (!json_object_is_type(m, json_type_int) &&
	    !json_object_is_type(m, json_type_double))
		return bad(ld, "%s: \"%s\" is not a number", where, name);
	d = json_object_get_double(m);
	if (!isfinite(d) || d < 0 || d > 1e12)
		return bad(ld, "%s: \"%s\" is out of range", where, name);
	*v = d;
	return 0;
}

/* A number that may be absent or null: *present says which. */
static int get_opt_double(struct loader *ld, json_object *o, const char *name,
			  const char *where, double *v, bool *present)
{
	json_object *m;

	*present = json_object_object_get_ex(o, name, &m) && m;
	return get_double(ld, o, name, where, v);
}

/* A string member into buf; absent is "". */
static int get_str(struct loader *ld, json_object *o, const char *name,
		   const char *where, char *buf, size_t len, bool required)
{
	json_object *m;

	buf[0] = '\0';
	if (!json_object_object_get_ex(o, name, &m) || !m) {
		if (required)
			return bad(ld, "%s: \"%s\" is missing", where, name);
		return 0;
	}
	if (!json_object_is_type(m, json_type_string))
		return bad(ld, "%s: \"%s\" is not a string", where, name);
	snprintf(buf, len, "%s", json_object_get_string(m));
	return 0;
}

static int load_fig(struct loader *ld, json_object *o, const char *where,
		    struct rec_fig *f)
{
	json_object *h;
	size_t i, n;

	memset(f, 0, sizeof(*f));
	if (get_u64(ld, o, "waits", where, &f->waits) ||
	    get_u64(ld, o, "wait_ns", where, &f->wait_ns) ||
	    get_u64(ld, o, "max_wait_ns", where, &f->max_wait_ns) ||
	    get_u64(ld, o, "p99_wait_ns", where, &f->p99_wait_ns) ||
	    get_u64(ld, o, "hold_ns", where, &f->hold_ns) ||
	    get_u64(ld, o, "acquires", where, &f->acquires) ||
	    get_u64(ld, o, "contended", where, &f->contended) ||
	    get_u64(ld, o, "trylock_failures", where, &f->trylock_failures) ||
	    get_u64(ld, o, "io_under_lock_ns", where, &f->io_under_lock_ns))
		return -1;
	if (!json_object_object_get_ex(o, "wait_hist", &h) || !h)
		return 0;
	if (!json_object_is_type(h, json_type_array))
		return bad(ld, "%s: \"wait_hist\" is not an array", where);
	n = json_object_array_length(h);
	if (n > LT_HIST_BUCKETS)
		return bad(ld, "%s: \"wait_hist\" has %zu buckets, at most %d",
			   where, n, LT_HIST_BUCKETS);
	for (i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(h, i);

		if (!b || !json_object_is_type(b, json_type_int) ||
		    (json_object_get_int64(b) < 0 &&
		     json_object_get_uint64(b) <= (uint64_t)INT64_MAX))
			return bad(ld,
				   "%s: \"wait_hist\" bucket %zu is not a "
				   "whole number >= 0",
				   where, i);
		f->wait_hist[i] = json_object_get_uint64(b);
	}
	f->has_hist = true;
	return 0;
}

static int cmp_lock(const void *a, const void *b)
{
	const struct rec_lock *x = a, *y = b;

	return strcmp(x->key, y->key);
}

static int load_set(struct loader *ld, json_object *o, const char *where,
		    struct rec_set *s)
{
	json_object *locks;
	char lw[96];
	size_t n, i, j;

	memset(s, 0, sizeof(*s));
	if (!json_object_is_type(o, json_type_object))
		return bad(ld, "%s is not an object", where);
	if (get_double(ld, o, "time", where, &s->time) ||
	    get_double(ld, o, "interval_s", where, &s->interval_s) ||
	    get_double(ld, o, "elapsed_s", where, &s->elapsed_s) ||
	    get_u64(ld, o, "drops", where, &s->drops))
		return -1;
	if (!json_object_object_get_ex(o, "locks", &locks) || !locks ||
	    !json_object_is_type(locks, json_type_array))
		return bad(ld, "%s: \"locks\" is missing or not an array",
			   where);
	n = json_object_array_length(locks);
	s->locks = calloc(n ? n : 1, sizeof(*s->locks));
	if (!s->locks)
		return bad(ld, "out of memory");
	for (i = 0; i < n; i++) {
		json_object *lo = json_object_array_get_idx(locks, i);
		struct rec_lock *l = &s->locks[s->n_locks];
		char raw[LT_NAME_LEN], kind[32];
		int k;

		snprintf(lw, sizeof(lw), "%s, lock %zu", where, i);
		if (!lo || !json_object_is_type(lo, json_type_object))
			return bad(ld, "%s is not an object", lw);
		if (get_str(ld, lo, "key", lw, raw, sizeof(raw), true) ||
		    get_str(ld, lo, "name", lw, l->name, sizeof(l->name),
			    false) ||
		    get_str(ld, lo, "kind", lw, kind, sizeof(kind), true) ||
		    load_fig(ld, lo, lw, &l->fig))
			return -1;
		k = lt_kind_parse(kind);
		if (k < 0)
			return bad(ld, "%s: unknown kind \"%s\"", lw, kind);
		l->kind = (enum lt_kind)k;
		record_normalize_key(raw, l->key, sizeof(l->key));
		s->n_locks++;
	}
	/* One entry per key: runs of one program under one record merge. */
	qsort(s->locks, s->n_locks, sizeof(*s->locks), cmp_lock);
	for (i = 0, j = 0; i < s->n_locks; i++) {
		if (j && !strcmp(s->locks[j - 1].key, s->locks[i].key)) {
			rec_fig_add(&s->locks[j - 1].fig, &s->locks[i].fig);
			continue;
		}
		if (i != j)
			s->locks[j] = s->locks[i];
		j++;
	}
	s->n_locks = j;
	for (i = 0; i < s->n_locks; i++)
		rec_fig_add(&s->kinds[s->locks[i].kind], &s->locks[i].fig);
	return 0;
}

static void set_free(struct rec_set *s)
{
	free(s->locks);
	s->locks = NULL;
	s->n_locks = 0;
}

void record_free(struct record *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n_intervals; i++)
		set_free(&r->intervals[i]);
	free(r->intervals);
	set_free(&r->final);
	free(r);
}

static int load_record(struct loader *ld, json_object *root, struct record *r)
{
	json_object *v, *iv;
	char fmt[64], where[48];
	int64_t version;
	bool user, sys;
	size_t n, i;

	if (!json_object_is_type(root, json_type_object))
		return bad(ld, "not a locktop record: the top level is not "
			       "an object");
	if (!json_object_object_get_ex(root, "format", &v) || !v ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), RECORD_FORMAT)) {
		if (v && json_object_is_type(v, json_type_string))
			snprintf(fmt, sizeof(fmt), "\"%.40s\"",
				 json_object_get_string(v));
		else
			snprintf(fmt, sizeof(fmt), "none");
		return bad(ld,
			   "not a locktop record: \"format\" is %s, not \"%s\"",
			   fmt, RECORD_FORMAT);
	}
	if (!json_object_object_get_ex(root, "version", &v) || !v ||
	    !json_object_is_type(v, json_type_int))
		return bad(ld, "\"version\" is missing or not a whole number");
	version = json_object_get_int64(v);
	if (version != RECORD_VERSION)
		return bad(ld,
			   "record format version %" PRId64
			   " is not supported: this locktop reads version %d%s",
			   version, RECORD_VERSION,
			   version > RECORD_VERSION ? " (the file is newer)" :
						      "");
	r->version = (int)version;
	r->exit_status = -1;
	if (get_str(ld, root, "host", "record", r->host, sizeof(r->host),
		    false) ||
	    get_str(ld, root, "kernel", "record", r->kernel, sizeof(r->kernel),
		    false) ||
	    get_str(ld, root, "cmdline", "record", r->cmdline,
		    sizeof(r->cmdline), false) ||
	    get_str(ld, root, "start", "record", r->start, sizeof(r->start),
		    false) ||
	    get_str(ld, root, "ended_by", "record", r->ended_by,
		    sizeof(r->ended_by), false) ||
	    get_double(ld, root, "start_time", "record", &r->start_time) ||
	    get_double(ld, root, "interval_s", "record", &r->interval_s))
		return -1;
	if (json_object_object_get_ex(root, "exit_status", &v) && v) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > 255 + 128)
			return bad(ld, "\"exit_status\" is out of range");
		r->exit_status = (int)json_object_get_int64(v);
	}
	/* Absent or null without a command, and in older records. */
	if (get_opt_double(ld, root, "cpu_user_s", "record", &r->cpu_user_s,
			   &user) ||
	    get_opt_double(ld, root, "cpu_sys_s", "record", &r->cpu_sys_s,
			   &sys))
		return -1;
	r->has_cpu = user && sys;
	if (!json_object_object_get_ex(root, "intervals", &iv) || !iv ||
	    !json_object_is_type(iv, json_type_array))
		return bad(ld, "\"intervals\" is missing or not an array");
	n = json_object_array_length(iv);
	r->intervals = calloc(n ? n : 1, sizeof(*r->intervals));
	if (!r->intervals)
		return bad(ld, "out of memory");
	for (i = 0; i < n; i++) {
		snprintf(where, sizeof(where), "interval %zu", i);
		r->n_intervals++;
		if (load_set(ld, json_object_array_get_idx(iv, i), where,
			     &r->intervals[i]))
			return -1;
	}
	if (!json_object_object_get_ex(root, "final", &v) || !v)
		return bad(ld, "\"final\" is missing: the recording did not "
			       "end cleanly");
	return load_set(ld, v, "final", &r->final);
}

/*
 * Incremental JSON: a file is fed in pieces, so garbage is refused at its
 * first byte and a huge file is never held whole next to its tree.
 */
struct jparse {
	struct json_tokener *tok;
	json_object *root;
	size_t off; /* bytes fed so far */
	bool started; /* a non-blank byte was seen */
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Returns 0 to go on, -1 on an error (in ld). */
static int jparse_feed(struct loader *ld, struct jparse *p, const char *buf,
		       size_t n)
{
	enum json_tokener_error jerr;
	size_t i, c, used;

	while (n) {
		if (p->root) {
			/* Only white space may follow the record. */
			for (i = 0; i < n; i++)
				if (!blank(buf[i]))
					return bad(ld,
						   "data after the record at "
						   "byte %zu",
						   p->off + i);
			p->off += n;
			return 0;
		}
		if (!p->started) {
			for (i = 0; i < n && blank(buf[i]); i++)
				;
			p->off += i;
			buf += i;
			n -= i;
			if (!n)
				return 0;
			if (buf[0] != '{')
				return bad(ld,
					   "not a locktop record: it does not "
					   "start with '{' (byte %zu)",
					   p->off);
			p->started = true;
		}
		/* json_tokener_parse_ex takes an int length. */
		c = n > (1u << 20) ? (1u << 20) : n;
		p->root = json_tokener_parse_ex(p->tok, buf, (int)c);
		jerr = json_tokener_get_error(p->tok);
		if (!p->root && jerr != json_tokener_continue) {
			if (jerr == json_tokener_error_depth)
				return bad(ld,
					   "nested deeper than %d levels: not "
					   "a locktop record",
					   RECORD_MAX_DEPTH);
			return bad(ld, "not valid JSON near byte %zu: %s",
				   p->off + json_tokener_get_parse_end(p->tok),
				   json_tokener_error_desc(jerr));
		}
		used = p->root ? json_tokener_get_parse_end(p->tok) : c;
		if (used > c)
			used = c;
		p->off += used;
		buf += used;
		n -= used;
	}
	return 0;
}

static int jparse_end(struct loader *ld, struct jparse *p)
{
	if (p->root)
		return 0;
	if (!p->started)
		return bad(ld, "empty file: not a locktop record");
	return bad(ld, "truncated: the JSON ends early, at byte %zu", p->off);
}

static int parse_root(struct loader *ld, struct jparse *p, struct record **out)
{
	struct record *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return bad(ld, "out of memory");
	ret = load_record(ld, p->root, r);
	if (ret) {
		record_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

static int jparse_init(struct loader *ld, struct jparse *p)
{
	memset(p, 0, sizeof(*p));
	p->tok = json_tokener_new_ex(RECORD_MAX_DEPTH);
	if (!p->tok)
		return bad(ld, "out of memory");
	/* Trailing bytes are checked here, for a clearer message. */
	json_tokener_set_flags(p->tok,
			       JSON_TOKENER_STRICT |
				       JSON_TOKENER_ALLOW_TRAILING_CHARS);
	return 0;
}

static void jparse_free(struct jparse *p)
{
	if (p->root)
		json_object_put(p->root);
	if (p->tok)
		json_tokener_free(p->tok);
}

int record_parse(const char *buf, size_t len, struct record **out, char *err,
		 size_t err_len)
{
	struct loader ld = { .err = err, .err_len = err_len };
	struct jparse p;
	int ret;

	*out = NULL;
	if (len > RECORD_MAX_BYTES)
		return bad(&ld,
			   "too large (%zu bytes; a record is at most %lu)",
			   len, RECORD_MAX_BYTES);
	if (jparse_init(&ld, &p))
		return -1;
	ret = jparse_feed(&ld, &p, buf, len);
	if (!ret)
		ret = jparse_end(&ld, &p);
	if (!ret)
		ret = parse_root(&ld, &p, out);
	jparse_free(&p);
	return ret;
}

int record_load(const char *path, struct record **out, char *err,
		size_t err_len)
{
	char msg[256];
	struct loader ld = { .err = msg, .err_len = sizeof(msg) };
	struct jparse p;
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, ret = 0;

	*out = NULL;
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) :
				 dup(STDIN_FILENO);
	if (fd < 0) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s: is a directory", path);
		close(fd);
		return -1;
	}
	buf = malloc(1 << 16);
	if (!buf || jparse_init(&ld, &p)) {
		snprintf(err, err_len, "%s: out of memory", path);
		free(buf);
		close(fd);
		return -1;
	}
	for (;;) {
		n = read(fd, buf, 1 << 16);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = bad(&ld, "%s", strerror(errno));
			break;
		}
		if (!n)
			break;
		if (p.off + (size_t)n > RECORD_MAX_BYTES) {
			ret = bad(&ld,
				  "too large (more than %lu bytes): not a "
				  "record this locktop can load",
				  RECORD_MAX_BYTES);
			break;
		}
		ret = jparse_feed(&ld, &p, buf, (size_t)n);
		if (ret)
			break;
	}
	free(buf);
	close(fd);
	if (!ret)
		ret = jparse_end(&ld, &p);
	if (!ret)
		ret = parse_root(&ld, &p, out);
	jparse_free(&p);
	if (ret)
		snprintf(err, err_len, "%s: %s", path, msg);
	return ret;
}

const struct rec_lock *rec_set_find(const struct rec_set *s, const char *key)
{
	struct rec_lock probe;

	if (!s->n_locks)
		return NULL;
	snprintf(probe.key, sizeof(probe.key), "%s", key);
	return bsearch(&probe, s->locks, s->n_locks, sizeof(*s->locks),
		       cmp_lock);
}
