// SPDX-License-Identifier: GPL-2.0-or-later
/* Batch output: the data comes from a snapshot, this file only formats it. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "output.h"

struct row {
	const struct lt_lock *lock;
	const struct lt_figures *fig;
};

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->fig->wait_ns != y->fig->wait_ns)
		return x->fig->wait_ns < y->fig->wait_ns ? 1 : -1;
	if (x->fig->waits != y->fig->waits)
		return x->fig->waits < y->fig->waits ? 1 : -1;
	return strcmp(x->lock->name, y->lock->name);
}

/* The locks worth a row, worst first. Caller frees. */
static struct row *rank(const struct output_opts *o,
			const struct lt_snapshot *s, bool totals, size_t *n)
{
	struct row *rows = calloc(s->n_locks ? s->n_locks : 1, sizeof(*rows));
	size_t i, k = 0;

	if (!rows)
		return NULL;
	for (i = 0; i < s->n_locks; i++) {
		const struct lt_lock *l = &s->locks[i];
		const struct lt_figures *f = totals ? &l->total : &l->delta;

		if (!f->waits || (!o->all_kinds && !lt_kind_is_lock(l->kind)))
			continue;
		rows[k].lock = l;
		rows[k].fig = f;
		k++;
	}
	qsort(rows, k, sizeof(*rows), cmp_rows);
	*n = k;
	return rows;
}

static json_object *lock_json(const struct row *r)
{
	const struct lt_lock *l = r->lock;
	json_object *o = json_object_new_object();
	json_object *pids = json_object_new_array();
	char addr[32];
	size_t i;

	for (i = 0; i < l->n_pids; i++)
		json_object_array_add(pids, json_object_new_int(l->pids[i]));
	snprintf(addr, sizeof(addr), "0x%" PRIx64, l->address);
	json_object_object_add(o, "name", json_object_new_string(l->name));
	json_object_object_add(o, "kind",
			       json_object_new_string(lt_kind_name(l->kind)));
	json_object_object_add(o, "pids", pids);
	json_object_object_add(o, "waits",
			       json_object_new_uint64(r->fig->waits));
	json_object_object_add(o, "wait_ns",
			       json_object_new_uint64(r->fig->wait_ns));
	json_object_object_add(o, "max_wait_ns",
			       json_object_new_uint64(r->fig->max_wait_ns));
	json_object_object_add(o, "address", json_object_new_string(addr));
	json_object_object_add(o, "comm", json_object_new_string(l->comm));
	return o;
}

static int emit_json(const struct output_opts *o, const struct lt_snapshot *s,
		     bool totals, int exit_status)
{
	json_object *root = json_object_new_object();
	json_object *locks = json_object_new_array();
	struct row *rows;
	size_t n, i;
	int ret = 0;

	rows = rank(o, s, totals, &n);
	if (!rows) {
		json_object_put(root);
		json_object_put(locks);
		return -ENOMEM;
	}
	if (o->limit && n > o->limit)
		n = o->limit;
	for (i = 0; i < n; i++)
		json_object_array_add(locks, lock_json(&rows[i]));
	free(rows);

	json_object_object_add(root, "time", json_object_new_double(s->time));
	json_object_object_add(root, "interval_s",
			       json_object_new_double(totals ? s->elapsed_s :
							       s->interval_s));
	json_object_object_add(root, "drops",
			       json_object_new_uint64(totals ? s->drops_total :
							       s->drops_delta));
	json_object_object_add(root, "locks", locks);
	if (totals) {
		json_object_object_add(root, "final",
				       json_object_new_boolean(1));
		json_object_object_add(root, "elapsed_s",
				       json_object_new_double(s->elapsed_s));
		if (exit_status >= 0)
			json_object_object_add(
				root, "exit_status",
				json_object_new_int(exit_status));
	}
	if (fprintf(o->out, "%s\n",
		    json_object_to_json_string_ext(root,
						   JSON_C_TO_STRING_PLAIN)) < 0)
		ret = -errno;
	json_object_put(root);
	return ret;
}

static void print_row(FILE *out, const struct row *r)
{
	const struct lt_lock *l = r->lock;
	const struct lt_figures *f = r->fig;
	char total[16], avg[16], max[16], proc[48];

	snprintf(proc, sizeof(proc), "%s/%d", l->comm,
		 l->n_pids ? l->pids[0] : 0);
	if (l->n_pids > 1)
		snprintf(proc + strlen(proc), sizeof(proc) - strlen(proc),
			 " +%zu", l->n_pids - 1);
	fprintf(out, "%-36.36s %-10s %9" PRIu64 " %10s %9s %9s  %s\n", l->name,
		lt_kind_name(l->kind), f->waits,
		lt_format_ns(f->wait_ns, total, sizeof(total)),
		lt_format_ns(f->wait_ns / f->waits, avg, sizeof(avg)),
		lt_format_ns(f->max_wait_ns, max, sizeof(max)), proc);
}

static int emit_text(const struct output_opts *o, const struct lt_snapshot *s,
		     bool totals, int exit_status)
{
	FILE *out = o->out;
	struct row *rows;
	char when[32];
	time_t t = (time_t)s->time;
	struct tm tm;
	size_t n, i, shown;

	rows = rank(o, s, totals, &n);
	if (!rows)
		return -ENOMEM;
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	if (totals) {
		fprintf(out,
			"locktop summary - %s - whole run %.2fs - %zu "
			"lock%s waited on - drops %" PRIu64,
			when, s->elapsed_s, n, n == 1 ? "" : "s",
			s->drops_total);
		if (exit_status >= 0)
			fprintf(out, " - command exit status %d", exit_status);
		fputc('\n', out);
	} else {
		fprintf(out,
			"locktop - %s - interval %.2fs - %zu lock%s "
			"waited on - drops %" PRIu64 "\n",
			when, s->interval_s, n, n == 1 ? "" : "s",
			s->drops_delta);
	}
	fprintf(out, "%-36s %-10s %9s %10s %9s %9s  %s\n", "LOCK", "KIND",
		"WAITS", "TOTAL WAIT", "AVG", "MAX", "PROCESS");
	shown = o->limit && n > o->limit ? o->limit : n;
	for (i = 0; i < shown; i++)
		print_row(out, &rows[i]);
	if (shown < n)
		fprintf(out, "... %zu more (--limit 0 shows all)\n", n - shown);
	fputc('\n', out);
	free(rows);
	return fflush(out) ? -errno : 0;
}

int output_interval(const struct output_opts *o, const struct lt_snapshot *s)
{
	int ret = o->json ? emit_json(o, s, false, -1) :
			    emit_text(o, s, false, -1);

	if (!ret && fflush(o->out))
		ret = -errno;
	return ret;
}

int output_final(const struct output_opts *o, const struct lt_snapshot *s,
		 int exit_status)
{
	int ret = o->json ? emit_json(o, s, true, exit_status) :
			    emit_text(o, s, true, exit_status);

	if (!ret && fflush(o->out))
		ret = -errno;
	return ret;
}
