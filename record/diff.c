// SPDX-License-Identifier: GPL-2.0-or-later
/* locktop diff: two recordings, kind by kind and lock by lock. */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "diff.h"

/* ---- the comparison ---- */

struct row {
	char label[LT_NAME_LEN]; /* "all", a kind, or a lock key */
	int kind; /* DIFF_KIND_ALL for the sum of the kinds */
	bool is_lock;
	bool in[2]; /* present before / after */
	char kernel_type[LT_KTYPE_LEN]; /* a kernel lock's, else "" */
	char caller[LT_CALLER_LEN];
	struct diff_side side[REC_METRIC_NR][2];
	struct diff_judgement judged[REC_METRIC_NR];
};

struct cmp {
	const struct record *rec[2];
	const char *path[2];
	struct diff_rule rule;
	bool all_kinds;
	struct row *kinds;
	size_t n_kinds;
	struct row *locks;
	size_t n_locks;
};

static void fill_row(struct cmp *c, struct row *r, const char *key)
{
	struct rec_fig f;
	int s, m;

	for (s = 0; s < 2; s++) {
		diff_row_fig(&c->rec[s]->final, r->kind, key, c->all_kinds, &f);
		for (m = 0; m < REC_METRIC_NR; m++) {
			struct diff_side *sd = &r->side[m][s];

			sd->value = (double)rec_fig_metric(&f, m);
			sd->events = diff_events(&f, m);
			sd->sampled = m == REC_WAIT_TIME && !f.waits &&
				      f.samples;
			sd->noise = diff_noise_n(c->rec[s], r->kind, key,
						 c->all_kinds,
						 (enum rec_metric)m,
						 &sd->intervals);
		}
	}
	for (m = 0; m < REC_METRIC_NR; m++)
		diff_judge(&c->rule, m, &r->side[m][0], &r->side[m][1],
			   &r->judged[m]);
}

/* A kernel lock's type and caller: the before record's, else the after's
 * (a record older than these has neither). */
static void fill_kernel(struct cmp *c, struct row *r)
{
	const struct rec_lock *l;
	int s;

	for (s = 0; s < 2; s++) {
		l = rec_set_find(&c->rec[s]->final, r->label);
		if (!l)
			continue;
		if (!r->kernel_type[0])
			memcpy(r->kernel_type, l->kernel_type,
			       sizeof(r->kernel_type));
		if (!r->caller[0])
			memcpy(r->caller, l->caller, sizeof(r->caller));
	}
}

static bool row_active(const struct row *r)
{
	int m, s;

	for (m = 0; m < REC_METRIC_NR; m++)
		for (s = 0; s < 2; s++)
			if (r->side[m][s].value > 0)
				return true;
	return false;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double wx = fmax(x->side[REC_WAIT_TIME][0].value,
			 x->side[REC_WAIT_TIME][1].value);
	double wy = fmax(y->side[REC_WAIT_TIME][0].value,
			 y->side[REC_WAIT_TIME][1].value);

	if (wx != wy)
		return wx < wy ? 1 : -1;
	return strcmp(x->label, y->label);
}

