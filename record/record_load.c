// SPDX-License-Identifier: GPL-2.0-or-later
/* Recordings read back: the loader behind `locktop diff`, strict about
 * what it accepts (record.c writes them). */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "record.h"

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

/* The figures of one part of a figures object (see fig_part_json). */
static int load_part(struct loader *ld, json_object *o, const char *where,
		     struct rec_fig *f, enum rec_fig_part part)
{
#define REC_LOAD(NAME, PART)                                        \
	if (PART == part && get_u64(ld, o, #NAME, where, &f->NAME)) \
		return -1;
#define LT_FIGURE(NAME, JSON, RECORD) REC_KEPT(RECORD, REC_LOAD, NAME)
#include "figures.def"
#undef REC_LOAD
	return 0;
}

static int load_fig(struct loader *ld, json_object *o, const char *where,
		    struct rec_fig *f)
{
	json_object *h;
	size_t i, n;

	memset(f, 0, sizeof(*f));
	/* Figures absent in older records (samples, yields) read as 0. */
	if (load_part(ld, o, where, f, REC_PART_WAIT) ||
	    get_u64(ld, o, "p99_wait_ns", where, &f->p99_wait_ns) ||
	    load_part(ld, o, where, f, REC_PART_HOLD) ||
	    load_part(ld, o, where, f, REC_PART_REST))
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

/* By key, then kind: one key may name a lock of two kinds (a store's
 * chain taken by fcntl in one run and by a mutex in another). */
static int cmp_lock(const void *a, const void *b)
{
	const struct rec_lock *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return (int)x->kind - (int)y->kind;
}

static int cmp_key(const void *a, const void *b)
{
	const struct rec_lock *x = a, *y = b;

	return strcmp(x->key, y->key);
}

/* A second entry of a's key: its figures add, its type and caller fill
 * what a lacks. */
static void lock_merge(struct rec_lock *a, const struct rec_lock *b)
{
	rec_fig_add(&a->fig, &b->fig);
	if (!a->kernel_type[0])
		memcpy(a->kernel_type, b->kernel_type, sizeof(a->kernel_type));
	if (!a->caller[0])
		memcpy(a->caller, b->caller, sizeof(a->caller));
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
		    get_str(ld, lo, "kernel_type", lw, l->kernel_type,
			    sizeof(l->kernel_type), false) ||
		    get_str(ld, lo, "caller", lw, l->caller, sizeof(l->caller),
			    false) ||
		    load_fig(ld, lo, lw, &l->fig))
			return -1;
		k = lt_kind_parse(kind);
		if (k < 0)
			return bad(ld, "%s: unknown kind \"%s\"", lw, kind);
		l->kind = (enum lt_kind)k;
		record_normalize_key(raw, l->key, sizeof(l->key));
		s->n_locks++;
	}
	/* One entry per key and kind: runs of one program under one
	 * record merge. */
	qsort(s->locks, s->n_locks, sizeof(*s->locks), cmp_lock);
	for (i = 0, j = 0; i < s->n_locks; i++) {
		if (j && !cmp_lock(&s->locks[j - 1], &s->locks[i])) {
			lock_merge(&s->locks[j - 1], &s->locks[i]);
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

/* What the run cost and did: CPU times and operations, when known. */
static int load_run(struct loader *ld, json_object *root, struct record *r)
{
	json_object *v;
	bool user, sys;

	/* Absent or null without a command, and in older records. */
	if (get_opt_double(ld, root, "cpu_user_s", "record", &r->cpu_user_s,
			   &user) ||
	    get_opt_double(ld, root, "cpu_sys_s", "record", &r->cpu_sys_s,
			   &sys))
		return -1;
	r->has_cpu = user && sys;
	if (get_opt_double(ld, root, "pids_cpu_user_s", "record",
			   &r->pids_cpu_user_s, &user) ||
	    get_opt_double(ld, root, "pids_cpu_sys_s", "record",
			   &r->pids_cpu_sys_s, &sys) ||
	    get_u64(ld, root, "pids_unwaited", "record", &r->pids_unwaited))
		return -1;
	r->has_pids_cpu = user && sys;
	/* The operation count: absent or null when not known. */
	r->has_ops = json_object_object_get_ex(root, "ops", &v) && v;
	return get_u64(ld, root, "ops", "record", &r->ops);
}

static int load_record(struct loader *ld, json_object *root, struct record *r)
{
	json_object *v, *iv;
	char fmt[64], where[48];
	int64_t version;
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
	if (load_run(ld, root, r))
		return -1;
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
	const struct rec_lock *l;
	struct rec_lock probe;

	if (!s->n_locks)
		return NULL;
	snprintf(probe.key, sizeof(probe.key), "%s", key);
	l = bsearch(&probe, s->locks, s->n_locks, sizeof(*s->locks), cmp_key);
	while (l && l > s->locks && !strcmp(l[-1].key, probe.key))
		l--;
	return l;
}

const struct rec_lock *rec_set_find_kind(const struct rec_set *s,
					 const char *key, enum lt_kind kind)
{
	const struct rec_lock *l = rec_set_find(s, key);

	for (; l && l < s->locks + s->n_locks && !strcmp(l->key, key); l++)
		if (l->kind == kind)
			return l;
	return NULL;
}
