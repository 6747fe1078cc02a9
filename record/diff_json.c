// SPDX-License-Identifier: GPL-2.0-or-later
/* locktop diff as one JSON object (docs/record.md, "JSON output"). */
#include <math.h>
#include <stdio.h>
#include "diff_priv.h"

json_object *diff_j_figure(double v)
{
	if (v >= 0 && v < 9.2e18 && v == floor(v))
		return json_object_new_int64((int64_t)v);
	return json_object_new_double(v);
}

static json_object *j_opt_double(bool known, double v)
{
	return known ? json_object_new_double(v) : NULL;
}

static json_object *meta_json(const struct diff_cmp *c, int s)
{
	const struct record *r = c->rec[s];
	json_object *o = json_object_new_object();
	double t = r->final.elapsed_s;

	json_object_object_add(o, "path", json_object_new_string(c->path[s]));
	json_object_object_add(o, "host", json_object_new_string(r->host));
	json_object_object_add(o, "kernel", json_object_new_string(r->kernel));
	json_object_object_add(o, "cmdline",
			       json_object_new_string(r->cmdline));
	json_object_object_add(o, "start", json_object_new_string(r->start));
	json_object_object_add(o, "elapsed_s", json_object_new_double(t));
	json_object_object_add(o, "intervals",
			       json_object_new_int64((int64_t)r->n_intervals));
	json_object_object_add(o, "drops",
			       diff_j_figure((double)r->final.drops));
	json_object_object_add(o, "exit_status",
			       r->exit_status >= 0 ?
				       json_object_new_int(r->exit_status) :
				       NULL);
	json_object_object_add(o, "cpu_user_s",
			       j_opt_double(r->has_cpu, r->cpu_user_s));
	json_object_object_add(o, "cpu_sys_s",
			       j_opt_double(r->has_cpu, r->cpu_sys_s));
	json_object_object_add(o, "pids_cpu_user_s",
			       j_opt_double(r->has_pids_cpu,
					    r->pids_cpu_user_s));
	json_object_object_add(o, "pids_cpu_sys_s",
			       j_opt_double(r->has_pids_cpu,
					    r->pids_cpu_sys_s));
	json_object_object_add(o, "ops",
			       c->per_op ? diff_j_figure(c->ops[s]) : NULL);
	json_object_object_add(o, "ops_per_s",
			       j_opt_double(c->per_op && t > 0,
					    t > 0 ? c->ops[s] / t : 0));
	return o;
}

static json_object *change_pct(const struct diff_side *sd)
{
	if (!(sd[0].value > 0))
		return NULL;
	return json_object_new_double((sd[1].value - sd[0].value) /
				      sd[0].value * 100);
}

static json_object *metric_json(const struct diff_cmp *c,
				const struct diff_row *r, enum rec_metric m)
{
	const struct diff_side *sd = r->side[m], *po = r->per_op[m];
	json_object *v = json_object_new_object();

	json_object_object_add(v, "before", diff_j_figure(sd[0].value));
	json_object_object_add(v, "after", diff_j_figure(sd[1].value));
	json_object_object_add(v, "change_pct", change_pct(sd));
	json_object_object_add(v, "noise_before",
			       json_object_new_double(sd[0].noise));
	json_object_object_add(v, "noise_after",
			       json_object_new_double(sd[1].noise));
	if (c->per_op && diff_metric_per_op(m)) {
		json_object_object_add(v, "per_op_before",
				       json_object_new_double(po[0].value));
		json_object_object_add(v, "per_op_after",
				       json_object_new_double(po[1].value));
		json_object_object_add(v, "per_op_change_pct", change_pct(po));
	}
	json_object_object_add(v, "verdict",
			       json_object_new_string(diff_verdict_name(
				       r->judged[m].verdict)));
	json_object_object_add(
		v, "reason",
		r->judged[m].reason[0] ?
			json_object_new_string(r->judged[m].reason) :
			NULL);
	return v;
}