static int compare(struct cmp *c)
{
	size_t i, cap;
	int k, s;

	c->kinds = calloc(LT_KIND_NR + 1, sizeof(*c->kinds));
	if (!c->kinds)
		return -ENOMEM;
	for (k = DIFF_KIND_ALL; k < LT_KIND_NR; k++) {
		struct row *r = &c->kinds[c->n_kinds];

		if (k >= 0 && !lt_kind_in_view(k, c->all_kinds))
			continue;
		r->kind = k;
		snprintf(r->label, sizeof(r->label), "%s",
			 k < 0 ? "all" : lt_kind_name(k));
		fill_row(c, r, NULL);
		r->in[0] = r->in[1] = true;
		/* "all" always; a kind only when it did something. */
		if (k < 0 || row_active(r))
			c->n_kinds++;
	}

	cap = c->rec[0]->final.n_locks + c->rec[1]->final.n_locks;
	c->locks = calloc(cap ? cap : 1, sizeof(*c->locks));
	if (!c->locks)
		return -ENOMEM;
	for (s = 0; s < 2; s++) {
		const struct rec_set *f = &c->rec[s]->final;

		for (i = 0; i < f->n_locks; i++) {
			const struct rec_lock *l = &f->locks[i];
			struct row *r;

			if (!lt_kind_in_view(l->kind, c->all_kinds))
				continue;
			/* Seen before already: the after side is filled. */
			if (s == 1 && rec_set_find(&c->rec[0]->final, l->key))
				continue;
			r = &c->locks[c->n_locks++];
			snprintf(r->label, sizeof(r->label), "%s", l->key);
			r->kind = (int)l->kind;
			r->is_lock = true;
			r->in[0] = rec_set_find(&c->rec[0]->final, l->key);
			r->in[1] = rec_set_find(&c->rec[1]->final, l->key);
			fill_row(c, r, l->key);
			fill_kernel(c, r);
		}
	}
	qsort(c->locks, c->n_locks, sizeof(*c->locks), cmp_rows);
	return 0;
}

/* ---- output ---- */

static void fmt_value(enum rec_metric m, double v, char *buf, size_t len)
{
	if (rec_metric_is_time(m))
		lt_format_ns(v >= 1.8e19 ? UINT64_MAX : (uint64_t)v, buf, len);
	else
		snprintf(buf, len, "%.0f", v);
}

static void fmt_change(double b, double a, char *buf, size_t len)
{
	if (b > 0)
		snprintf(buf, len, "%+.1f%%", (a - b) / b * 100);
	else if (a > 0)
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "0.0%%");
}

/*
 * Which metrics a row shows: the four main ones, the others when used. A
 * spin row's are its spin time (wait time) and samples: it has no waits.
 */
static bool metric_shown(const struct row *r, enum rec_metric m)
{
	bool spin = r->kind == LT_KIND_SPIN;

	if (spin ? m == REC_WAIT_TIME || m == REC_SAMPLES : m <= REC_P99)
		return true;
	return r->side[m][0].value > 0 || r->side[m][1].value > 0;
}

/* A metric's name in a row: a spin lock's wait time is spin time. */
static const char *row_metric_label(const struct row *r, enum rec_metric m)
{
	if (r->kind == LT_KIND_SPIN && m == REC_WAIT_TIME)
		return "spin time";
	return rec_metric_label(m);
}

static const char *presence(const struct row *r)
{
	if (!r->is_lock || (r->in[0] && r->in[1]))
		return "";
	return r->in[0] ? " (before only)" : " (after only)";
}

/* After a kernel lock's label: " [rwsem-write, caller f]"; else "". */
#define KWHAT_LEN (LT_KTYPE_LEN + LT_CALLER_LEN + 16)
static const char *kernel_what(const struct row *r, char *buf, size_t len)
{
	buf[0] = '\0';
	if (r->kernel_type[0] || r->caller[0])
		snprintf(buf, len, " [%s, caller %s]",
			 r->kernel_type[0] ? r->kernel_type : "?",
			 r->caller[0] ? r->caller : "?");
	return buf;
}

/* A Markdown table cell must not contain a bare '|'. */
static void md_cell(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void describe(FILE *out, const char *what, const char *path,
		     const struct record *r, bool md)
{
	const struct rec_set *f = &r->final;

	if (md) {
		fprintf(out, "| %s | `", what);
		md_cell(out, path);
		fputs("` | ", out);
		md_cell(out, r->host);
		fputs(" | ", out);
		md_cell(out, r->kernel[0] ? r->kernel : "?");
		fputs(" | ", out);
		md_cell(out, r->start);
		fprintf(out, " | %.2f s, %zu intervals |\n", f->elapsed_s,
			r->n_intervals);
		return;
	}
	fprintf(out, "%-7s %s: %s, %s, %s, %.2f s, %zu intervals", what, path,
		r->host[0] ? r->host : "?", r->start,
		r->kernel[0] ? r->kernel : "?", f->elapsed_s, r->n_intervals);
	if (f->drops)
		fprintf(out, ", %" PRIu64 " events dropped", f->drops);
	fputc('\n', out);
	if (r->cmdline[0])
		fprintf(out, "        %s\n", r->cmdline);
}

static void text_rows(FILE *out, const struct row *rows, size_t n)
{
	char bv[24], av[24], ch[24], vd[48], kw[KWHAT_LEN];
	size_t i;
	int m;

	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fprintf(out, "%s%s%s\n", r->label, presence(r),
			kernel_what(r, kw, sizeof(kw)));
		for (m = 0; m < REC_METRIC_NR; m++) {
			if (!metric_shown(r, m))
				continue;
			fmt_value(m, r->side[m][0].value, bv, sizeof(bv));
			fmt_value(m, r->side[m][1].value, av, sizeof(av));
			fmt_change(r->side[m][0].value, r->side[m][1].value, ch,
				   sizeof(ch));
			fprintf(out, "  %-18s %12s → %-12s %9s  %s\n",
				row_metric_label(r, m), bv, av, ch,
				diff_judgement_text(&r->judged[m], vd,
						    sizeof(vd)));
		}
	}
}

static void md_rows(FILE *out, const struct row *rows, size_t n,
		    const char *first)
{
	char bv[24], av[24], ch[24], vd[48], kw[KWHAT_LEN];
	size_t i;
	int m;

	fprintf(out, "| %s | metric | before | after | change | verdict |\n",
		first);
	fprintf(out, "| --- | --- | ---: | ---: | ---: | --- |\n");
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		for (m = 0; m < REC_METRIC_NR; m++) {
			enum diff_verdict v = r->judged[m].verdict;
			/* Better and worse stand out. */
			const char *em =
				v == DIFF_BETTER || v == DIFF_WORSE ? "**" : "";

			if (!metric_shown(r, m))
				continue;
			fmt_value(m, r->side[m][0].value, bv, sizeof(bv));
			fmt_value(m, r->side[m][1].value, av, sizeof(av));
			fmt_change(r->side[m][0].value, r->side[m][1].value, ch,
				   sizeof(ch));
			/* The label on every line: rows stay greppable. */
			fputs("| `", out);
			md_cell(out, r->label);
			fputc('`', out);
			fputs(presence(r), out);
			md_cell(out, kernel_what(r, kw, sizeof(kw)));
			fprintf(out, " | %s | %s | %s | %s | %s%s%s |\n",
				row_metric_label(r, m), bv, av, ch, em,
				diff_judgement_text(&r->judged[m], vd,
						    sizeof(vd)),
				em);
		}
	}
}

/* A figure: counts and nanoseconds are whole numbers, so print them so. */
static json_object *j_figure(double v)
{
	if (v >= 0 && v < 9.2e18 && v == floor(v))
		return json_object_new_int64((int64_t)v);
	return json_object_new_double(v);
}

static json_object *meta_json(const char *path, const struct record *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "host", json_object_new_string(r->host));
	json_object_object_add(o, "kernel", json_object_new_string(r->kernel));
	json_object_object_add(o, "cmdline",
			       json_object_new_string(r->cmdline));
	json_object_object_add(o, "start", json_object_new_string(r->start));
	json_object_object_add(o, "elapsed_s",
			       json_object_new_double(r->final.elapsed_s));
	json_object_object_add(o, "intervals",
			       json_object_new_int64((int64_t)r->n_intervals));
	json_object_object_add(o, "drops", j_figure((double)r->final.drops));
	json_object_object_add(o, "exit_status",
			       r->exit_status >= 0 ?
				       json_object_new_int(r->exit_status) :
				       NULL);
	json_object_object_add(
		o, "cpu_user_s",
		r->has_cpu ? json_object_new_double(r->cpu_user_s) : NULL);
	json_object_object_add(
		o, "cpu_sys_s",
		r->has_cpu ? json_object_new_double(r->cpu_sys_s) : NULL);
	return o;
}