static json_object *kinds_json(diff_kinds k)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < LT_KIND_NR; i++)
		if (k & (1U << i))
			json_object_array_add(
				a, json_object_new_string(lt_kind_name(i)));
	return a;
}

/* A lock's or a file's members before its metrics. */
static void lock_members(json_object *o, const struct diff_row *r)
{
	if (r->type == DIFF_ROW_FILE) {
		json_object_object_add(o, "file",
				       json_object_new_string(r->id));
	} else {
		/* One kind: its key as recorded; paired: the layout key. */
		json_object_object_add(
			o, "key",
			json_object_new_string(r->kind >= 0 ? r->key : r->id));
		/* The key its kinds pair by; null for a row that does not
		 * pair (a bare offset or range, a kind that never pairs). */
		json_object_object_add(
			o, "layout_key",
			r->group < 0 ? json_object_new_string(r->id) : NULL);
		json_object_object_add(
			o, "kind",
			json_object_new_string(r->kind >= 0 ?
						       lt_kind_name(r->kind) :
						       "mixed"));
		json_object_object_add(o, "label",
				       json_object_new_string(r->label));
	}
	json_object_object_add(o, "kinds_before", kinds_json(r->kinds[0]));
	json_object_object_add(o, "kinds_after", kinds_json(r->kinds[1]));
	json_object_object_add(o, "before", json_object_new_boolean(r->in[0]));
	json_object_object_add(o, "after", json_object_new_boolean(r->in[1]));
	json_object_object_add(o, "small", json_object_new_boolean(r->small));
	if (r->type == DIFF_ROW_LOCK) {
		json_object_object_add(o, "kernel_type",
				       json_object_new_string(r->kernel_type));
		json_object_object_add(o, "caller",
				       json_object_new_string(r->caller));
	}
}

static json_object *rows_json(const struct diff_cmp *c,
			      const struct diff_row *rows, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;
	int m;

	for (i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];
		json_object *o = json_object_new_object();
		json_object *ms = json_object_new_object();

		if (r->type == DIFF_ROW_KIND)
			json_object_object_add(o, "kind",
					       json_object_new_string(r->id));
		else
			lock_members(o, r);
		for (m = 0; m < REC_METRIC_NR; m++)
			json_object_object_add(ms, rec_metric_name(m),
					       metric_json(c, r, m));
		json_object_object_add(o, "metrics", ms);
		json_object_array_add(a, o);
	}
	return a;
}

/* The lock that changed most: its key (as "key" of "locks") and label. */
static json_object *most_json(const struct diff_cmp *c)
{
	const struct diff_row *r = c->most;
	json_object *o;

	if (!r)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "key",
			       json_object_new_string(r->kind >= 0 ? r->key :
								     r->id));
	json_object_object_add(o, "label", json_object_new_string(r->label));
	json_object_object_add(
		o, "metric",
		json_object_new_string(c->per_op ? "wait_time per op" :
						   "wait_time"));
	return o;
}

void diff_print_json(FILE *out, const struct diff_cmp *c, size_t n_files,
		     size_t n_locks, json_object *gates, bool crossed)
{
	json_object *root = json_object_new_object();

	json_object_object_add(root, "before", meta_json(c, 0));
	json_object_object_add(root, "after", meta_json(c, 1));
	json_object_object_add(root, "sigma",
			       json_object_new_double(c->rule.sigma));
	json_object_object_add(root, "threshold_pct",
			       json_object_new_double(c->rule.threshold_pct));
	json_object_object_add(root, "per_op",
			       json_object_new_boolean(c->per_op));
	json_object_object_add(root, "changed_most", most_json(c));
	json_object_object_add(root, "kinds",
			       rows_json(c, c->kinds, c->n_kinds));
	json_object_object_add(root, "files", rows_json(c, c->files, n_files));
	json_object_object_add(root, "locks", rows_json(c, c->locks, n_locks));
	json_object_object_add(root, "fail_if", gates);
	json_object_object_add(root, "crossed",
			       json_object_new_boolean(crossed));
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(
			root,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
	json_object_put(root);
}