static json_object *rows_json(const struct row *rows, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;
	int m;

	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		json_object *o = json_object_new_object();
		json_object *ms = json_object_new_object();

		json_object_object_add(o, r->is_lock ? "key" : "kind",
				       json_object_new_string(r->label));
		if (r->is_lock) {
			json_object_object_add(
				o, "kind",
				json_object_new_string(lt_kind_name(r->kind)));
			json_object_object_add(
				o, "before", json_object_new_boolean(r->in[0]));
			json_object_object_add(
				o, "after", json_object_new_boolean(r->in[1]));
			json_object_object_add(
				o, "kernel_type",
				json_object_new_string(r->kernel_type));
			json_object_object_add(
				o, "caller", json_object_new_string(r->caller));
		}
		for (m = 0; m < REC_METRIC_NR; m++) {
			const struct diff_side *sd = r->side[m];
			json_object *v = json_object_new_object();

			json_object_object_add(v, "before",
					       j_figure(sd[0].value));
			json_object_object_add(v, "after",
					       j_figure(sd[1].value));
			json_object_object_add(
				v, "change_pct",
				sd[0].value > 0 ?
					json_object_new_double(
						(sd[1].value - sd[0].value) /
						sd[0].value * 100) :
					NULL);
			json_object_object_add(
				v, "noise_before",
				json_object_new_double(sd[0].noise));
			json_object_object_add(
				v, "noise_after",
				json_object_new_double(sd[1].noise));
			json_object_object_add(
				v, "verdict",
				json_object_new_string(diff_verdict_name(
					r->judged[m].verdict)));
			json_object_object_add(
				v, "reason",
				r->judged[m].reason[0] ?
					json_object_new_string(
						r->judged[m].reason) :
					NULL);
			json_object_object_add(ms, rec_metric_name(m), v);
		}
		json_object_object_add(o, "metrics", ms);
		json_object_array_add(a, o);
	}
	return a;
}

/* ---- the command ---- */

#define MAX_GATES 32

static struct diff_env {
	bool markdown;
	bool json;
	bool all_kinds;
	long limit; /* -1: default */
	const char *plot;
	const char *output;
	const char *paths[2];
	size_t n_paths;
	struct diff_rule rule;
	struct diff_gate gates[MAX_GATES];
	size_t n_gates;
} denv;

enum {
	OPT_PLOT = 0x200,
	OPT_SIGMA,
	OPT_THRESHOLD,
};

static const char diff_doc[] =
	"locktop diff -- compare two recordings of locktop record.\n"
	"\n"
	"Matches locks by their key (kind, file and offset, or image and "
	"offset), never by address or PID, and prints for each kind and each "
	"lock the waits, wait time, hold time and p99 wait before and after, "
	"the change, and a verdict: better, worse, same when the change is "
	"within the noise of the recorded intervals, or unclear when the "
	"records hold too little to judge by: unclear (2 intervals), "
	"unclear (6 waits), or unclear (noise ±150%) when the noise hides "
	"a change of twofold or more. A figure new in AFTER, or gone from "
	"it, is worse or better. The output opens with the elapsed time and "
	"the command's CPU time (user+sys), before → after.\n"
	"\n"
	"EXAMPLES:\n"
	"  locktop diff fcntl.rec mutex.rec\n"
	"  locktop diff --markdown --plot waits.svg a.rec b.rec > report.md\n"
	"  locktop diff --fail-if 'wait_time>+10%' base.rec new.rec\n"
	"\v"
	"--fail-if takes [KIND.]METRIC OP VALUE. METRIC is waits, wait_time, "
	"hold_time, p99, contended or trylock_failures; KIND (futex, fcntl, "
	"...) narrows it to one kind, the default is all lock kinds. OP is > "
	"or <. VALUE is a change in percent (+10%), a change in units (+5ms, "
	"-100) or, unsigned, the after figure itself (2ms). Times take ns, "
	"us, ms or s.\n"
	"\n"
	"Exit status: 0 when no threshold is crossed, 1 when one is, 2 on bad "
	"input (a file that is unreadable, corrupt or of another version, a "
	"bad --fail-if) or an output that cannot be written.";

static const struct argp_option diff_options[] = {
	{ "markdown", 'm', NULL, 0, "Markdown tables instead of text", 0 },
	{ "json", 'j', NULL, 0, "One JSON object instead of text", 0 },
	{ "fail-if", 'F', "EXPR", 0,
	  "Exit 1 when EXPR holds, e.g. 'wait_time>+10%' (repeatable)", 0 },
	{ "plot", OPT_PLOT, "FILE.svg", 0,
	  "Chart the wait time per interval, before and after (gnuplot)", 0 },
	{ "output", 'o', "FILE", 0,
	  "Write to FILE instead of stdout ('-' is stdout)", 0 },
	{ "all", 'a', NULL, 0, "Include condition-like waits (futex-cond)", 0 },
	{ "limit", 'l', "N", 0,
	  "At most N locks (default 20 in text and Markdown, all in JSON; "
	  "0: all)",
	  0 },
	{ "sigma", OPT_SIGMA, "K", 0,
	  "Noise band: K standard errors of the per-interval spread "
	  "(default 2)",
	  0 },
	{ "threshold", OPT_THRESHOLD, "PCT", 0,
	  "Changes within PCT percent are the same anyway (default 5)", 0 },
	{},
};

static double parse_pos(struct argp_state *state, const char *what,
			const char *arg, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0 || v > max)
		argp_error(state, "invalid %s '%s': give a number from 0 to %g",
			   what, arg, max);
	return v;
}

static error_t diff_parse(int key, char *arg, struct argp_state *state)
{
	char msg[256];

	switch (key) {
	case 'm':
		denv.markdown = true;
		break;
	case 'j':
		denv.json = true;
		break;
	case 'F':
		if (denv.n_gates == MAX_GATES)
			argp_error(state, "at most %d --fail-if", MAX_GATES);
		if (diff_gate_parse(arg, &denv.gates[denv.n_gates], msg,
				    sizeof(msg)))
			argp_error(state, "%s", msg);
		denv.n_gates++;
		break;
	case OPT_PLOT:
		denv.plot = arg;
		break;
	case 'o':
		denv.output = arg;
		break;
	case 'a':
		denv.all_kinds = true;
		break;
	case 'l':
		denv.limit = (long)parse_pos(state, "limit", arg, 1e9);
		break;
	case OPT_SIGMA:
		denv.rule.sigma = parse_pos(state, "--sigma", arg, 100);
		break;
	case OPT_THRESHOLD:
		denv.rule.threshold_pct =
			parse_pos(state, "--threshold", arg, 1000);
		break;
	case ARGP_KEY_ARG:
		if (denv.n_paths == 2)
			argp_error(state, "give two records: BEFORE AFTER");
		denv.paths[denv.n_paths++] = arg;
		break;
	case ARGP_KEY_END:
		if (denv.n_paths != 2)
			argp_error(state, "give two records: BEFORE AFTER");
		if (denv.markdown && denv.json)
			argp_error(state,
				   "give --markdown or --json, not both");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void print_text(FILE *out, const struct cmp *c, size_t n_locks)
{
	diff_run_text(out, c->rec, c->path);
	describe(out, "before", c->path[0], c->rec[0], false);
	describe(out, "after", c->path[1], c->rec[1], false);
	fprintf(out,
		"verdict: same when the change is within %g standard errors of "
		"the per-interval spread, or within %g%%; unclear when a "
		"record has fewer than %d intervals or %d waits to judge by, "
		"or the noise hides a change of %gx or more\n\n",
		c->rule.sigma, c->rule.threshold_pct, VERDICT_MIN_INTERVALS,
		VERDICT_MIN_EVENTS, VERDICT_SAME_RATIO);
	fprintf(out, "KINDS%*s%12s   %-12s %9s  %s\n", 16, "", "BEFORE",
		"AFTER", "CHANGE", "VERDICT");
	text_rows(out, c->kinds, c->n_kinds);
	fprintf(out, "\nLOCKS (%zu of %zu, most wait time first)\n", n_locks,
		c->n_locks);
	text_rows(out, c->locks, n_locks);
}

static void print_markdown(FILE *out, const struct cmp *c, size_t n_locks)
{
	fprintf(out, "# locktop diff\n\n");
	diff_run_markdown(out, c->rec, c->path);
	fprintf(out, "\n| | record | host | kernel | start | length |\n");
	fprintf(out, "| --- | --- | --- | --- | --- | --- |\n");
	describe(out, "before", c->path[0], c->rec[0], true);
	describe(out, "after", c->path[1], c->rec[1], true);
	for (int s = 0; s < 2; s++)
		if (c->rec[s]->cmdline[0]) {
			fprintf(out, "\n%s: `", s ? "After" : "Before");
			md_cell(out, c->rec[s]->cmdline);
			fprintf(out, "`\n");
		}
	fprintf(out,
		"\nVerdict: *same* when the change is within %g standard "
		"errors of the per-interval spread, or within %g%%; *unclear* "
		"when a record has fewer than %d intervals or %d waits to "
		"judge by, or the noise hides a change of %gx or more.\n\n",
		c->rule.sigma, c->rule.threshold_pct, VERDICT_MIN_INTERVALS,
		VERDICT_MIN_EVENTS, VERDICT_SAME_RATIO);
	fprintf(out, "## Kinds\n\n");
	md_rows(out, c->kinds, c->n_kinds, "kind");
	fprintf(out, "\n## Locks\n\n%zu of %zu, most wait time first.\n\n",
		n_locks, c->n_locks);
	if (n_locks)
		md_rows(out, c->locks, n_locks, "lock");
}

/* The figures a gate looks at: its kind's row, or 0 → 0 if it has none. */
static bool eval_gate(const struct cmp *c, const struct diff_gate *g, double *b,
		      double *a, double *seen)
{
	size_t k;

	*b = *a = 0;
	for (k = 0; k < c->n_kinds; k++)
		if (c->kinds[k].kind == g->kind) {
			*b = c->kinds[k].side[g->metric][0].value;
			*a = c->kinds[k].side[g->metric][1].value;
		}
	return diff_gate_crossed(g, *b, *a, seen);
}

static json_object *gates_json(const struct cmp *c, bool *crossed_any)
{
	json_object *arr = json_object_new_array();
	size_t i;

	*crossed_any = false;
	for (i = 0; i < denv.n_gates; i++) {
		const struct diff_gate *g = &denv.gates[i];
		json_object *o = json_object_new_object();
		double b, a, seen;
		bool crossed = eval_gate(c, g, &b, &a, &seen);

		*crossed_any = *crossed_any || crossed;
		json_object_object_add(o, "expr",
				       json_object_new_string(g->text));
		json_object_object_add(o, "before", j_figure(b));
		json_object_object_add(o, "after", j_figure(a));
		json_object_object_add(o, "seen",
				       isfinite(seen) ?
					       json_object_new_double(seen) :
					       json_object_new_string("inf"));
		json_object_object_add(o, "crossed",
				       json_object_new_boolean(crossed));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* Names each crossed gate on stderr; returns whether any was. */
static bool report_gates(const struct cmp *c)
{
	char bv[24], av[24], ch[24];
	bool any = false;
	size_t i;

	for (i = 0; i < denv.n_gates; i++) {
		const struct diff_gate *g = &denv.gates[i];
		double b, a, seen;

		if (!eval_gate(c, g, &b, &a, &seen))
			continue;
		any = true;
		fmt_value(g->metric, b, bv, sizeof(bv));
		fmt_value(g->metric, a, av, sizeof(av));
		fmt_change(b, a, ch, sizeof(ch));
		fprintf(stderr,
			"locktop diff: --fail-if '%s' crossed: %s %s %s → %s "
			"(%s)\n",
			g->text, g->kind < 0 ? "all" : lt_kind_name(g->kind),
			rec_metric_label(g->metric), bv, av, ch);
	}
	return any;
}

/* The whole comparison as one JSON object; takes gates over. */
static void print_json(FILE *out, const struct cmp *c, size_t n_locks,
		       json_object *gates, bool crossed)
{
	json_object *root = json_object_new_object();

	json_object_object_add(root, "before",
			       meta_json(c->path[0], c->rec[0]));
	json_object_object_add(root, "after", meta_json(c->path[1], c->rec[1]));
	json_object_object_add(root, "sigma",
			       json_object_new_double(c->rule.sigma));
	json_object_object_add(root, "threshold_pct",
			       json_object_new_double(c->rule.threshold_pct));
	json_object_object_add(root, "kinds", rows_json(c->kinds, c->n_kinds));
	json_object_object_add(root, "locks", rows_json(c->locks, n_locks));
	json_object_object_add(root, "fail_if", gates);
	json_object_object_add(root, "crossed",
			       json_object_new_boolean(crossed));
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(
			root,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
	json_object_put(root);
}

int diff_main(int argc, char **argv)
{
	static const struct argp argp = { diff_options, diff_parse,
					  "BEFORE AFTER", diff_doc };
	struct cmp c = { 0 };
	struct record *rec[2] = { NULL, NULL };
	json_object *gates;
	char msg[512];
	FILE *out = stdout;
	size_t n_locks;
	bool crossed = false;
	int ret = DIFF_EXIT_BAD, s;

	denv.limit = -1;
	denv.rule.sigma = 2;
	denv.rule.threshold_pct = 5;
	argp_err_exit_status = DIFF_EXIT_BAD;
	argv[0] = "locktop diff"; /* argp's name in messages */
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return DIFF_EXIT_BAD;

	for (s = 0; s < 2; s++) {
		if (record_load(denv.paths[s], &rec[s], msg, sizeof(msg))) {
			fprintf(stderr, "locktop diff: %s\n", msg);
			goto out;
		}
		c.rec[s] = rec[s];
		c.path[s] = denv.paths[s];
		/* Lost events make a record's figures low: say so. */
		if (rec[s]->final.drops)
			fprintf(stderr,
				"locktop diff: warning: %s dropped %" PRIu64
				" events (full maps); its figures are low\n",
				denv.paths[s], rec[s]->final.drops);
	}
	c.rule = denv.rule;
	c.all_kinds = denv.all_kinds;
	if (compare(&c)) {
		fprintf(stderr, "locktop diff: out of memory\n");
		goto out;
	}
	n_locks = c.n_locks;
	if (denv.limit > 0 && (size_t)denv.limit < n_locks)
		n_locks = (size_t)denv.limit;
	else if (denv.limit < 0 && !denv.json && n_locks > 20)
		n_locks = 20;

	if (denv.output && strcmp(denv.output, "-")) {
		out = fopen(denv.output, "we");
		if (!out) {
			fprintf(stderr, "locktop diff: cannot write '%s': %s\n",
				denv.output, strerror(errno));
			out = stdout;
			goto out;
		}
	}
	gates = gates_json(&c, &crossed);
	if (denv.json)
		print_json(out, &c, n_locks, gates, crossed); /* takes gates */
	else if (denv.markdown)
		print_markdown(out, &c, n_locks);
	else
		print_text(out, &c, n_locks);
	if (!denv.json)
		json_object_put(gates);
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "locktop diff: writing the output: %s\n",
			strerror(errno));
		goto out;
	}
	if (denv.plot && diff_plot(c.rec, c.path, c.all_kinds, denv.plot, msg,
				   sizeof(msg))) {
		fprintf(stderr, "locktop diff: %s\n", msg);
		goto out;
	}
	ret = report_gates(&c) ? DIFF_EXIT_CROSSED : 0;
out:
	if (out != stdout && fclose(out) && ret != DIFF_EXIT_BAD) {
		fprintf(stderr, "locktop diff: writing '%s': %s\n", denv.output,
			strerror(errno));
		ret = DIFF_EXIT_BAD;
	}
	free(c.kinds);
	free(c.locks);
	record_free(rec[0]);
	record_free(rec[1]);
	return ret;
}
